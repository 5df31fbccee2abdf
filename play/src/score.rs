//! Scores: what a search says of a position, for the side to move, on one integer scale.
//!
//! Evaluations are centipawns (a carp on the board is worth about 100), clamped to
//! ±[`EVAL_LIMIT`]. A forced royal capture is a *mate score* far above any evaluation:
//! [`MATE`] less the plies from the root to the capture, so a nearer win scores higher. A
//! draw, proven or by repetition on the path, is 0.
//!
//! Invariant: `|evaluation| <= EVAL_LIMIT < MATE_BOUND < |mate score| <= MATE`.

use shogi4_search::Outcome;
use shogi4_tablebase::Value;

/// A royal captured at the root itself; a win in `n` plies scores `MATE - n`.
pub const MATE: i32 = 32_000;
/// Scores beyond this (in absolute value) are mate scores.
pub const MATE_BOUND: i32 = MATE - 1_000;
/// Evaluations are clamped to this.
pub const EVAL_LIMIT: i32 = 20_000;
/// Above every score: the search's initial window.
pub const INFINITY: i32 = MATE + 1;
/// How many centipawns make one unit of log-odds in [`expected_score`]: the evaluation is
/// trained as a logistic model, so a score converts back to the chance it was fitted to.
pub const CENTIPAWNS_PER_LOGIT: f64 = 100.0;

/// The score of a win for the side to move `plies` from the root.
#[inline]
pub const fn win_in(plies: u32) -> i32 {
    MATE - plies as i32
}

/// The score of a loss for the side to move `plies` from the root.
#[inline]
pub const fn loss_in(plies: u32) -> i32 {
    -MATE + plies as i32
}

/// What a score says, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The side to move captures the royal in this many plies against any defence the
    /// search considered.
    Win(u32),
    /// The side to move's royal is captured in this many plies against its best defence the
    /// search considered.
    Loss(u32),
    /// An evaluation in centipawns (0 also for a draw by repetition on the searched line).
    Centipawns(i32),
}

/// Reads a score from the root's point of view.
pub fn verdict(score: i32) -> Verdict {
    if score > MATE_BOUND {
        Verdict::Win((MATE - score).max(0) as u32)
    } else if score < -MATE_BOUND {
        Verdict::Loss((MATE + score).max(0) as u32)
    } else {
        Verdict::Centipawns(score)
    }
}

/// The expected score of the side to move, from 0 (a loss) to 1 (a win), that a score stands
/// for: the logistic curve the evaluation was fitted with; mate scores give 0 or 1.
pub fn expected_score(score: i32) -> f64 {
    match verdict(score) {
        Verdict::Win(_) => 1.0,
        Verdict::Loss(_) => 0.0,
        Verdict::Centipawns(cp) => 1.0 / (1.0 + (-f64::from(cp) / CENTIPAWNS_PER_LOGIT).exp()),
    }
}

/// A proven outcome as a score at `ply` from the root: a win or loss at its distance (the
/// upper end of a range, the distance the proof guarantees), a draw 0; `None` when nothing
/// is proven.
pub fn from_outcome(outcome: Outcome, ply: u32) -> Option<i32> {
    match outcome {
        Outcome::Proven(Value::Win(n)) => Some(win_in(ply + n)),
        Outcome::Proven(Value::Loss(n)) => Some(loss_in(ply + n)),
        Outcome::Proven(Value::Draw) => Some(0),
        Outcome::Bounded { win: true, at_most, .. } => Some(win_in(ply + at_most)),
        Outcome::Bounded { win: false, at_most, .. } => Some(loss_in(ply + at_most)),
        Outcome::Unknown { .. } => None,
    }
}

/// A score as the transposition table keeps it: mate scores counted from the node, not the
/// root, so that an entry holds wherever the node is met again.
#[inline]
pub fn to_table(score: i32, ply: u32) -> i32 {
    if score > MATE_BOUND {
        score + ply as i32
    } else if score < -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

/// The inverse of [`to_table`] at the node's `ply`.
#[inline]
pub fn from_table(score: i32, ply: u32) -> i32 {
    if score > MATE_BOUND {
        score - ply as i32
    } else if score < -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_decode_to_their_distance() {
        assert_eq!(verdict(win_in(7)), Verdict::Win(7));
        assert_eq!(verdict(loss_in(4)), Verdict::Loss(4));
        assert_eq!(verdict(EVAL_LIMIT), Verdict::Centipawns(EVAL_LIMIT));
        assert_eq!(from_table(to_table(win_in(9), 3), 3), win_in(9));
        assert_eq!(to_table(win_in(9), 3), win_in(6));
        assert!((expected_score(0) - 0.5).abs() < 1e-12);
        assert!(expected_score(200) > 0.8);
    }
}
