//! Value proofs: df-pn without a depth, for "does the side to move win, however far?" (and
//! "does it lose?"), with an upper bound on the distance read off the proof.
//!
//! The depth-bounded questions of `dfpn.rs` key every node by (position, depth), so a deep
//! question such as "win within 121" meets each position at dozens of depths, each searched
//! apart. Here a node is (position, question) alone: every transposition is one node, at any
//! depth. What a depth used to guarantee, that the graph has no cycles, is replaced by the
//! path:
//!
//! - **A proof holds whatever the path.** It is a finite tree whose leaves are royal
//!   captures (or a player without a move), so it is recorded as a fact, with its bound: an
//!   OR node wins within one more ply than the proven child's loss, an AND node loses within
//!   one more than the slowest of its children's wins (two, for a move that exposes the
//!   royal). Those bounds are true of the strategy the tree describes, so they are true upper
//!   bounds on the distance. A proof is only ever built from proofs, never from a disproof.
//! - **A disproof may depend on the path.** A position met again on the current path is a
//!   repetition, a draw for this line, so it refutes the question here, but not from another
//!   path (history never changes a value: the same position reached otherwise may well be
//!   won). Such a refutation, and every refutation built on one, is marked as the path's
//!   own: it is used by the nodes above it on this path, never stored. So is the path's
//!   horizon ([`MAX_PATH`] plies, which bounds the recursion as the deepest question does for
//!   the depth-bounded search). A refutation that depends on no path is one whose leaves are
//!   all captures of the questioner's royal: it is the opposite result, proven, and its
//!   numbers are stored as settled.
//!
//! A disproof is claimed in one case only, a **draw**: when both questions of the root are
//! refuted ([`Settled::Drawn`]). Every line of each refutation then ends in the questioner's
//! proven defeat or in a repetition of a position on the line, since the root has no path
//! above it; the defender of each question can follow its refutation for ever, going back to
//! the repeated position each time, so the questioner never captures the royal. Neither side
//! can force a result: a draw. A refutation that met the path's horizon proves nothing (the
//! line was cut, not repeated), so a search that met it anywhere claims no draw. The
//! differential test against the tables checks every draw it claims. Otherwise nothing a
//! disproof says is claimed: a wrong one could cost a proof, never make one.
//!
//! Draws are rare where players are, and take long searches. What this design was measured
//! against, and what was tried on it and dropped (the short-result loops, reading children's
//! numbers from the table, starting numbers, symmetries), is in `docs/measurements.md` ("The
//! value questions: the runs behind the design").

use shogi4_engine::Position;

use crate::children::{Known, ValueChild as Child};
use crate::guess::ChildGuesses;
use crate::numbers::{grow, starting_numbers, step, Question, Step, INFINITE, VALUE_UNIT};
use crate::prover::{Aborted, Prover};
use crate::table::{key_of, mix, Depth, MAX_DEPTH, UNKNOWN};

/// The deepest path a value search follows: past it a node counts as refuted for this path.
const MAX_PATH: usize = MAX_DEPTH as usize;

/// The number table's depth for value nodes: no depth-bounded question comes near it.
fn slot(question: Question) -> u32 {
    match question {
        Question::Win => u32::MAX,
        Question::Loss => u32::MAX - 1,
    }
}

/// What the two value questions under one root settle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The side to move wins (`true`) or loses, within the bound.
    Won(bool, u32),
    /// Both questions refuted, by lines that each end in the questioner's proven defeat or
    /// in a repetition, never at the horizon: neither side can force the royal capture.
    Drawn,
}

/// What an expansion ends with: the node's numbers, and for a proven node its bound, for a
/// refuted one whether the refutation is the path's own.
#[derive(Clone, Copy, Debug)]
struct Expanded {
    proof: u32,
    disproof: u32,
    bound: u32,
    here: bool,
}

impl Expanded {
    fn numbers(self) -> (u32, u32) {
        (self.proof, self.disproof)
    }

    fn of(known: Known) -> Expanded {
        match known {
            Known::Proven(bound) => Expanded { proof: 0, disproof: INFINITE, bound, here: false },
            Known::Refuted => Expanded { proof: INFINITE, disproof: 0, bound: 0, here: false },
            Known::RefutedHere => Expanded { proof: INFINITE, disproof: 0, bound: 0, here: true },
        }
    }
}

/// The positions on the current path, with a small counting filter in front of the list so
/// that most lookups (positions not on it) cost one memory read.
struct Path {
    keys: Vec<u128>,
    filter: Vec<u16>,
}

const FILTER_SLOTS: usize = 1 << 12;

impl Path {
    fn new() -> Path {
        Path { keys: Vec::with_capacity(MAX_PATH + 1), filter: vec![0; FILTER_SLOTS] }
    }

    fn slot(key: u128) -> usize {
        mix(key, 0) as usize & (FILTER_SLOTS - 1)
    }

    fn contains(&self, key: u128) -> bool {
        self.filter[Path::slot(key)] > 0 && self.keys.contains(&key)
    }

    fn push(&mut self, key: u128) {
        self.filter[Path::slot(key)] += 1;
        self.keys.push(key);
    }

    fn pop(&mut self) {
        if let Some(key) = self.keys.pop() {
            self.filter[Path::slot(key)] -= 1;
        }
    }
}

impl Prover<'_> {
    /// Whether the side to move wins or loses at any distance (with the proof's bound), both
    /// questions asked under one virtual OR root: each step goes on with the question whose
    /// proof looks cheaper (the smaller proof number), until its number passes the other's
    /// (with the same slack as every threshold), so that the effort goes where the proof is
    /// nearer instead of half to each. A draw when both are refuted and no line met the
    /// horizon; `Ok(None)` when both are refuted and one did.
    ///
    /// Other slacks between the two proved less (`docs/measurements.md`, "Figures once kept in
    /// doc comments").
    pub(crate) fn prove_either(&mut self, position: &Position) -> Result<Option<Settled>, Aborted> {
        let key = key_of(position);
        self.met_horizon = false;
        let mut path = Path::new();
        // Each question's numbers as last seen; `None` once refuted.
        let mut open = [Some((1u32, 1u32)), Some((1, 1))];
        let questions = [Question::Win, Question::Loss];
        loop {
            for (i, &question) in questions.iter().enumerate() {
                if open[i].is_some() {
                    match self.value_known(position, key, question) {
                        Some(Known::Proven(bound)) => return Ok(Some(Settled::Won(question == Question::Win, bound))),
                        Some(_) => open[i] = None,
                        None => {
                            open[i] = Some(self.numbers.get(key, slot(question)).unwrap_or(open[i].unwrap_or((1, 1))))
                        }
                    }
                }
            }
            let (i, threshold) = match open {
                [None, None] => return Ok((!self.met_horizon).then_some(Settled::Drawn)),
                [Some(_), None] => (0, INFINITE),
                [None, Some(_)] => (1, INFINITE),
                [Some(win), Some(loss)] if win.0 <= loss.0 => (0, grow(loss.0)),
                [Some(win), Some(_)] => (1, grow(win.0)),
            };
            let result = self.expand_value(position, key, questions[i], threshold, INFINITE, &mut path)?;
            match (result.proof, result.disproof) {
                (0, _) => return Ok(Some(Settled::Won(questions[i] == Question::Win, result.bound))),
                (_, 0) => open[i] = None,
                numbers => open[i] = Some(numbers),
            }
        }
    }

    /// The answer when the rules or the table settle it.
    fn value_known(&self, position: &Position, key: u128, question: Question) -> Option<Known> {
        if position.can_capture_royal() {
            return Some(if question == Question::Win { Known::Proven(1) } else { Known::Refuted });
        }
        self.value_recorded(key, question)
    }

    /// The answer when the table settles it: for a child of a safe move, whose side to move
    /// cannot take the royal, the only way it is settled without search. A proven result of
    /// either kind settles both questions: a win, however far, excludes every loss.
    fn value_recorded(&self, key: u128, question: Question) -> Option<Known> {
        let known = self.table.get(key);
        let (yes, no) = match question {
            Question::Win => (known.win_within, known.loss_within),
            Question::Loss => (known.loss_within, known.win_within),
        };
        if yes != UNKNOWN {
            Some(Known::Proven(u32::from(yes)))
        } else if no != UNKNOWN {
            Some(Known::Refuted)
        } else {
            None
        }
    }

    /// Records a proof as a fact (a bound the table cannot hold stays unrecorded).
    fn record_value(&mut self, key: u128, question: Question, bound: u32) {
        if bound >= u32::from(UNKNOWN) {
            return;
        }
        let bound = bound as Depth;
        self.record(key, |b| match question {
            Question::Win => b.win_within = b.win_within.min(bound),
            Question::Loss => b.loss_within = b.loss_within.min(bound),
        });
    }

    /// Expands a value node until it is settled or its numbers reach the thresholds.
    fn expand_value(
        &mut self,
        position: &Position,
        key: u128,
        question: Question,
        proof_threshold: u32,
        disproof_threshold: u32,
        path: &mut Path,
    ) -> Result<Expanded, Aborted> {
        self.tick()?;
        if let Some(known) = self.value_known(position, key, question) {
            return Ok(Expanded::of(known));
        }
        // No shortcut by rules and loops here (unlike `dfpn.rs`): see `docs/measurements.md` ("The value
        // questions").
        let child_question = question.next();
        let horizon = path.keys.len() >= MAX_PATH;
        self.met_horizon |= horizon;
        let spare = self.spare_value_children.pop().unwrap_or_default();
        let (mut children, has_unsafe_moves) = self.safe_children(
            position,
            key,
            slot(child_question),
            |mv, position, key| Child { mv, position, key, known: None, numbers: (1, 1) },
            spare,
        );
        for child in &mut children {
            child.known = if horizon || path.contains(child.key) {
                Some(Known::RefutedHere)
            } else {
                self.value_recorded(child.key, child_question)
            };
        }
        // A "loss?" node with a child whose win is refuted whatever the path is refuted the
        // same way, whatever the other children's numbers (and so are the answers).
        let decided_at_once =
            question == Question::Loss && children.iter().any(|child| child.known == Some(Known::Refuted));
        if !decided_at_once {
            // The children's movers' pieces and the guesses' common part, gathered once for all
            // of them (and not at all when one child decides the node).
            let mobility = position.opponent_mobility();
            let guesses = ChildGuesses::new(key);
            for child in children.iter_mut().filter(|child| child.known.is_none()) {
                if self.recorded_numbers(child, child_question) {
                    continue;
                }
                let counts = mobility.counts_in(&child.position);
                let loses = child_question == Question::Loss;
                if counts.legal == 0 || counts.safe == 0 {
                    // No move: lost in 0; no move that keeps the royal: lost in 2.
                    let bound = if counts.legal == 0 { 0 } else { 2 };
                    child.known = Some(if loses { Known::Proven(bound) } else { Known::Refuted });
                } else {
                    let lean = guesses.lean(child.mv, child.key);
                    child.numbers = starting_numbers(child_question, counts.safe as u32, lean, VALUE_UNIT);
                }
            }
        }
        self.nodes += children.len() as u64;
        path.push(key);
        let result = self.settle_value(
            key,
            question,
            &mut children,
            has_unsafe_moves,
            proof_threshold,
            disproof_threshold,
            path,
        );
        path.pop();
        self.spare_value_children.push(children);
        result
    }

    /// The loop of [`Prover::expand_value`] over its children.
    #[allow(clippy::too_many_arguments)]
    fn settle_value(
        &mut self,
        key: u128,
        question: Question,
        children: &mut [Child],
        has_unsafe_moves: bool,
        proof_threshold: u32,
        disproof_threshold: u32,
        path: &mut Path,
    ) -> Result<Expanded, Aborted> {
        let child_question = question.next();
        loop {
            let numbers = children.iter().map(|child| match child.known {
                Some(known) => (Expanded::of(known).numbers(), false),
                None => (child.numbers, true),
            });
            let Step { proof, disproof, next } = step(question, numbers, (proof_threshold, disproof_threshold));
            if proof == 0 {
                let bounds = children.iter().filter_map(|child| match child.known {
                    Some(Known::Proven(bound)) => Some(bound + 1),
                    _ => None,
                });
                let bound = match question {
                    // The quickest proven child.
                    Question::Win => bounds.min().expect("a proven OR node has a proven child"),
                    // The slowest child (every one is proven); a move that exposes the royal
                    // loses in 2, no move at all in 0.
                    Question::Loss => bounds.max().unwrap_or(0).max(if has_unsafe_moves { 2 } else { 0 }),
                };
                self.record_value(key, question, bound);
                return Ok(Expanded { proof: 0, disproof: INFINITE, bound, here: false });
            }
            if disproof == 0 {
                let refuted = |k: Known| matches!(k, Known::Refuted);
                let here = match question {
                    // Every child refuted: the path's own if any child's refutation is.
                    Question::Win => children.iter().any(|c| c.known == Some(Known::RefutedHere)),
                    // One child refuted suffices: the path's own unless one holds anywhere.
                    Question::Loss => !children.iter().any(|c| c.known.is_some_and(refuted)),
                };
                if !here {
                    self.numbers.put(key, slot(question), INFINITE, 0);
                }
                return Ok(Expanded { proof: INFINITE, disproof: 0, bound: 0, here });
            }
            let Some((best, (proof_limit, disproof_limit))) = next else {
                self.numbers.put(key, slot(question), proof, disproof);
                return Ok(Expanded { proof, disproof, bound: 0, here: false });
            };
            let (position, child_key) = (children[best].position, children[best].key);
            let result = self.expand_value(&position, child_key, child_question, proof_limit, disproof_limit, path)?;
            let child = &mut children[best];
            child.numbers = (result.proof, result.disproof);
            child.known = match (result.proof, result.disproof) {
                (0, _) => Some(Known::Proven(result.bound)),
                (_, 0) if result.here => Some(Known::RefutedHere),
                (_, 0) => Some(Known::Refuted),
                _ => None,
            };
        }
    }

    /// Takes `child`'s numbers for `question` from the number table; `false` when it has no
    /// entry. A stored refutation holds whatever the path: only such refutations are stored
    /// (proofs are facts, in the other table).
    fn recorded_numbers(&self, child: &mut Child, question: Question) -> bool {
        let Some(numbers) = self.numbers.get(child.key, slot(question)) else {
            return false;
        };
        child.numbers = numbers;
        if numbers.1 == 0 {
            child.known = Some(Known::Refuted);
        }
        true
    }
}
