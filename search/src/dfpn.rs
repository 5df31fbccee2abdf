//! Depth-first proof-number search (df-pn) for the same two depth-bounded questions the
//! plain AND/OR search answers: it expands, at every step, the part of the tree where a proof
//! or a disproof looks cheapest (fewest unresolved positions), instead of the moves in order.
//!
//! A node is (position, remaining depth, question): "win within `d`" is an OR node over the
//! moves that keep the royal safe, each leading to "loss within `d − 1`", an AND node over the
//! defender's safe moves. Depth falls by one on every edge, so the node graph has no cycles
//! (no graph-history interaction); proof and disproof numbers of unresolved nodes live in
//! their own fixed-size table, and every resolved node is recorded as a fact in the
//! transposition table shared with the rest of the search.

use shogi4_engine::{Position, MAX_MOVES};

use crate::prover::{Aborted, Prover};
use crate::table::{key_of, mix};

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
    fn next(self) -> Question {
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
        NumberTable { entries: vec![EMPTY; entries] }
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

    fn get(&self, key: u128, depth: u32) -> Option<(u32, u32)> {
        let entry = &self.entries[self.slot(key, depth)];
        (entry.key == key && entry.depth == depth).then_some((entry.proof, entry.disproof))
    }

    fn put(&mut self, key: u128, depth: u32, proof: u32, disproof: u32) {
        let slot = self.slot(key, depth);
        self.entries[slot] = NumberEntry { key, depth, proof, disproof };
    }
}

/// A child of an expanded node: its position and key, and its answer when known without
/// expanding it.
struct Child {
    position: Position,
    key: u128,
    known: Option<bool>,
    /// Numbers before any expansion: proving a loss takes answering every safe defence, so
    /// an AND node starts with as many to prove as it has (the mobility heuristic).
    initial: (u32, u32),
}

impl Prover<'_> {
    /// Answers the question of `position` within `depth` by df-pn.
    pub(crate) fn prove_by_numbers(
        &mut self,
        position: &Position,
        depth: u32,
        question: Question,
    ) -> Result<bool, Aborted> {
        if let Some(answer) = self.known(position, depth, question) {
            return Ok(answer);
        }
        let (proof, _) = self.expand(position, depth, question, INFINITE, INFINITE)?;
        Ok(proof == 0)
    }

    /// The answer when it costs no search: the rules settle it, or the table holds it.
    fn known(&mut self, position: &Position, depth: u32, question: Question) -> Option<bool> {
        match question {
            Question::Win => self.win_known(position, depth),
            Question::Loss => self.loss_known(position, depth),
        }
    }

    /// Expands a node until it is resolved or its numbers reach the thresholds; returns its
    /// numbers (proof 0: the answer is yes; disproof 0: no).
    fn expand(
        &mut self,
        position: &Position,
        depth: u32,
        question: Question,
        proof_threshold: u32,
        disproof_threshold: u32,
    ) -> Result<(u32, u32), Aborted> {
        self.tick()?;
        // Resolved meanwhile by another path to the same position?
        if let Some(answer) = self.known(position, depth, question) {
            return Ok(if answer { (0, INFINITE) } else { (INFINITE, 0) });
        }
        let key = key_of(position);
        let child_depth = depth - 1;
        let child_question = question.next();
        // The moves that keep the royal safe; the others lose at once.
        let moves = position.legal_moves();
        let mut children: Vec<Child> = Vec::with_capacity(MAX_MOVES.min(moves.len()));
        for &mv in moves.iter() {
            if position.exposes_royal(mv) {
                continue;
            }
            let child = position.play_unchecked(mv);
            let known = self.known(&child, child_depth, child_question);
            let initial = match (known, child_question) {
                (None, Question::Loss) => (safe_moves(&child).max(1), 1),
                _ => (1, 1),
            };
            children.push(Child { position: child, key: key_of(&child), known, initial });
        }
        // Every child was generated and looked up: each counts as a node examined.
        self.nodes += children.len() as u64;
        loop {
            // The node's numbers from its children's: an OR node needs one proven child, an
            // AND node every child.
            let (mut proof, mut disproof) = match question {
                Question::Win => (INFINITE, 0u32),
                Question::Loss => (0u32, INFINITE),
            };
            let (mut best, mut best_numbers, mut best_deciding, mut second) =
                (None, (INFINITE, INFINITE), INFINITE, INFINITE);
            for (i, child) in children.iter().enumerate() {
                let (p, d) = match child.known {
                    Some(true) => (0, INFINITE),
                    Some(false) => (INFINITE, 0),
                    None => self.numbers.get(child.key, child_depth).unwrap_or(child.initial),
                };
                // The number that decides which child to expand: the cheapest to prove (OR) or
                // to disprove (AND).
                let deciding = match question {
                    Question::Win => {
                        proof = proof.min(p);
                        disproof = disproof.saturating_add(d);
                        p
                    }
                    Question::Loss => {
                        proof = proof.saturating_add(p);
                        disproof = disproof.min(d);
                        d
                    }
                };
                if child.known.is_some() {
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
            if proof == 0 || disproof == 0 {
                self.resolve(key, depth, question, proof == 0);
                return Ok((proof, disproof));
            }
            if proof >= proof_threshold || disproof >= disproof_threshold {
                self.numbers.put(key, depth, proof, disproof);
                return Ok((proof, disproof));
            }
            let best = best.expect("unresolved nodes have unresolved children");
            let (child_proof, child_disproof) = best_numbers;
            let (proof_limit, disproof_limit) = match question {
                Question::Win => (
                    proof_threshold.min(second.saturating_add(1)),
                    disproof_threshold.saturating_sub(disproof).saturating_add(child_disproof),
                ),
                Question::Loss => (
                    proof_threshold.saturating_sub(proof).saturating_add(child_proof),
                    disproof_threshold.min(second.saturating_add(1)),
                ),
            };
            let child = children[best].position;
            let (p, d) = self.expand(&child, child_depth, child_question, proof_limit, disproof_limit)?;
            if p == 0 || d == 0 {
                children[best].known = Some(p == 0);
            }
        }
    }

    /// Records a resolved node as a fact.
    fn resolve(&mut self, key: u128, depth: u32, question: Question, yes: bool) {
        let d = depth as u8;
        self.record(key, |b| match (question, yes) {
            (Question::Win, true) => b.win_within = b.win_within.min(d),
            (Question::Win, false) => b.no_win_within = b.no_win_within.max(d),
            (Question::Loss, true) => b.loss_within = b.loss_within.min(d),
            (Question::Loss, false) => b.no_loss_within_plus_one = b.no_loss_within_plus_one.max(d + 1),
        });
    }
}

/// The moves of `position` that do not let the opponent capture the royal at once.
fn safe_moves(position: &Position) -> u32 {
    position.legal_moves().iter().filter(|&&mv| !position.exposes_royal(mv)).count() as u32
}
