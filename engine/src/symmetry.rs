//! The two exact symmetries of Shogi4: the colour flip and the left-right mirror.
//!
//! The flip turns the board by 180° and swaps owners, hands and the side to move; the
//! mirror swaps files a↔d and b↔c. Both preserve the solved value for the side to move.

use crate::{Bitboard, Position, Square};

impl Position {
    /// The colour flip: board turned by 180°, owners, hands and side to move swapped.
    pub fn flipped(&self) -> Position {
        self.transformed(15, true)
    }

    /// The left-right mirror (files a↔d, b↔c).
    pub fn mirrored(&self) -> Position {
        self.transformed(3, false)
    }

    /// Maps every square `s` to `s ^ mask` (15 turns the board, 3 mirrors it) and optionally
    /// swaps the colours.
    fn transformed(&self, mask: u8, swap_colors: bool) -> Position {
        let mut board = [None; 16];
        for (index, piece) in self.board.iter().enumerate() {
            board[index ^ mask as usize] = piece.map(|mut p| {
                if swap_colors {
                    p.color = !p.color;
                }
                p
            });
        }
        let map_square = |s: Square| Square::from_index(s.index() as u8 ^ mask);
        let map_bits = |b: Bitboard| b.fold(Bitboard::EMPTY, |acc, s| acc | Bitboard::from_square(map_square(s)));
        let mut occupied = self.occupied.map_ref(|&b| map_bits(b));
        let mut royals = self.royals.map_ref(|&s| map_square(s));
        let mut hands = self.hands;
        let mut turn = self.turn;
        if swap_colors {
            occupied = occupied.swapped();
            royals = royals.swapped();
            hands = hands.swapped();
            turn = !turn;
        }
        Position::assemble(board, occupied, royals, hands, turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flip_of_start_is_start_with_other_side_to_move() {
        let start = Position::start();
        let flipped = start.flipped();
        assert_eq!(flipped.to_sfen(), "trfk/3c/C3/KFRT w - 1");
        assert_eq!(flipped.flipped(), start);
        assert_eq!(start.mirrored().to_sfen(), "kfrt/c3/3C/TRFK b - 1");
        assert_eq!(start.mirrored().mirrored(), start);
    }
}
