//! Un-move generation: every (predecessor, move) pair that leads to a position.
//!
//! This is the exact inverse of [`Position::legal_moves`] followed by
//! [`Position::play_unchecked`]; the retrograde solver walks the game graph backwards with it.
//! For the side that just moved (the predecessor's side to move), each of its pieces on a
//! square `to` either arrived there by a board move (a step, or a jump over a friendly piece
//! still standing in between), possibly promoting on the far rank and possibly capturing a
//! piece whose base kind is now in its hand, or it was dropped (unpromoted pieces only).

use crate::movegen::landing;
use crate::{Bitboard, Direction, Kind, Move, Piece, Position, Square};

impl Position {
    /// Calls `visit(predecessor, move)` for every legal position `predecessor` and legal move
    /// with `predecessor.play_unchecked(move) == *self`. Moves that capture a royal have no
    /// resulting position, so they never appear.
    pub fn for_each_unmove(&self, mut visit: impl FnMut(&Position, Move)) {
        let them = !self.turn; // the side that just moved
        let own = self.occupied[them];
        let empty = !self.occupied();
        for to in own {
            let piece = self.board[to.index()].expect("occupied squares hold pieces");
            // The piece before the move: as it is now, or unpromoted if it promoted on arrival.
            let mut before = [Some(piece), None];
            if piece.promoted && to.is_far_rank_for(them) {
                before[1] = Some(Piece { promoted: false, ..piece });
            }
            for prior in before.into_iter().flatten() {
                let promotes = prior != piece;
                let mut mask = prior.direction_mask();
                while mask != 0 {
                    let direction = Direction::ALL[mask.trailing_zeros() as usize];
                    mask &= mask - 1;
                    let Some(from) = source(to, direction, own, empty) else { continue };
                    if !prior.promoted && prior.kind != Kind::Royal && from.is_far_rank_for(them) {
                        continue; // an unpromoted piece never stands on its far rank
                    }
                    self.unmove_board(prior, from, to, promotes, &mut visit);
                }
            }
            if !piece.promoted && piece.kind != Kind::Royal {
                let mut pred = *self;
                pred.board[to.index()] = None;
                pred.occupied[them] ^= Bitboard::from_square(to);
                pred.hands[them].add(piece.kind);
                pred.turn = them;
                visit(&pred, Move::Drop { kind: piece.kind, to });
            }
        }
    }

    /// Predecessors where `prior` moved from `from` to `to`: without a capture, and with each
    /// capture the mover's hand allows (the captured piece in each state it could have had).
    fn unmove_board(
        &self,
        prior: Piece,
        from: Square,
        to: Square,
        promotes: bool,
        visit: &mut impl FnMut(&Position, Move),
    ) {
        let them = !self.turn;
        let us = self.turn;
        let mv = Move::Board { from, to, promotes };
        let mut pred = *self;
        pred.board[from.index()] = Some(prior);
        pred.board[to.index()] = None;
        pred.occupied[them] ^= Bitboard::from_square(from) | Bitboard::from_square(to);
        if prior.kind == Kind::Royal {
            pred.royals[them] = from;
        }
        pred.turn = them;
        visit(&pred, mv);
        let hand = self.hands[them];
        for kind in Kind::HAND_KINDS {
            if hand.count(kind) == 0 {
                continue;
            }
            let mut captured = pred;
            captured.hands[them].remove(kind);
            captured.occupied[us] |= Bitboard::from_square(to);
            for promoted in [false, true] {
                if !promoted && to.is_far_rank_for(us) {
                    continue;
                }
                captured.board[to.index()] = Some(Piece::new(us, kind, promoted));
                visit(&captured, mv);
            }
        }
    }
}

/// The square a piece must have come from to land on `to` moving toward `direction`: the
/// neighbour behind it (a step), or two behind with a friendly piece in between (a jump).
/// The origin must be empty now, and the forward rule must really land on `to` from there.
#[inline]
fn source(to: Square, direction: Direction, own: Bitboard, empty: Bitboard) -> Option<Square> {
    let back = direction.opposite();
    let behind = to.step(back)?;
    let from = if own.contains(behind) { behind.step(back)? } else { behind };
    // `landing` is evaluated on the predecessor's own set: `to` vacated, `from` occupied.
    let own_before = (own ^ Bitboard::from_square(to)) | Bitboard::from_square(from);
    (empty.contains(from) && landing(from, direction, own_before) == Some(to)).then_some(from)
}
