//! Legal move generation: steps, friendly jumps, compulsory promotion and drops.
//!
//! There is no check in Shogi4, so every pseudo-legal move is legal.

use std::ops::Deref;

use arrayvec::ArrayVec;

use crate::square::STEP_AND_JUMP;
use crate::{Bitboard, Color, Kind, Move, Piece, Position, Square};

/// Capacity of a [`MoveList`]: 9 pieces × 8 directions plus 4 kinds × 14 squares is below it.
pub const MAX_MOVES: usize = 128;

/// A list of moves without heap allocation.
#[derive(Clone, Default)]
pub struct MoveList {
    moves: ArrayVec<Move, MAX_MOVES>,
}

impl MoveList {
    /// An empty list.
    pub fn new() -> MoveList {
        MoveList { moves: ArrayVec::new() }
    }

    #[inline]
    fn push(&mut self, mv: Move) {
        self.moves.push(mv);
    }

    #[inline]
    fn truncate(&mut self, len: usize) {
        self.moves.truncate(len);
    }
}

impl Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves
    }
}

impl IntoIterator for MoveList {
    type Item = Move;
    type IntoIter = arrayvec::IntoIter<Move, MAX_MOVES>;
    fn into_iter(self) -> Self::IntoIter {
        self.moves.into_iter()
    }
}

impl std::fmt::Debug for MoveList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// How many legal moves a position has, and how many of them are safe: see
/// [`Position::move_counts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveCounts {
    /// Legal moves.
    pub legal: usize,
    /// Legal moves after which the opponent cannot capture the mover's royal at once.
    pub safe: usize,
}

/// One side's board moves, gathered where they do not depend on the other side: the landings
/// of its pieces other than the royal, counted together, and the royal's own (which the other
/// side's reach restricts). Made by [`Position::opponent_mobility`].
#[derive(Clone, Copy, Debug)]
pub struct Mobility {
    /// The side's pieces as they stood: a position where they stand otherwise (a capture took
    /// one) is counted from scratch.
    pieces: Bitboard,
    /// Landings of its pieces other than the royal.
    others: usize,
    /// Landings of its royal.
    royal_landings: Bitboard,
}

impl Mobility {
    /// `child.move_counts()`, for a position that a legal move (not a royal capture) of the
    /// position this was made from leads to. When nothing was captured and the royal is not
    /// threatened, only the mover's reach and drops are looked at; otherwise the moves are
    /// counted in full.
    #[inline(always)]
    pub fn counts_in(&self, child: &Position) -> MoveCounts {
        if child.occupied[child.turn] != self.pieces {
            return child.move_counts();
        }
        let attacked = child.reach(!child.turn);
        if attacked.contains(child.royals[child.turn]) {
            return child.move_counts();
        }
        self.unthreatened_counts(child, attacked)
    }

    /// The counts in `position`, whose side to move these are and whose royal is not
    /// threatened: every board move is legal, and safe unless the royal steps onto `attacked`;
    /// every drop is safe.
    #[inline(always)]
    fn unthreatened_counts(&self, position: &Position, attacked: Bitboard) -> MoveCounts {
        let drops = position.drops();
        MoveCounts {
            legal: self.others + self.royal_landings.count() as usize + drops,
            safe: self.others + (self.royal_landings & !attacked).count() as usize + drops,
        }
    }
}

/// What decides which moves of a position keep the mover's royal safe (the others lose in 2):
/// [`Position::move_counts`] counts by it and [`Position::safe_moves`] lists by it.
struct Safety {
    royal: Square,
    /// The squares the opponent's pieces can move onto.
    attacked: Bitboard,
    /// Whether the royal is attacked where it stands: then no drop is safe.
    threatened: bool,
    /// The squares of which another piece's move must capture one to end every threat (all
    /// of them when there is none).
    cover: Bitboard,
}

impl Safety {
    /// Where a piece standing on `from` may move and keep the royal safe.
    #[inline(always)]
    fn targets_from(&self, from: Square) -> Bitboard {
        if from == self.royal {
            !self.attacked
        } else {
            self.cover
        }
    }
}

impl Position {
    /// Every legal move, board moves first (by origin square), then drops.
    pub fn legal_moves(&self) -> MoveList {
        self.moves_onto_allowed(|_| Bitboard::ALL, true).0
    }

    /// The legal moves after which the mover's royal is safe (none of them
    /// [`Position::exposes_royal`]), in the order of [`Position::legal_moves`], and whether
    /// some legal move is not safe.
    ///
    /// What filtering the legal moves decides move by move is decided here once per position,
    /// by the rule [`Position::move_counts`] counts with. The proof search generates its
    /// children so.
    pub fn safe_moves(&self) -> (MoveList, bool) {
        let safety = self.safety();
        self.moves_onto_allowed(|from| safety.targets_from(from), !safety.threatened)
    }

    /// The legal moves whose board moves land on `allowed(from)` and, if `drops`, the drops, in
    /// the order of [`Position::legal_moves`]; and whether some legal move was left out.
    #[inline(always)]
    fn moves_onto_allowed(&self, allowed: impl Fn(Square) -> Bitboard, drops: bool) -> (MoveList, bool) {
        let mut list = MoveList::new();
        let mut left_out = false;
        let us = self.turn;
        let own = self.occupied[us];
        // As bits of a u32 whose bit 16, "off the board", counts as the mover's own: a step off
        // the board is no landing, nor a jump beyond it. Each direction is tried in turn and
        // its landing picked without a branch; a move that does not land is written and then
        // cut off again, which costs less than the mispredicted branches of testing first (a
        // third of the search's mispredictions were here).
        let own_bits = u32::from(own.0) | 1 << 16;
        let far_rank = u32::from(Bitboard::far_rank(us).0);
        for from in own {
            let piece = self.board[from.index()].expect("occupied squares hold pieces");
            let can_promote = (piece.kind != Kind::Royal) & !piece.promoted;
            let allowed = u32::from(allowed(from).0);
            let mut mask = self.masks[from.index()];
            let landings = &STEP_AND_JUMP[from.index()];
            while mask != 0 {
                let [step, jump] = landings[mask.trailing_zeros() as usize];
                mask &= mask - 1;
                let to = if own_bits >> step & 1 != 0 { jump } else { step };
                let lands = own_bits >> to & 1 == 0;
                let kept = lands & (allowed >> to & 1 != 0);
                left_out |= lands & !kept;
                let promotes = can_promote & (far_rank >> to & 1 != 0);
                list.push(Move::Board { from, to: Square::from_index(to & 15), promotes });
                list.truncate(list.len() - usize::from(!kept));
            }
        }
        let hand = self.hands[us];
        if !hand.is_empty() {
            let targets = self.drop_targets();
            if !drops {
                left_out |= !targets.is_empty();
            } else {
                for kind in Kind::HAND_KINDS {
                    if hand.count(kind) > 0 {
                        for to in targets {
                            list.push(Move::Drop { kind, to });
                        }
                    }
                }
            }
        }
        (list, left_out)
    }

    /// Whether the side to move has a drop.
    #[inline]
    fn can_drop(&self) -> bool {
        !self.hands[self.turn].is_empty() && !self.drop_targets().is_empty()
    }

    /// The squares the side to move may drop on: the empty ones off its far rank (a dropped
    /// piece is unpromoted, and an unpromoted piece never stands on its far rank).
    #[inline]
    fn drop_targets(&self) -> Bitboard {
        !(self.occupied() | Bitboard::far_rank(self.turn))
    }

    /// Whether the side to move can capture the opponent's royal now (a win in 1). Looks out
    /// from the royal instead of generating moves: an own piece next to it that moves toward
    /// it steps onto it, and an own piece behind such a neighbour jumps over it onto it.
    #[inline]
    pub fn can_capture_royal(&self) -> bool {
        self.attacks(self.occupied[self.turn], self.royals[!self.turn])
    }

    /// Whether the player who just moved could capture the side to move's royal if it were
    /// its turn: the royal is threatened (what chess calls check), so the side to move must
    /// answer the threat or lose in 2.
    #[inline]
    pub fn threatens_royal(&self) -> bool {
        self.attacks(self.occupied[!self.turn], self.royals[self.turn])
    }

    /// Whether, after the legal move `mv` (not a royal capture), the opponent can capture the
    /// mover's royal: `play_unchecked(mv).can_capture_royal()` without building the position.
    /// The opponent's pieces stay where they are, except one captured by `mv`.
    #[inline]
    pub fn exposes_royal(&self, mv: Move) -> bool {
        let us = self.turn;
        let them = !us;
        let (royal, attackers) = match mv {
            Move::Board { from, to, .. } => {
                let royal = if from == self.royals[us] { to } else { self.royals[us] };
                (royal, self.occupied[them] & !Bitboard::from_square(to))
            }
            Move::Drop { .. } => (self.royals[us], self.occupied[them]),
        };
        self.attacks(attackers, royal)
    }

    /// Whether, after the legal move `mv` (not a royal capture), the mover threatens the
    /// opponent's royal: `play_unchecked(mv).threatens_royal()` without building the position.
    /// The mover's pieces stay where they are, except the moved or dropped one.
    #[inline]
    pub fn threatens_after(&self, mv: Move) -> bool {
        let us = self.turn;
        let (to, moved) = match mv {
            Move::Board { from, to, promotes } => {
                let piece = self.board[from.index()].expect("a board move starts on a piece");
                (to, Piece { promoted: piece.promoted | promotes, ..piece })
            }
            Move::Drop { kind, to } => (to, Piece::new(us, kind, false)),
        };
        let own = (self.occupied[us] & !vacated(mv)) | Bitboard::from_square(to);
        // Every other square of `own` still holds the mover's piece it held before.
        attacks_on(own, self.royals[!us], |square| {
            if square == to {
                moved.direction_mask()
            } else {
                self.masks[square.index()]
            }
        })
    }

    /// Whether, after the legal move `mv`, the opponent has a drop: a piece in hand (which
    /// `mv` does not change) and an empty square off its far rank.
    #[inline]
    pub fn opponent_can_drop_after(&self, mv: Move) -> bool {
        let them = !self.turn;
        let occupied = (self.occupied() & !vacated(mv)) | Bitboard::from_square(mv.to());
        !self.hands[them].is_empty() && !(occupied | Bitboard::far_rank(them)).is_empty()
    }

    /// How many legal moves the side to move has, and how many of them are safe (after them
    /// the opponent cannot capture the mover's royal at once; the others lose in 2), counted
    /// without listing the moves: the mobility the proof search starts from and the counter
    /// the solver's init stores, for every position they look at.
    ///
    /// Only the royal's own moves can expose it while it is not threatened (see
    /// [`Position::exposure_test`]); while it is, a drop never saves it (it neither captures
    /// an attacker nor stands between: attacks are steps, and jumps over the attacker's own
    /// pieces), and each board move is tested.
    pub fn move_counts(&self) -> MoveCounts {
        let safety = self.safety();
        if !safety.threatened {
            return self.mobility(self.turn).unthreatened_counts(self, safety.attacked);
        }
        let own = self.occupied[self.turn];
        let mut counts = MoveCounts { legal: 0, safe: 0 };
        for from in own {
            let mask = self.masks[from.index()];
            let landings = moves_onto(from, mask, own) & !own;
            counts.legal += landings.count() as usize;
            counts.safe += (landings & safety.targets_from(from)).count() as usize;
        }
        // A drop never ends a threat: legal, never safe.
        counts.legal += self.drops();
        counts
    }

    /// How many drops the side to move has: a piece of each kind it holds onto each target.
    #[inline(always)]
    fn drops(&self) -> usize {
        let kinds_in_hand = self.hands[self.turn].0.iter().filter(|&&count| count > 0).count();
        if kinds_in_hand == 0 {
            0
        } else {
            kinds_in_hand * self.drop_targets().count() as usize
        }
    }

    /// The board moves of `color`'s pieces, gathered as [`Mobility`] keeps them.
    #[inline(always)]
    fn mobility(&self, color: Color) -> Mobility {
        let pieces = self.occupied[color];
        let royal = self.royals[color];
        let mut others = 0;
        let mut royal_landings = Bitboard::EMPTY;
        for from in pieces {
            let landings = moves_onto(from, self.masks[from.index()], pieces) & !pieces;
            if from == royal {
                royal_landings = landings;
            } else {
                others += landings.count() as usize;
            }
        }
        Mobility { pieces, others, royal_landings }
    }

    /// What [`Position::move_counts`] needs of the opponent's board moves, the same in every
    /// position a move of the side to move leads to unless it captures: for counting the
    /// children's moves ([`Mobility::counts_in`]) with the opponent's pieces visited once.
    ///
    /// Where a piece lands depends only on its own side's pieces (a step onto any square not
    /// its own, a jump over its own), and a move that captures nothing leaves the opponent's
    /// pieces as they were.
    pub fn opponent_mobility(&self) -> Mobility {
        self.mobility(!self.turn)
    }

    /// Which moves of the side to move keep its royal safe, decided once for the position.
    #[inline(always)]
    fn safety(&self) -> Safety {
        let royal = self.royals[self.turn];
        // Every square the opponent's pieces can move onto: the royal may not go there, and the
        // royal is threatened where it stands if its square is one of them. (A royal capturing
        // on a square removes that piece, whose moves never reach its own square; the jumps
        // of the others pass over their own pieces only, so the royal's move changes none.)
        let attacked = self.reach(!self.turn);
        let threatened = attacked.contains(royal);
        // Where a move other than the royal's must capture to end every threat (a move cannot
        // block one: steps come from next to the royal, and jumps pass only over the
        // attacker's own pieces); every square when there is no threat.
        let cover = if threatened { self.threat_cover() } else { Bitboard::ALL };
        Safety { royal, attacked, threatened, cover }
    }

    /// Whether any legal move is safe, as in [`Position::move_counts`], mostly without looking
    /// at the moves: while the royal is not threatened every drop is safe (see
    /// [`Position::exposure_test`]), and a non-empty hand has somewhere to drop nearly always.
    ///
    /// Past that, the pieces are tested as [`Position::move_counts`] counts them, but the
    /// first safe move ends the test, and the opponent's reach is gathered only for the
    /// royal's moves, tested last.
    pub fn has_safe_move(&self) -> bool {
        let threatened = self.threatens_royal();
        if !threatened && self.can_drop() {
            return true;
        }
        // While threatened, a drop never helps (see `move_counts`).
        let us = self.turn;
        let own = self.occupied[us];
        let royal = self.royals[us];
        let cover = if threatened { self.threat_cover() } else { Bitboard::ALL };
        for from in own & !Bitboard::from_square(royal) {
            let mask = self.masks[from.index()];
            if !(moves_onto(from, mask, own) & !own & cover).is_empty() {
                return true;
            }
        }
        let royal_mask = self.masks[royal.index()];
        !(moves_onto(royal, royal_mask, own) & !own & !self.reach(!us)).is_empty()
    }

    /// [`Position::exposes_royal`] as a test for many moves of this position, with the threat
    /// to the royal where it stands looked up once.
    ///
    /// A move never adds an attack on that square: it only removes an opponent's piece (a
    /// capture) or adds one of the mover's (which an attacker neither steps through nor jumps
    /// over, as jumps pass only the attacker's own pieces). So while the royal is not
    /// threatened, only the royal's own moves can expose it.
    #[inline]
    pub fn exposure_test(&self) -> impl Fn(Move) -> bool + '_ {
        let threatened = self.threatens_royal();
        let royal = self.royals[self.turn];
        move |mv| match mv {
            Move::Board { from, .. } if from == royal => self.exposes_royal(mv),
            _ => threatened && self.exposes_royal(mv),
        }
    }

    /// The squares of which the side to move must capture one to end every threat to its
    /// royal without moving it: the intersection, over every way the opponent attacks the
    /// royal, of the squares that way needs (a stepping piece next to the royal; a jumping
    /// piece and the piece of its own it jumps over).
    fn threat_cover(&self) -> Bitboard {
        let them = !self.turn;
        let theirs = self.occupied[them];
        let royal = self.royals[self.turn];
        let moves_from = |square: Square| self.masks[square.index()];
        let mut cover = Bitboard::ALL;
        for next in royal.neighbors() & theirs {
            let toward = 1 << next.direction_to(royal).expect("neighbours") as u8;
            if moves_from(next) & toward != 0 {
                cover = cover & Bitboard::from_square(next);
            }
            if let Some(jumper) =
                royal.beyond(next).filter(|&far| theirs.contains(far) && moves_from(far) & toward != 0)
            {
                cover = cover & (Bitboard::from_square(jumper) | Bitboard::from_square(next));
            }
        }
        cover
    }

    /// The squares `color`'s pieces can step or jump onto, wherever they stand: squares of
    /// the opponent's pieces they could capture, empty squares, and squares of `color`'s own
    /// pieces, which they guard.
    #[inline]
    pub fn reach(&self, color: Color) -> Bitboard {
        let pieces = self.occupied[color];
        let mut reach = Bitboard::EMPTY;
        for from in pieces {
            reach |= moves_onto(from, self.masks[from.index()], pieces);
        }
        reach
    }

    /// Whether a piece standing on `own` (one side's pieces as found on the board, or some of
    /// them) can move onto `target`.
    #[inline]
    fn attacks(&self, own: Bitboard, target: Square) -> bool {
        // `attacks_on` asks only about squares of `own`.
        attacks_on(own, target, |square| self.masks[square.index()])
    }

    /// Whether the side to move has no legal move (no board move, no drop): it has lost.
    pub fn has_no_legal_move(&self) -> bool {
        !self.can_drop() && self.legal_moves().is_empty()
    }

    /// The positions the game can go on to: after each legal move that does not capture the
    /// royal, in move order. A royal capture ends the game there, so it leads to none; what
    /// every consumer of a position's children (a store read, a proof tree, a search's
    /// reuse) needs to agree on.
    pub fn successors(&self) -> impl Iterator<Item = (Move, Position)> + '_ {
        let moves = self.legal_moves();
        (0..moves.len()).filter_map(move |i| {
            let mv = moves[i];
            (!self.captures_royal(mv)).then(|| (mv, self.play_unchecked(mv)))
        })
    }
}

/// The square a move empties: its origin, none for a drop.
#[inline]
fn vacated(mv: Move) -> Bitboard {
    match mv {
        Move::Board { from, .. } => Bitboard::from_square(from),
        Move::Drop { .. } => Bitboard::EMPTY,
    }
}

/// The squares a piece on `from` moving in the directions of `mask` steps or jumps onto, with
/// its side's pieces on `own`: each neighbour in those directions, and the square beyond each
/// such neighbour that `own` holds (a jump). The squares `own` holds among them are not
/// landings (but a capture there by another piece would be reached).
#[inline]
fn moves_onto(from: Square, mask: u8, own: Bitboard) -> Bitboard {
    let steps = from.neighbors_toward(mask);
    steps | from.beyond_each(steps & own)
}

/// Whether one of the pieces on `own` (one side's pieces) can move onto `target`, given each
/// square's piece as its direction mask (`moves_from`; 0 for a square that holds none of the
/// side's pieces): a step onto it, or a jump over a piece of `own` next to it.
#[inline]
pub(crate) fn attacks_on(own: Bitboard, target: Square, moves_from: impl Fn(Square) -> u8) -> bool {
    (own & target.neighbors()).any(|next| {
        let direction = next.direction_to(target).expect("neighbours");
        let toward = 1 << direction as u8;
        moves_from(next) & toward != 0
            || next
                .step(direction.opposite())
                .is_some_and(|behind| own.contains(behind) && moves_from(behind) & toward != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way a position is made from another keeps the direction masks beside the board:
    /// moves, un-moves, the symmetries and notation, along random games.
    #[test]
    fn direction_masks_follow_the_board() {
        let mut position = Position::start();
        let mut seed = 11u64;
        for _ in 0..3_000 {
            assert!(position.masks_agree(), "{position}");
            assert!(position.flipped().masks_agree() && position.mirrored().masks_agree(), "{position}");
            assert!(Position::parse(&position.to_sfen()).unwrap().masks_agree(), "{position}");
            position.unmoves(|unmove| assert!(position.before(&unmove).masks_agree(), "{position}: {unmove:?}"));
            let next: Vec<Position> = position.successors().map(|(_, next)| next).collect();
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            position = if next.is_empty() { Position::start() } else { next[(seed >> 33) as usize % next.len()] };
        }
    }

    #[test]
    fn successors_are_the_moves_that_do_not_capture_the_royal() {
        // A position where the first player can capture the royal, and one where it cannot.
        for sfen in ["k3/K3/4/4 b C 1", "trfk/3c/C3/KFRT b - 1"] {
            let position = Position::parse(sfen).unwrap();
            // Played the checked way: a royal capture is the game's end, not a position.
            let expected: Vec<(Move, Position)> = position
                .legal_moves()
                .iter()
                .filter_map(|&mv| match position.play(mv) {
                    Ok(crate::Played::Position(next)) => Some((mv, next)),
                    _ => None,
                })
                .collect();
            assert_eq!(position.successors().collect::<Vec<_>>(), expected, "{sfen}");
            assert!(expected.len() < position.legal_moves().len() || !position.can_capture_royal(), "{sfen}");
        }
    }

    #[test]
    fn start_position_has_eight_moves() {
        let moves: Vec<String> = Position::start().legal_moves().iter().map(|m| m.to_string()).collect();
        assert_eq!(moves, ["a1a3", "a1b2", "b1b2", "c1d2", "c1b2", "d1d2", "d1c2", "a2a3"]);
    }
}
