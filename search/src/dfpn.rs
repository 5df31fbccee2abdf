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
//!
//! - **The frontier is not searched by numbers**: "win within 3", "loss within 4" and "win
//!   within 5", most of a deep search's nodes, are answered by rules and plain loops
//!   (`wins_in_three`, `loses_in_four`, `wins_in_five`), which stop at the first move that
//!   decides; a win they find is recorded, as `settle_refuted` records one.
//! - **Mobility on both sides**: an unresolved child starts with as many to prove or to
//!   disprove as it has safe moves.
//! - **Thresholds with slack** (the 1 + ε trick, ε = 1): a child is searched until its number
//!   passes twice the second-best sibling's, so that near-equal children are not re-expanded
//!   in turn.
//! - **Refuted for good**: a refutation whose positions are all proven results is recorded as
//!   a proven result too (`settle_refuted`).
//! - **Depth-scaled initial numbers**: both numbers of an unexpanded node are multiplied by one
//!   more than its remaining depth (`initial_numbers`).
//!
//! The runs behind each choice: `docs/measurements.md` ("df-pn: the runs behind the design").

use arrayvec::ArrayVec;
use shogi4_engine::{Move, Position, MAX_MOVES};

use crate::children::DepthChild as Child;
use crate::guess::ChildGuesses;
use crate::numbers::{starting_numbers, step, Question, Step, INFINITE};
use crate::prover::{Aborted, Prover};
use crate::table::{key_of, Depth, MAX_DEPTH, UNKNOWN};

impl Prover<'_> {
    /// Answers the question of `position` within `depth` by df-pn.
    pub(crate) fn prove_by_numbers(
        &mut self,
        position: &Position,
        depth: u32,
        question: Question,
    ) -> Result<bool, Aborted> {
        let key = key_of(position);
        if let Some(answer) = self.known(position, key, depth, question) {
            return Ok(answer);
        }
        match self.expand(position, key, depth, question, INFINITE, INFINITE)? {
            (0, _) => Ok(true),
            (_, 0) => Ok(false),
            // Unresolved: only a number that reached its cap ends a root search so; that is no
            // answer (nothing is claimed), as if the budget had run out.
            _ => Err(Aborted),
        }
    }

    /// The answer when it costs no search: the rules settle it, or the table holds it.
    fn known(&mut self, position: &Position, key: u128, depth: u32, question: Question) -> Option<bool> {
        match question {
            Question::Win => self.win_known(position, key, depth),
            Question::Loss => self.loss_known(position, key, depth),
        }
    }

    /// Expands a node until it is resolved or its numbers reach the thresholds; returns its
    /// numbers (proof 0: the answer is yes; disproof 0: no).
    fn expand(
        &mut self,
        position: &Position,
        key: u128,
        depth: u32,
        question: Question,
        proof_threshold: u32,
        disproof_threshold: u32,
    ) -> Result<(u32, u32), Aborted> {
        self.tick()?;
        // Resolved meanwhile by another path to the same position?
        if let Some(answer) = self.known(position, key, depth, question) {
            return Ok(if answer { (0, INFINITE) } else { (INFINITE, 0) });
        }
        let child_depth = depth - 1;
        let child_question = question.next();
        let shortcut = match question {
            Question::Win if depth < 5 => Some(self.wins_in_three(position)),
            Question::Loss if depth < 6 => Some(self.loses_in_four(position, key)),
            Question::Win if depth < 7 => Some(self.wins_in_five(position, key)),
            _ => None,
        };
        if let Some(yes) = shortcut {
            self.resolve(key, depth, question, yes);
            return Ok(if yes { (0, INFINITE) } else { (INFINITE, 0) });
        }
        let spare = self.spare_depth_children.pop().unwrap_or_default();
        let (mut children, has_unsafe_moves) = self.safe_children(
            position,
            key,
            child_depth,
            |mv, position, key| Child { mv, position, key, known: None, initial: (1, 1) },
            spare,
        );
        for child in &mut children {
            // A safe move's position: its side to move cannot take the royal.
            child.known = match child_question {
                Question::Win => self.win_known_without_capture(child.key, child_depth),
                Question::Loss => self.loss_known_without_capture(&child.position, child.key, child_depth),
            };
        }
        // A child known to decide the node (a proven loss below a "win?" node, a refuted win
        // below a "loss?" node) settles it in the loop below: no need for the others' numbers.
        let decided_at_once = children.iter().any(|child| child.known == Some(question == Question::Win));
        if !decided_at_once {
            // Unresolved children start from their mobility (see `Child::initial`). One with
            // numbers of its own was expanded before, so it has moves, and its starting numbers
            // are needed only if that entry is replaced meanwhile (then it starts from (1, 1)).
            let mobility = position.opponent_mobility();
            let guesses = ChildGuesses::new(key);
            for child in children.iter_mut().filter(|child| child.known.is_none()) {
                if self.numbers.get(child.key, child_depth).is_some() {
                    continue;
                }
                let counts = mobility.counts_in(&child.position);
                child.initial =
                    initial_numbers(child_question, child_depth, counts.safe as u32, guesses.lean(child.mv, child.key));
                if counts.legal == 0 {
                    // No legal move: lost already.
                    child.known = Some(child_question == Question::Loss);
                }
            }
        }
        // Every child was generated and looked up: each counts as a node examined.
        self.nodes += children.len() as u64;
        let result =
            self.settle(key, depth, question, &mut children, has_unsafe_moves, (proof_threshold, disproof_threshold));
        self.spare_depth_children.push(children);
        result
    }

    /// The loop of [`Prover::expand`] over its children.
    fn settle(
        &mut self,
        key: u128,
        depth: u32,
        question: Question,
        children: &mut [Child],
        has_unsafe_moves: bool,
        (proof_threshold, disproof_threshold): (u32, u32),
    ) -> Result<(u32, u32), Aborted> {
        let (child_depth, child_question) = (depth - 1, question.next());
        loop {
            let numbers = children.iter().map(|child| match child.known {
                Some(true) => ((0, INFINITE), false),
                Some(false) => ((INFINITE, 0), false),
                None => (self.numbers.get(child.key, child_depth).unwrap_or(child.initial), true),
            });
            let Step { proof, disproof, next } = step(question, numbers, (proof_threshold, disproof_threshold));
            if proof == 0 || disproof == 0 {
                self.resolve(key, depth, question, proof == 0);
                if disproof == 0 {
                    self.settle_refuted(key, question, children, has_unsafe_moves);
                }
                return Ok((proof, disproof));
            }
            let Some((best, (proof_limit, disproof_limit))) = next else {
                self.numbers.put(key, depth, proof, disproof);
                return Ok((proof, disproof));
            };
            let (child, child_key) = (children[best].position, children[best].key);
            let (p, d) = self.expand(&child, child_key, child_depth, child_question, proof_limit, disproof_limit)?;
            if p == 0 || d == 0 {
                children[best].known = Some(p == 0);
            }
        }
    }

    /// A child (made by `child` from its position and key) for each move of `position` (keyed
    /// by `key`) that keeps the royal safe (the others lose at once), in `children` (emptied
    /// first: a vector whose room an earlier expansion left), and whether there were others.
    /// Their entries in both tables (the number table's at `slot`) are looked up soon after:
    /// all their likely cache misses start now, so that they overlap.
    pub(crate) fn safe_children<C>(
        &self,
        position: &Position,
        key: u128,
        slot: u32,
        child: impl Fn(Move, Position, u128) -> C,
        mut children: Vec<C>,
    ) -> (Vec<C>, bool) {
        let (moves, has_unsafe_moves) = position.safe_moves();
        children.clear();
        children.reserve(moves.len());
        for &mv in moves.iter() {
            let child_key = position.key_after(key, mv);
            self.table.prefetch(child_key);
            self.numbers.prefetch(child_key, slot);
            children.push(child(mv, position.play_unchecked(mv), child_key));
        }
        (children, has_unsafe_moves)
    }

    /// "Win within 3" answered by the rules alone: some move leaves the opponent no move that
    /// keeps its royal safe. The frontier of every deep search is made of these questions, so
    /// they skip what a searched node needs (keys, table lookups, numbers) and stop at the
    /// first such move.
    fn wins_in_three(&mut self, position: &Position) -> bool {
        let exposes = position.exposure_test();
        for &mv in position.legal_moves().iter() {
            if exposes(mv) {
                continue;
            }
            self.nodes += 1;
            // An opponent left unthreatened with a drop to make has a safe move: no need to
            // build the position to see it.
            if !position.threatens_after(mv) && position.opponent_can_drop_after(mv) {
                continue;
            }
            if !position.play_unchecked(mv).has_safe_move() {
                return true;
            }
        }
        false
    }

    /// "Loss within 4" answered the same way: every move that keeps the royal safe allows a
    /// win in 3. Stops at the first move that does not.
    ///
    /// A win of the side to move, found on the way, is recorded as such (as `settle_refuted`
    /// does for searched nodes): it answers every later question about the position, where
    /// "no loss within 4" would be asked again, deeper, at each iteration.
    fn loses_in_four(&mut self, position: &Position, key: u128) -> bool {
        if self.wins_in_three(position) {
            self.record(key, |b| b.win_within = b.win_within.min(3));
            return false;
        }
        let exposes = position.exposure_test();
        for &mv in position.legal_moves().iter() {
            if exposes(mv) {
                continue;
            }
            self.nodes += 1;
            if !self.wins_in_three(&position.play_unchecked(mv)) {
                self.settle_defence(key, position.key_after(key, mv));
                return false;
            }
        }
        true
    }

    /// A defence found to hold off "loss within 4": if its position is a proven loss for the
    /// opponent, the defender's position is a proven win, recorded for good.
    fn settle_defence(&mut self, key: u128, child_key: u128) {
        let loss = self.table.get(child_key).loss_within;
        if u32::from(loss) < MAX_DEPTH {
            self.record(key, |b| b.win_within = b.win_within.min(loss + 1));
        }
    }

    /// "Win within 5": some move leaves the opponent losing within 4. Moves that threaten
    /// the royal are tried first (most such wins start with one); the others after them.
    fn wins_in_five(&mut self, position: &Position, key: u128) -> bool {
        let exposes = position.exposure_test();
        let mut quiet: ArrayVec<Move, MAX_MOVES> = ArrayVec::new();
        for &mv in position.legal_moves().iter() {
            if exposes(mv) {
                continue;
            }
            self.nodes += 1;
            if !position.threatens_after(mv) {
                quiet.push(mv);
            } else if self.loses_in_four(&position.play_unchecked(mv), position.key_after(key, mv)) {
                return true;
            }
        }
        for mv in quiet {
            if self.loses_in_four(&position.play_unchecked(mv), position.key_after(key, mv)) {
                return true;
            }
        }
        false
    }

    /// Records a resolved node as a fact.
    fn resolve(&mut self, key: u128, depth: u32, question: Question, yes: bool) {
        let d = depth as Depth;
        self.record(key, |b| match (question, yes) {
            (Question::Win, true) => b.win_within = b.win_within.min(d),
            (Question::Win, false) => b.no_win_within = b.no_win_within.max(d),
            (Question::Loss, true) => b.loss_within = b.loss_within.min(d),
            (Question::Loss, false) => b.no_loss_within_plus_one = b.no_loss_within_plus_one.max(d + 1),
        });
    }

    /// A node refuted within its depth may be refuted for good: the refutation's positions
    /// have proven results of their own (a win, however far, excludes every loss). Then the
    /// node's own result is proven too, and recorded as such, so that deeper iterations answer
    /// it from the table instead of refuting it again, two plies deeper each time.
    ///
    /// "Win within `d`" refuted: every safe move's position failed to lose; if each of those
    /// positions is a proven win for its mover (and the unsafe moves lose to the royal
    /// capture), the node is a proven loss, within one more than the slowest of those wins.
    /// "Loss within `d`" refuted: some move's position failed to win; if one such position is
    /// a proven loss, the node is a proven win, within one more ply.
    fn settle_refuted(&mut self, key: u128, question: Question, children: &[Child], has_unsafe_moves: bool) {
        match question {
            Question::Win => {
                let mut slowest = u32::from(has_unsafe_moves);
                // Safe moves only: no child's side to move can take the royal at once.
                for child in children {
                    let known = self.table.get(child.key).win_within;
                    if known == UNKNOWN {
                        return;
                    }
                    slowest = slowest.max(u32::from(known));
                }
                if children.is_empty() && !has_unsafe_moves {
                    return;
                }
                // A distance past the deepest the table holds is left unrecorded.
                if slowest < MAX_DEPTH {
                    let loss = (slowest + 1) as Depth;
                    self.record(key, |b| b.loss_within = b.loss_within.min(loss));
                }
            }
            Question::Loss => {
                let quickest = children
                    .iter()
                    .filter(|child| child.known == Some(false))
                    .filter_map(|child| {
                        let known = self.table.get(child.key).loss_within;
                        if known != UNKNOWN {
                            Some(u32::from(known))
                        } else if !child.position.has_safe_move() {
                            // No move, a loss in 0; or every move exposes the royal, in 2.
                            Some(if child.position.has_no_legal_move() { 0 } else { 2 })
                        } else {
                            None
                        }
                    })
                    .min();
                if let Some(loss) = quickest.filter(|&loss| loss < MAX_DEPTH) {
                    let win = (loss + 1) as Depth;
                    self.record(key, |b| b.win_within = b.win_within.min(win));
                }
            }
        }
    }
}

/// The numbers of a node not yet expanded: those of a value node (mobility on the side that
/// must answer every safe move, leaned toward the side the guess favours: see
/// `numbers::starting_numbers`), both scaled by one more than its depth: a node with more
/// plies left below it costs more to settle either way. A subtree whose open nodes lie deeper
/// then looks cheaper than an untouched sibling with as many open moves, so df-pn goes on with
/// the subtree it has started (as deep df-pn does) instead of seesawing between siblings.
fn initial_numbers(question: Question, depth: u32, safe_moves: u32, lean: f32) -> (u32, u32) {
    let scale = depth + 1;
    let (proof, disproof) = starting_numbers(question, safe_moves.max(1), lean, 1);
    (proof.saturating_mul(scale), disproof.saturating_mul(scale))
}
