//! Un-move generation: every (predecessor, move) pair that leads to a position.
//!
//! This is the exact inverse of [`Position::legal_moves`] followed by
//! [`Position::play_unchecked`]; the retrograde solver walks the game graph backwards with it.
//! For the side that just moved (the predecessor's side to move), each of its pieces on a
//! square `to` either arrived there by a board move (a step, or a jump over a friendly piece
//! still standing in between), possibly promoting on the far rank and possibly capturing a
//! piece whose base kind is now in its hand, or it was dropped (unpromoted pieces only).
//!
//! [`Position::unmoves`] describes each way back as an [`UnMove`] without building the
//! predecessor, so that the index can fold it from a shared view of the position
//! ([`crate::MaterialIndex::parents_of`]); [`Position::before`] builds it when it is wanted.

use crate::movegen::attacks_on;
use crate::{Bitboard, Kind, Move, Piece, Position, Square};

/// One way a position can have been reached: the move, the piece that made it as it was
/// before, and the piece it captured (which the un-move puts back on the target square).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnMove {
    /// The move, as the predecessor's side to move played it.
    pub mv: Move,
    /// The moving or dropped piece before the move (unpromoted if the move promoted it).
    pub piece: Piece,
    /// What stood on the target square before a capturing board move.
    pub captured: Option<Piece>,
}

impl Position {
    /// Calls `visit(predecessor, move)` for every legal position `predecessor` and legal move
    /// with `predecessor.play_unchecked(move) == *self`. Moves that capture a royal have no
    /// resulting position, so they never appear.
    pub fn for_each_unmove(&self, mut visit: impl FnMut(&Position, Move)) {
        self.unmoves(|unmove| visit(&self.before(&unmove), unmove.mv));
    }

    /// Calls `visit` with every un-move of this position: the same pairs as
    /// [`Position::for_each_unmove`], in the same order, described instead of built.
    pub fn unmoves(&self, mut visit: impl FnMut(UnMove)) {
        let them = !self.turn; // the side that just moved
        let own = self.occupied[them];
        let empty = !self.occupied();
        for to in own {
            let piece = self.board[to.index()].expect("occupied squares hold pieces");
            // The piece before the move: as it is now, or unpromoted if it promoted on arrival.
            self.board_unmoves_of(piece, piece, to, own, empty, &mut visit);
            if piece.promoted && to.is_far_rank_for(them) {
                self.board_unmoves_of(Piece { promoted: false, ..piece }, piece, to, own, empty, &mut visit);
            }
            if !piece.promoted && piece.kind != Kind::Royal {
                visit(UnMove { mv: Move::Drop { kind: piece.kind, to }, piece, captured: None });
            }
        }
    }

    /// Un-moves where `prior` moved to `to` and became `piece` there, from every square it can
    /// have come from.
    #[inline]
    fn board_unmoves_of(
        &self,
        prior: Piece,
        piece: Piece,
        to: Square,
        own: Bitboard,
        empty: Bitboard,
        visit: &mut impl FnMut(UnMove),
    ) {
        let mut origins = origins(to, prior.direction_mask(), own, empty);
        if !prior.promoted && prior.kind != Kind::Royal {
            origins = origins & !Bitboard::far_rank(prior.color); // an unpromoted piece never stands on its far rank
        }
        for from in origins {
            self.board_unmoves(prior, from, to, prior != piece, visit);
        }
    }

    /// Un-moves where `prior` moved from `from` to `to`: without a capture, and with each
    /// capture the mover's hand allows (the captured piece in each state it could have had).
    fn board_unmoves(&self, prior: Piece, from: Square, to: Square, promotes: bool, visit: &mut impl FnMut(UnMove)) {
        let mv = Move::Board { from, to, promotes };
        visit(UnMove { mv, piece: prior, captured: None });
        let hand = self.hands[!self.turn];
        for kind in Kind::HAND_KINDS {
            if hand.count(kind) == 0 {
                continue;
            }
            for promoted in [false, true] {
                if !promoted && to.is_far_rank_for(self.turn) {
                    continue;
                }
                visit(UnMove { mv, piece: prior, captured: Some(Piece::new(self.turn, kind, promoted)) });
            }
        }
    }

    /// Whether the predecessor an un-move leads back to is a win in 1 (its side to move can
    /// capture the royal): `self.before(unmove).can_capture_royal()`, without building it. The
    /// retrograde solver skips such predecessors, which are decided from the start.
    #[inline]
    pub fn before_can_capture_royal(&self, unmove: &UnMove) -> bool {
        let them = !self.turn; // the predecessor's side to move
        let to = unmove.mv.to();
        let (own, from) = match unmove.mv {
            Move::Drop { .. } => (self.occupied[them] ^ Bitboard::from_square(to), None),
            Move::Board { from, .. } => {
                ((self.occupied[them] ^ Bitboard::from_square(to)) | Bitboard::from_square(from), Some(from))
            }
        };
        // Every square of `own` holds a piece of `them`: the moved one back on `from`, the
        // others where they stand now.
        attacks_on(own, self.royals[self.turn], |square| {
            if Some(square) == from {
                unmove.piece.direction_mask()
            } else {
                self.masks[square.index()]
            }
        })
    }

    /// The predecessor an un-move of this position leads back to.
    pub fn before(&self, unmove: &UnMove) -> Position {
        let them = !self.turn;
        let mut pred = *self;
        pred.turn = them;
        match unmove.mv {
            Move::Drop { kind, to } => {
                pred.put(to, None);
                pred.occupied[them] ^= Bitboard::from_square(to);
                pred.hands[them].add(kind);
            }
            Move::Board { from, to, .. } => {
                pred.put(from, Some(unmove.piece));
                pred.put(to, unmove.captured);
                pred.occupied[them] ^= Bitboard::from_square(from) | Bitboard::from_square(to);
                if unmove.piece.kind == Kind::Royal {
                    pred.royals[them] = from;
                }
                if let Some(captured) = unmove.captured {
                    pred.hands[them].remove(captured.kind);
                    pred.occupied[self.turn] |= Bitboard::from_square(to);
                }
            }
        }
        pred
    }
}

/// The squares a piece moving in the directions of `mask` must have come from to land on
/// `to`: for each direction, the neighbour behind `to` (a step), or the square behind that
/// with a friendly piece in between (a jump); either way the origin must be empty now. The
/// forward rule then lands on `to` from there, since `to` is vacated before the move.
#[inline]
fn origins(to: Square, mask: u8, own: Bitboard, empty: Bitboard) -> Bitboard {
    // The neighbours in the opposite directions: bit d of a mask is a direction, bit d + 4 (mod
    // 8) its opposite.
    let behind = to.neighbors_toward(mask.rotate_left(4));
    let mut origins = behind & empty;
    for over in behind & own {
        if let Some(from) = to.beyond(over) {
            origins |= Bitboard::from_square(from) & empty;
        }
    }
    origins
}
