//! Proof and disproof numbers, shared by the two df-pn searches (the depth-bounded questions
//! in `dfpn.rs`, the value questions in `value.rs`): the question a node asks, the table of
//! unresolved nodes' numbers, and one step of df-pn from a node's children's numbers.

use crate::table::mix;

/// An unreachable proof or disproof number: the node is resolved the other way.
pub(crate) const INFINITE: u32 = u32::MAX;

/// Which question a node asks of its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Question {
    /// Does it win within the depth (an OR node)?
    Win,
    /// Does it lose within the depth (an AND node)?
    Loss,
}

impl Question {
    pub(crate) fn next(self) -> Question {
        match self {
            Question::Win => Question::Loss,
            Question::Loss => Question::Win,
        }
    }
}

/// Proof and disproof numbers of unresolved nodes, by (position, depth); fixed size.
pub struct NumberTable {
    entries: Vec<NumberEntry>,
}

#[derive(Clone, Copy)]
struct NumberEntry {
    key: u128,
    depth: u32,
    proof: u32,
    disproof: u32,
}

const EMPTY: NumberEntry = NumberEntry { key: 0, depth: 0, proof: 1, disproof: 1 };

impl NumberTable {
    /// A table of about `bytes` bytes.
    pub fn with_bytes(bytes: usize) -> NumberTable {
        let fitting = (bytes / std::mem::size_of::<NumberEntry>()).max(1);
        let entries = if fitting.is_power_of_two() { fitting } else { fitting.next_power_of_two() / 2 };
        NumberTable { entries: shogi4_tablebase::huge_vec(EMPTY, entries) }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<NumberEntry>()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.fill(EMPTY);
    }

    fn slot(&self, key: u128, depth: u32) -> usize {
        mix(key, depth) as usize & (self.entries.len() - 1)
    }

    /// The numbers of (`key`, `depth`), if the table holds them. Always inlined, as the guess is
    /// (`guess::ChildGuesses::lean`): both run for nearly every child a search generates (see `docs/measurements.md`, "The search's budget split and the cost of a node").
    #[inline(always)]
    pub(crate) fn get(&self, key: u128, depth: u32) -> Option<(u32, u32)> {
        let entry = &self.entries[self.slot(key, depth)];
        (entry.key == key && entry.depth == depth).then_some((entry.proof, entry.disproof))
    }

    pub(crate) fn prefetch(&self, key: u128, depth: u32) {
        shogi4_tablebase::prefetch(&self.entries[self.slot(key, depth)]);
    }

    pub(crate) fn put(&mut self, key: u128, depth: u32, proof: u32, disproof: u32) {
        let slot = self.slot(key, depth);
        self.entries[slot] = NumberEntry { key, depth, proof, disproof };
    }
}

/// What a node's children's numbers say: the node's own numbers, and unless it is settled or
/// past its thresholds, which child to expand next and with which thresholds.
pub(crate) struct Step {
    pub proof: u32,
    pub disproof: u32,
    pub next: Option<(usize, (u32, u32))>,
}

/// One step of df-pn at a node asking `question`, from each child's numbers and whether it is
/// still open (settled children count, but are never expanded): an OR node's proof number is
/// its children's smallest and its disproof number their sum, an AND node's the other way
/// round; the child to expand is the open one with the number that decides (the cheapest to
/// prove below an OR node, to disprove below an AND node), until it passes the second best's
/// (with slack, see `grow`) or the node's own thresholds.
///
/// Ties go to the first child in move order (measured: `docs/measurements.md`, "Proof numbers").
pub(crate) fn step(
    question: Question,
    children: impl Iterator<Item = ((u32, u32), bool)>,
    (proof_threshold, disproof_threshold): (u32, u32),
) -> Step {
    let (mut proof, mut disproof) = match question {
        Question::Win => (INFINITE, 0u32),
        Question::Loss => (0u32, INFINITE),
    };
    let (mut best, mut best_numbers, mut best_deciding, mut second) = (None, (INFINITE, INFINITE), INFINITE, INFINITE);
    for (i, ((p, d), open)) in children.enumerate() {
        let deciding = match question {
            Question::Win => {
                proof = proof.min(p);
                disproof = add(disproof, d);
                p
            }
            Question::Loss => {
                proof = add(proof, p);
                disproof = disproof.min(d);
                d
            }
        };
        if !open {
            continue;
        }
        if best.is_none() || deciding < best_deciding {
            second = best_deciding;
            best = Some(i);
            best_numbers = (p, d);
            best_deciding = deciding;
        } else {
            second = second.min(deciding);
        }
    }
    let settled = proof == 0 || disproof == 0;
    if settled || proof >= proof_threshold || disproof >= disproof_threshold {
        return Step { proof, disproof, next: None };
    }
    let best = best.expect("an unsettled node has an open child");
    let (child_proof, child_disproof) = best_numbers;
    let limits = match question {
        Question::Win => (
            proof_threshold.min(grow(second)),
            disproof_threshold.saturating_sub(disproof).saturating_add(child_disproof),
        ),
        Question::Loss => {
            (proof_threshold.saturating_sub(proof).saturating_add(child_proof), disproof_threshold.min(grow(second)))
        }
    };
    Step { proof, disproof, next: Some((best, limits)) }
}

/// A child's threshold from the second-best sibling's number, with some slack (the 1 + ε
/// trick): switching back and forth between two near-equal children re-expands both. ε = ¼,
/// measured (`docs/measurements.md`, "Proof numbers").
pub(crate) fn grow(second: u32) -> u32 {
    second.saturating_add((second / 4).max(1))
}

/// What one safe move counts for in the value questions' starting numbers (`value.rs`; the
/// depth-bounded search counts 1, then scales by the depth left).
///
/// With 1, the number on the side the guess favours, `1 / lean`, rounds back up to 1 (never 0:
/// that would say settled), so the lean could only raise the other side; with 4 it lowers
/// the favoured side as well, and the 1 + ε slack (`grow`) is no longer a whole unit on the
/// smallest numbers (measured: `docs/measurements.md`, "Proof numbers").
pub(crate) const VALUE_UNIT: u32 = 4;

/// The numbers of a node not yet expanded whose mover has `safe_moves` (at least one) and is
/// guessed to win by `lean` (`guess::ChildGuesses::lean`: above 1 where the mover looks ahead), with each
/// move counting `unit` (see [`VALUE_UNIT`]); the depth-bounded search scales them by the
/// depth left.
///
/// Showing that the mover does badly (proving its loss, refuting its win) means answering each
/// of its safe moves, so that side starts at their count; showing it does well, at one move's
/// worth. Then both lean toward the guess: divided by `lean` for the mover, multiplied
/// against it. Never below 1: only a settled node has a 0.
pub(crate) fn starting_numbers(question: Question, safe_moves: u32, lean: f32, unit: u32) -> (u32, u32) {
    let scaled = |n: u32, by: f32| ((n as f32 * by).round() as u32).max(1);
    let (for_the_mover, against_the_mover) = (scaled(unit, 1.0 / lean), scaled(unit * safe_moves, lean));
    match question {
        Question::Win => (for_the_mover, against_the_mover),
        Question::Loss => (against_the_mover, for_the_mover),
    }
}

/// The sum of two numbers, infinite only when one of them is: a sum of finite numbers stops
/// just below [`INFINITE`], so that a node whose children are all unresolved never looks
/// resolved (deep questions have numbers large enough for sums to reach the cap).
fn add(a: u32, b: u32) -> u32 {
    if a == INFINITE || b == INFINITE {
        INFINITE
    } else {
        a.saturating_add(b).min(INFINITE - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a guess (`lean` 1), the mobility alone: 1 for the mover, its safe moves against.
    #[test]
    fn an_even_guess_leaves_the_mobility_alone() {
        assert_eq!(starting_numbers(Question::Win, 7, 1.0, 1), (1, 7));
        assert_eq!(starting_numbers(Question::Loss, 7, 1.0, 1), (7, 1));
    }

    /// A mover guessed ahead is cheaper to prove winning and dearer to prove losing; never 0.
    /// With a larger unit, the favoured side's number falls below a move's worth too.
    #[test]
    fn a_guess_leans_both_numbers_its_way() {
        assert_eq!(starting_numbers(Question::Win, 6, 4.0, 1), (1, 24));
        assert_eq!(starting_numbers(Question::Loss, 6, 4.0, 1), (24, 1));
        assert_eq!(starting_numbers(Question::Win, 6, 0.25, 1), (4, 2));
        assert_eq!(starting_numbers(Question::Loss, 1, 0.01, 1), (1, 100));
        assert_eq!(starting_numbers(Question::Win, 6, 2.0, 4), (2, 48));
        assert_eq!(starting_numbers(Question::Win, 6, 1.0, 4), (4, 24));
    }
}
