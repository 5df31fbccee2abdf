//! Proof trees spelt out of a prover's table: the winner's move at each of its positions and
//! every reply of the loser, with bounds that fall along every line (what a certificate
//! holds), and the winning move that a certificate or a forced line takes next.

use arrayvec::ArrayVec;
use shogi4_certificate::{Certificate, Entry};
use shogi4_engine::{Move, Position, MAX_MOVES};

use crate::numbers::Question;
use crate::prover::Prover;

/// Writes the proof that `position`'s side to move wins within `within` plies; returns the
/// bound its entry got (at most `within`).
pub(crate) fn certify_winner(
    prover: &mut Prover,
    position: &Position,
    within: u32,
    certificate: &mut Certificate,
) -> Option<u32> {
    if let Some(entry) = certificate.get(position).filter(|entry| u32::from(entry.bound) <= within) {
        return Some(u32::from(entry.bound));
    }
    let moves = position.legal_moves();
    let index_of = |mv| moves.iter().position(|&m| m == mv).and_then(|i| u8::try_from(i).ok());
    let (move_index, bound) = match moves.iter().find(|&&mv| position.captures_royal(mv)) {
        Some(&mv) => (index_of(mv)?, 1),
        None => {
            let (mv, loser, after) = winning_move(prover, position, within)?;
            (index_of(mv)?, certify_loser(prover, &loser, after, certificate)? + 1)
        }
    };
    // The same position may have been certified meanwhile, deeper in its own tree (a line
    // that comes back to it) and so with a smaller bound, which the positions between rely
    // on: an entry's bound is only ever lowered.
    if let Some(entry) = certificate.get(position).filter(|entry| u32::from(entry.bound) <= bound) {
        return Some(u32::from(entry.bound));
    }
    certificate.insert(position, Entry { move_index, bound: u16::try_from(bound).ok()? });
    Some(bound)
}

/// Writes the proof that `position`'s side to move loses within `within` plies: every move's
/// position proven a win within fewer. Returns the bound it got (one more than the slowest
/// of those wins; 0 without a move).
pub(crate) fn certify_loser(
    prover: &mut Prover,
    position: &Position,
    within: u32,
    certificate: &mut Certificate,
) -> Option<u32> {
    let mut slowest = None;
    for &mv in position.legal_moves().iter() {
        if position.captures_royal(mv) {
            return None;
        }
        let winner = position.play_unchecked(mv);
        let known = prover.proven_win_within(&winner).unwrap_or(within - 1).min(within - 1);
        let bound = certify_winner(prover, &winner, known, certificate)?;
        slowest = Some(slowest.unwrap_or(0).max(bound));
    }
    Some(slowest.map_or(0, |slowest| slowest + 1))
}

/// A move of `position`, proven to win within `within` plies, that leads to a position
/// proven lost within fewer: the one the table knows to lose quickest, else the first
/// that df-pn proves (moves that threaten the royal first). `None` when the budget runs
/// out first (or the win was not proven after all).
pub(crate) fn winning_move(prover: &mut Prover, position: &Position, within: u32) -> Option<(Move, Position, u32)> {
    let exposes = position.exposure_test();
    let mut candidates: ArrayVec<(Move, Position), MAX_MOVES> = ArrayVec::new();
    for &mv in position.legal_moves().iter() {
        if !exposes(mv) {
            candidates.push((mv, position.play_unchecked(mv)));
        }
    }
    let known = candidates
        .iter()
        .filter_map(|&(mv, child)| Some((mv, child, prover.proven_loss_within(&child)?)))
        .filter(|&(_, _, after)| after < within)
        .min_by_key(|&(_, _, after)| after);
    if known.is_some() {
        return known;
    }
    candidates.sort_by_key(|(_, child)| std::cmp::Reverse(child.threatens_royal()));
    for (mv, child) in candidates {
        if prover.prove_by_numbers(&child, within - 1, Question::Loss).ok()? {
            let after = prover.proven_loss_within(&child).unwrap_or(within - 1).min(within - 1);
            return Some((mv, child, after));
        }
    }
    None
}
