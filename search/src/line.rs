//! The line that shows a searched position's outcome: the line of best play for an exact
//! value, a forced winning line for a bounded one.

use std::time::Duration;

use shogi4_engine::Position;
use shogi4_tablebase::MainlineStep;

use crate::outcome::Outcome;
use crate::prover::Prover;
use crate::spell::winning_move;

/// A searched position's outcome and the line that shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// What was established.
    pub outcome: Outcome,
    /// The moves to the royal capture; each step's `dtw_after` is exact for an exact outcome,
    /// an upper bound for a bounded one. Empty for unknown outcomes and losses in 0.
    pub steps: Vec<MainlineStep>,
    /// Nodes (positions examined), the proof and the line together.
    pub nodes: u64,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

/// The line of best play from a position whose exact distance is `dtw`; `None` when the
/// budget runs out first.
pub(crate) fn exact_line(prover: &mut Prover, position: &Position, dtw: u32) -> Option<Vec<MainlineStep>> {
    let mut steps = Vec::new();
    let mut current = *position;
    for left in (0..dtw).rev() {
        // `left` plies remain after this move. The side to move wins in `left + 1` or
        // loses in `left + 1`, exactly; find a move whose child has exactly `left`.
        let winning = (left + 1) % 2 == 1;
        let mut chosen = None;
        for &mv in current.legal_moves().iter() {
            if current.captures_royal(mv) {
                if left == 0 {
                    chosen = Some((mv, None));
                    break;
                }
                continue;
            }
            let child = current.play_unchecked(mv);
            let exact = if winning {
                // The child loses within `left`; it cannot lose sooner, or we would win sooner.
                prover.loses_within(&child, left).ok()?
            } else {
                // The child wins within `left` (all do); keep one that needs all of it.
                left < 2 || !prover.wins_within(&child, left - 2).ok()?
            };
            if exact {
                chosen = Some((mv, Some(child)));
                break;
            }
        }
        let (mv, result) = chosen?;
        steps.push(MainlineStep { mv, result, dtw_after: left });
        match result {
            Some(next) => current = next,
            None => break,
        }
    }
    Some(steps)
}

/// A forced line from a position proven won (`win`) or lost within `within` plies: the
/// winner plays a move whose position is a proven loss within fewer plies, the loser the
/// defence whose proven win for the opponent is the slowest known. Each step's bound is
/// smaller than the one before, so the line ends, at the royal capture (or at a position
/// without a legal move). `None` when the budget runs out first.
pub(crate) fn forced_line(
    prover: &mut Prover,
    position: &Position,
    win: bool,
    within: u32,
) -> Option<Vec<MainlineStep>> {
    let mut steps = Vec::new();
    let (mut current, mut winning, mut within) = (*position, win, within);
    loop {
        let moves = current.legal_moves();
        if moves.is_empty() {
            return Some(steps);
        }
        let (mv, result, after) = if winning {
            match moves.iter().find(|&&mv| current.captures_royal(mv)) {
                Some(&mv) => (mv, None, 0),
                None => {
                    let (mv, child, after) = winning_move(prover, &current, within)?;
                    (mv, Some(child), after)
                }
            }
        } else {
            // Every move leads to a position that wins within `within − 1` (the loss is
            // proven); keep the defence whose known win is the slowest.
            let (mv, child, after) = moves
                .iter()
                .map(|&mv| {
                    let child = current.play_unchecked(mv);
                    let known = prover.proven_win_within(&child).unwrap_or(within - 1);
                    (mv, child, known.min(within - 1))
                })
                .max_by_key(|&(_, _, after)| after)?;
            (mv, Some(child), after)
        };
        steps.push(MainlineStep { mv, result, dtw_after: after });
        match result {
            Some(next) => (current, winning, within) = (next, !winning, after),
            None => return Some(steps),
        }
    }
}
