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
/// Ties go to the first child in move order. Broken instead by the other number (the larger,
/// or the smaller), careful play at 2 M / 8 M nodes a position went from 137 / 155 proven as a
/// value to 136 / 154 and 138 / 153 (random playouts the same). Again with the smaller, on all
/// three sets (random, careful, self-play; as kept in brackets): at 1 M nodes 160, 122, 140
/// (159, 124, 143), at 2 M 165, 135, 149 (163, 131, 147), at 4 M 169, 144, 151 (169, 143,
/// 152), at 16 M 178, 163, 158 (179, 163, 158): the spread of a changed order. Written as selects rather than
/// branches, the choice of best and second best mispredicted no less (the compiler already
/// emits them) and ran 1% slower.
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
/// trick): switching back and forth between two near-equal children re-expands both.
///
/// ε = ¼, measured with `scripts/search-reach.sh 200 8000000n` (a node budget, so the same
/// searches on every run): against ε = 1, careful play 130 → 137 of 200 proven as a value
/// and 72 → 80 exactly, random playouts 163 → 167, self-play 136 → 140; ε = ⅛ and ⅜ gave 136
/// and 137 on careful play (ε = ½ gave 131 within 1 s, against 134 for ¼ in the same series).
/// Again with [`VALUE_UNIT`] at 4, at 2 M nodes: ε = ⅛ and ½ gave careful play 134 and 135,
/// self-play 143 and 144, random playouts 161 and 161, against 137, 143 and 163.
pub(crate) fn grow(second: u32) -> u32 {
    second.saturating_add((second / 4).max(1))
}

/// What one safe move counts for in the value questions' starting numbers (`value.rs`; the
/// depth-bounded search counts 1, then scales by the depth left).
///
/// With 1, the number on the side the guess favours, `1 / lean`, rounds back up to 1 (never 0:
/// that would say settled), so the lean could only raise the other side; with 4 it lowers
/// the favoured side as well, and the 1 + ε slack (`grow`) is no longer a whole unit on the
/// smallest numbers. Measured with `scripts/search-reach.sh 200 2000000n` and `8000000n`
/// (careful play, self-play, random playouts, proven as a value / exactly), together with
/// the guess's [`crate::guess::STRENGTH`] lowered from 0.35 to 0.25: at 2 M nodes 137 / 43,
/// 143 / 106, 163 / 132 against 129 / 43, 141 / 107, 162 / 132; at 8 M nodes 155 / 78,
/// 158 / 116, 171 / 142 against 151 / 77, 158 / 116, 170 / 141; at 16 M nodes careful play 161
/// / 94 against 162 / 94. A gain where a search is short (the server's default budget is
/// 300 ms), none where it is long. With the strength kept at 0.35: a unit of 4 here alone gave
/// 136, 144, 163 at 2 M nodes but 152, 155, 173 at 8 M, and 8 gave 136, 145, 163 at 2 M; in
/// both searches, units of 2, 4, 8 and 16 gave careful play 133, 136, 135 and 135 at 2 M, and 4
/// gave 154, 154, 172 at 8 M; in the depth-bounded search alone, 4 gave 129, 139, 160 at 2 M,
/// so that search keeps 1. Strength 0.5 with the unit gave careful 154 and self-play 155 at
/// 8 M; strengths 0.2 and 0.3, 132, 139, 162 and 135, 144, 161 at 2 M. Nor do the two sides want
/// different units: the favoured side at 2 or 8 against 4 per move gave 137, 141, 161 and
/// 133, 143, 164 at 2 M nodes; nor a curved count, the safe moves to the power 0.75 or 1.25:
/// 132, 143, 163 and 134, 142, 162; at 8 M nodes, powers 0.5, 0.75 and 1.15 scaled to agree
/// at four moves gave random playouts 171, 172 and 173 and careful play 147, 154 and 156,
/// against 173 and 155.
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
