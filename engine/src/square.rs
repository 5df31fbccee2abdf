//! Squares of the 4×4 board and the eight compass directions between them.
//!
//! Squares are numbered `rank * 4 + file` from `a1 = 0` to `d4 = 15`, so the
//! 180° turn is `s ^ 15` and the left-right mirror is `s ^ 3`.

use std::fmt;
use std::fmt::Write as _;

use crate::Color;

/// One of the 16 squares, `a1` … `d4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(u8);

impl Square {
    /// Number of squares on the board.
    pub const COUNT: usize = 16;

    /// The square on `file` (0 = a) and `rank` (0 = rank 1), if both are on the board.
    pub const fn new(file: u8, rank: u8) -> Option<Square> {
        if file < 4 && rank < 4 {
            Some(Square(rank * 4 + file))
        } else {
            None
        }
    }

    /// The square with index `index` (`0..16`).
    ///
    /// # Panics
    /// If `index >= 16`.
    pub const fn from_index(index: u8) -> Square {
        assert!(index < 16, "square index out of range");
        Square(index)
    }

    /// All squares, `a1, b1, …, d4`.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..16).map(Square)
    }

    /// Index `0..16` (`rank * 4 + file`).
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// File, 0 (`a`) to 3 (`d`).
    #[inline]
    pub const fn file(self) -> u8 {
        self.0 & 3
    }

    /// Rank, 0 (rank 1) to 3 (rank 4).
    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 >> 2
    }

    /// The square after turning the board by 180°.
    #[inline]
    pub const fn rotated(self) -> Square {
        Square(self.0 ^ 15)
    }

    /// The square mirrored left-right (files a↔d, b↔c).
    #[inline]
    pub const fn mirrored(self) -> Square {
        Square(self.0 ^ 3)
    }

    /// Whether this square is on `color`'s far rank (where its pieces promote).
    #[inline]
    pub const fn is_far_rank_for(self, color: Color) -> bool {
        match color {
            Color::First => self.rank() == 3,
            Color::Second => self.rank() == 0,
        }
    }

    /// The neighbouring square in `direction`, if it is on the board.
    #[inline]
    pub fn step(self, direction: Direction) -> Option<Square> {
        let target = STEPS[self.index()][direction as usize];
        (target < 16).then_some(Square(target))
    }

    /// The squares next to this one, in all eight directions.
    #[inline]
    pub fn neighbors(self) -> crate::Bitboard {
        self.neighbors_toward(0xFF)
    }

    /// The neighbours in the directions of `mask` (a bit per [`Direction`] discriminant, as
    /// [`crate::Piece::direction_mask`] gives them).
    #[inline]
    pub fn neighbors_toward(self, mask: u8) -> crate::Bitboard {
        crate::Bitboard(NEIGHBORS_TOWARD[self.index()][usize::from(mask)])
    }

    /// The square beyond the neighbour `next`, in the direction from this square to it (where
    /// a jump over `next` lands), if it is on the board.
    #[inline]
    pub fn beyond(self, next: Square) -> Option<Square> {
        let target = BEYOND[self.index()][next.index()];
        (target < 16).then_some(Square(target))
    }

    /// Where jumps from this square over each of `over` land: the square beyond each one that
    /// is a neighbour, where that is on the board. One lookup per half of the board, where a
    /// walk over the neighbours would branch on each.
    #[inline]
    pub fn beyond_each(self, over: crate::Bitboard) -> crate::Bitboard {
        let [low, high] = &JUMPS_OVER[self.index()];
        crate::Bitboard(low[usize::from(over.0 as u8)] | high[usize::from(over.0 >> 8)])
    }

    /// The direction from this square to `other`, if they are neighbours.
    #[inline]
    pub fn direction_to(self, other: Square) -> Option<Direction> {
        let d = DIRECTION_TO[self.index()][other.index()];
        (d < 8).then(|| Direction::ALL[usize::from(d)])
    }

    /// Parses `a1` … `d4`.
    pub fn parse(text: &str) -> Option<Square> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 {
            return None;
        }
        let file = bytes[0].wrapping_sub(b'a');
        let rank = bytes[1].wrapping_sub(b'1');
        Square::new(file, rank)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Two characters written directly: answers print a few dozen squares each.
        f.write_char((b'a' + self.file()) as char)?;
        f.write_char((b'1' + self.rank()) as char)
    }
}

/// A compass direction on the board as the first player sees it (north = toward rank 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    /// Toward rank 4.
    North = 0,
    /// Toward rank 4 and file d.
    NorthEast,
    /// Toward file d.
    East,
    /// Toward rank 1 and file d.
    SouthEast,
    /// Toward rank 1.
    South,
    /// Toward rank 1 and file a.
    SouthWest,
    /// Toward file a.
    West,
    /// Toward rank 4 and file a.
    NorthWest,
}

impl Direction {
    /// All eight directions, in the order of their discriminants.
    pub const ALL: [Direction; 8] = [
        Direction::North,
        Direction::NorthEast,
        Direction::East,
        Direction::SouthEast,
        Direction::South,
        Direction::SouthWest,
        Direction::West,
        Direction::NorthWest,
    ];

    /// `(file delta, rank delta)`.
    pub const fn delta(self) -> (i8, i8) {
        DELTAS[self as usize]
    }

    /// The opposite direction.
    #[inline]
    pub const fn opposite(self) -> Direction {
        Direction::ALL[(self as usize + 4) & 7]
    }
}

const DELTAS: [(i8, i8); 8] = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)];

/// `STEPS[square][direction]`: the neighbour's index, or 16 when off the board.
const STEPS: [[u8; 8]; 16] = {
    let mut table = [[16u8; 8]; 16];
    let mut s = 0;
    while s < 16 {
        let mut d = 0;
        while d < 8 {
            let file = (s & 3) as i8 + DELTAS[d].0;
            let rank = (s >> 2) as i8 + DELTAS[d].1;
            if file >= 0 && file < 4 && rank >= 0 && rank < 4 {
                table[s][d] = (rank * 4 + file) as u8;
            }
            d += 1;
        }
        s += 1;
    }
    table
};

/// `STEP_AND_JUMP[square][direction]`: the neighbour in that direction and the square beyond
/// it (where a jump over the neighbour lands), each 16 when off the board: for move
/// generation that picks a piece's landing without a branch (`movegen.rs`).
pub(crate) const STEP_AND_JUMP: [[[u8; 2]; 8]; 16] = {
    let mut table = [[[16u8; 2]; 8]; 16];
    let mut s = 0;
    while s < 16 {
        let mut d = 0;
        while d < 8 {
            let next = STEPS[s][d];
            if next < 16 {
                table[s][d] = [next, STEPS[next as usize][d]];
            }
            d += 1;
        }
        s += 1;
    }
    table
};

/// `NEIGHBORS_TOWARD[square][mask]`: its neighbours in the directions of `mask`.
const NEIGHBORS_TOWARD: [[u16; 256]; 16] = {
    let mut table = [[0u16; 256]; 16];
    let mut s = 0;
    while s < 16 {
        let mut mask = 0;
        while mask < 256 {
            let mut d = 0;
            while d < 8 {
                if mask & 1 << d != 0 && STEPS[s][d] < 16 {
                    table[s][mask] |= 1 << STEPS[s][d];
                }
                d += 1;
            }
            mask += 1;
        }
        s += 1;
    }
    table
};

/// `BEYOND[from][next]`: the square one step past the neighbour `next` in the direction from
/// `from` to it, or 16 when that is off the board or the two are not neighbours.
const BEYOND: [[u8; 16]; 16] = {
    let mut table = [[16u8; 16]; 16];
    let mut s = 0;
    while s < 16 * 8 {
        let [next, beyond] = STEP_AND_JUMP[s / 8][s % 8];
        if next < 16 {
            table[s / 8][next as usize] = beyond;
        }
        s += 1;
    }
    table
};

/// `JUMPS_OVER[from][half][byte]`: the union of `BEYOND[from][next]` over the squares `next`
/// whose bits are set in `byte`, the low (squares 0–7) or high (8–15) half of a bitboard.
const JUMPS_OVER: [[[u16; 256]; 2]; 16] = {
    let mut table = [[[0u16; 256]; 2]; 16];
    let mut s = 0;
    while s < 16 {
        let mut half = 0;
        while half < 2 {
            let mut byte = 0;
            while byte < 256 {
                let mut bit = 0;
                while bit < 8 {
                    let beyond = BEYOND[s][half * 8 + bit];
                    if byte & 1 << bit != 0 && beyond < 16 {
                        table[s][half][byte] |= 1 << beyond;
                    }
                    bit += 1;
                }
                byte += 1;
            }
            half += 1;
        }
        s += 1;
    }
    table
};

/// `DIRECTION_TO[from][to]`: the direction from a square to a neighbour, 8 if not neighbours.
const DIRECTION_TO: [[u8; 16]; 16] = {
    let mut table = [[8u8; 16]; 16];
    let mut s = 0;
    while s < 16 {
        let mut d = 0;
        while d < 8 {
            if STEPS[s][d] < 16 {
                table[s][STEPS[s][d] as usize] = d as u8;
            }
            d += 1;
        }
        s += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bitboard;

    #[test]
    fn names_round_trip() {
        for square in Square::all() {
            assert_eq!(Square::parse(&square.to_string()), Some(square));
        }
        assert_eq!(Square::parse("e1"), None);
        assert_eq!(Square::parse("a5"), None);
        assert_eq!(Square::parse("a"), None);
    }

    #[test]
    fn steps_stay_on_board() {
        let a1 = Square::parse("a1").unwrap();
        assert_eq!(a1.step(Direction::North), Square::parse("a2"));
        assert_eq!(a1.step(Direction::NorthEast), Square::parse("b2"));
        assert_eq!(a1.step(Direction::West), None);
        assert_eq!(a1.step(Direction::South), None);
    }

    #[test]
    fn jumps_land_beyond_a_neighbour() {
        let square = |name: &str| Square::parse(name).unwrap();
        assert_eq!(square("a1").beyond(square("b2")), Some(square("c3")));
        assert_eq!(square("b1").beyond(square("b2")), Some(square("b3")));
        assert_eq!(square("a2").beyond(square("a1")), None);
        assert_eq!(square("a1").beyond(square("c3")), None, "not neighbours");
        let over = |names: &[&str]| {
            let mut squares = Bitboard::EMPTY;
            for &name in names {
                squares |= Bitboard::from_square(square(name));
            }
            squares
        };
        assert_eq!(square("b2").beyond_each(over(&["b3", "c1", "a1", "d4"])), over(&["b4"]));
        assert_eq!(square("c3").beyond_each(over(&["b2", "c2", "d4"])), over(&["a1", "c1"]));
        for s in Square::all() {
            let mut all = Bitboard::EMPTY;
            for direction in Direction::ALL {
                let step = s.step(direction).map_or(Bitboard::EMPTY, Bitboard::from_square);
                assert_eq!(s.neighbors_toward(1 << direction as u8), step);
                all |= step;
            }
            assert_eq!(s.neighbors(), all);
            assert_eq!(
                s.neighbors().count(),
                [3, 5, 8][usize::from(s.file() % 3 != 0) + usize::from(s.rank() % 3 != 0)]
            );
        }
    }
}
