//! The proof search proper: two depth-bounded questions answered by AND/OR search, and the
//! iterative deepening that turns them into an exact distance to win.
//!
//! Each question is answered by df-pn (`dfpn.rs`) at the root's iterations; the plain
//! depth-first versions here serve the line of best play and are the simple reference. The
//! value questions, at any distance, are `value.rs`'s; `establish` asks both kinds.
//!
//! `wins_within(P, d)`: some move captures the royal (d ≥ 1), or leads to a position that
//! loses within `d − 1`. `loses_within(P, d)`: `P` has no legal move, or every move leads to a
//! position that wins within `d − 1`. Both are monotone in `d` and depend on the position
//! alone, which is what lets the transposition table keep their answers as bounds. Asking
//! them for `d = 1, 2, 3, …` in turn, the first "yes" comes exactly at the distance to win:
//! every shallower question was answered "no".

use std::time::Instant;

use arrayvec::ArrayVec;
use shogi4_engine::{Move, Position, MAX_MOVES};

use crate::numbers::{NumberTable, Question};
use crate::table::{key_of, Bounds, Depth, TranspositionTable, UNKNOWN};
use crate::value::Settled;
use crate::{distance_from, Cancel, Outcome};
use shogi4_tablebase::Value;

/// The deepest distance a search may ask about (the table stores depths in a byte).
pub const MAX_DEPTH: u32 = 250;

/// How often (in nodes) the clock is read.
const CLOCK_INTERVAL: u64 = 1 << 12;

/// How a search splits its budget between iterative deepening (exact distances) and deep
/// questions (proven values with distance bounds); each search follows one (see `Search::with_plan`).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The share of the budget that iterative deepening gets.
    pub deepening: f64,
    /// The deep questions, asked in turn with equal shares of what is left: for each horizon,
    /// "win?" and "loss?" of the side to move.
    pub bounds: Vec<Horizon>,
    /// How often the two questions of a distance are asked in turn, each turn with twice the
    /// budget of the one before.
    pub rounds: u32,
    /// How a proven value's range is narrowed with what is left of the budget.
    pub narrowing: Narrowing,
}

/// How far a deep question looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Horizon {
    /// Within a distance: "win within" the odd one of it and its even neighbour, "loss
    /// within" the even one (df-pn over (position, depth) nodes, `dfpn.rs`).
    Within(u32),
    /// At any distance (df-pn over positions, `value.rs`); the proof's own bound is the
    /// upper bound.
    Unbounded,
}

/// One deep question as [`Prover::establish`] asks it.
#[derive(Clone, Copy, Debug)]
enum Ask {
    /// "Win within" (or "loss within") a distance.
    Within(u32, Question),
    /// "Win or loss?" at any distance, by the question that looks cheaper.
    Either,
}

/// How a proven value's distance range is narrowed after the deep question that proved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrowing {
    /// Two questions just past the lower bound, then bisection: "yes" lowers the upper
    /// bound, "no" raises the lower one (see `Prover::tighten`).
    Bisect,
    /// Deepening from the lower bound (the value's own question only), for the exact
    /// distance of values not far beyond it.
    Deepen,
    /// Not at all: the range as the questions left it.
    Keep,
}

impl Default for Plan {
    /// The split measured best on the reach script's sets (`search/src/lib.rs` has the figures).
    fn default() -> Plan {
        Plan { deepening: 0.05, bounds: vec![Horizon::Unbounded], rounds: 1, narrowing: Narrowing::Bisect }
    }
}

impl Plan {
    /// Deepening alone, for exact distances only: the search before deep questions.
    pub fn exact_only() -> Plan {
        Plan { deepening: 1.0, bounds: Vec::new(), rounds: 0, narrowing: Narrowing::Keep }
    }
}

/// The farthest step past the lower bound that narrowing gallops to before it bisects.
const GALLOP_MAX: u32 = 4;

/// A budget as absolute limits.
#[derive(Clone, Copy, Debug)]
struct Limit {
    max_nodes: u64,
    deadline: Option<Instant>,
}

impl Limit {
    /// Whether a search under this limit stops by itself: a node budget or a deadline.
    fn has_an_end(&self) -> bool {
        self.max_nodes != u64::MAX || self.deadline.is_some()
    }
}

/// A budget as amounts left.
#[derive(Clone, Copy, Debug)]
struct Budget {
    nodes: u64,
    time: Option<std::time::Duration>,
}

/// The budget ran out before a question was answered; nothing half-done is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Aborted;

/// Answers depth-bounded questions within a node and time budget, over a table it borrows.
pub(crate) struct Prover<'t> {
    pub(crate) table: &'t mut TranspositionTable,
    /// Proof and disproof numbers of unresolved nodes (df-pn).
    pub numbers: &'t mut NumberTable,
    /// Nodes (positions) examined so far: every position expanded or generated as a child
    /// and looked up.
    pub nodes: u64,
    max_nodes: u64,
    deadline: Option<Instant>,
    /// Read with the clock: once set, the search ends as if its budget had run out.
    cancel: Option<Cancel>,
    /// The node count at which the clock is next read.
    next_clock: u64,
    /// Children vectors of finished expansions, for the next ones to fill: about one per
    /// level of the deepest path so far, instead of an allocation per expansion (2–9% of a
    /// search's time).
    pub(crate) spare_depth_children: Vec<Vec<crate::dfpn::Child>>,
    pub(crate) spare_value_children: Vec<Vec<crate::value::Child>>,
    /// Whether a value search met its path's horizon since [`Prover::prove_either`] began: a
    /// refutation may then rest on the horizon, which proves nothing.
    pub(crate) met_horizon: bool,
}

impl<'t> Prover<'t> {
    pub fn new(
        table: &'t mut TranspositionTable,
        numbers: &'t mut NumberTable,
        max_nodes: u64,
        deadline: Option<Instant>,
        cancel: Option<Cancel>,
    ) -> Prover<'t> {
        Prover {
            table,
            numbers,
            nodes: 0,
            max_nodes,
            deadline,
            cancel,
            next_clock: CLOCK_INTERVAL,
            spare_depth_children: Vec::new(),
            spare_value_children: Vec::new(),
            met_horizon: false,
        }
    }

    /// Sets a new budget (nodes counted from now on, and a deadline).
    pub fn budget(&mut self, max_nodes: u64, deadline: Option<Instant>) {
        self.max_nodes = self.nodes.saturating_add(max_nodes);
        self.deadline = deadline;
    }

    pub(crate) fn tick(&mut self) -> Result<(), Aborted> {
        self.nodes += 1;
        if self.nodes > self.max_nodes {
            return Err(Aborted);
        }
        // Nodes grow by more than one at a time (children count too): read the clock once the
        // count passes the next mark, not on exact multiples.
        if self.nodes >= self.next_clock {
            self.next_clock = self.nodes + CLOCK_INTERVAL;
            let cancelled = self.cancel.as_ref().is_some_and(Cancel::is_cancelled);
            if cancelled || self.deadline.is_some_and(|d| Instant::now() >= d) {
                // Stay aborted: the node count is pinned past the limit.
                self.max_nodes = self.nodes - 1;
                return Err(Aborted);
            }
        }
        Ok(())
    }

    pub(crate) fn record(&mut self, key: u128, update: impl FnOnce(&mut Bounds)) {
        // Read again: the subtree may have stored facts about this very position (a cycle).
        let mut bounds = self.table.get(key);
        update(&mut bounds);
        self.table.put(key, bounds);
    }

    /// "Win within `d`" when the rules or the table settle it without search.
    pub(crate) fn win_known(&mut self, position: &Position, key: u128, d: u32) -> Option<bool> {
        if position.can_capture_royal() {
            return Some(true);
        }
        self.win_known_without_capture(key, d)
    }

    /// [`Prover::win_known`] of a position whose side to move cannot take the royal (a safe
    /// move's position: the move kept the royal safe), which the test of that would only find
    /// again.
    pub(crate) fn win_known_without_capture(&mut self, key: u128, d: u32) -> Option<bool> {
        let d = if d.is_multiple_of(2) { d.saturating_sub(1) } else { d };
        if d < 3 {
            return Some(false);
        }
        let known = self.table.get(key);
        if u32::from(known.win_within) <= d {
            return Some(true);
        }
        // A proven loss, at any distance, excludes every win: played against each other, the
        // two forcing strategies would each end the game first.
        if u32::from(known.no_win_within) >= d || known.loss_within != UNKNOWN {
            return Some(false);
        }
        None
    }

    /// "Loss within `d`" when the rules or the table settle it without search (within 0: no
    /// legal move; within 2: no move that keeps the royal safe).
    pub(crate) fn loss_known(&mut self, position: &Position, key: u128, d: u32) -> Option<bool> {
        if position.can_capture_royal() {
            return Some(false);
        }
        self.loss_known_without_capture(position, key, d)
    }

    /// [`Prover::loss_known`] of a position whose side to move cannot take the royal (see
    /// [`Prover::win_known_without_capture`]).
    pub(crate) fn loss_known_without_capture(&mut self, position: &Position, key: u128, d: u32) -> Option<bool> {
        let d = if d % 2 == 1 { d - 1 } else { d };
        if d < 4 {
            return Some(if d == 2 { !position.has_safe_move() } else { position.has_no_legal_move() });
        }
        let known = self.table.get(key);
        if u32::from(known.loss_within) <= d {
            return Some(true);
        }
        // A proven win excludes every loss (see `win_known`).
        if u32::from(known.no_loss_within_plus_one) > d || known.win_within != UNKNOWN {
            return Some(false);
        }
        // A position without a legal move is left to the caller, which counts or lists the
        // moves anyway (and finds none: a loss in 0).
        None
    }

    /// Whether the side to move can force the royal capture within `d` plies.
    pub fn wins_within(&mut self, position: &Position, d: u32) -> Result<bool, Aborted> {
        let key = key_of(position);
        if let Some(answer) = self.win_known(position, key, d) {
            return Ok(answer);
        }
        // Wins have odd distances; past `win_known`, `d` is at least 3.
        let d = if d.is_multiple_of(2) { d - 1 } else { d };
        let known = self.table.get(key);
        self.tick()?;
        let moves = position.legal_moves();
        // Candidates: moves that do not hand the opponent a royal capture, best guesses first:
        // the last winning move, then moves that threaten the royal, then captures.
        let mut candidates: ArrayVec<(u32, u8, Position), MAX_MOVES> = ArrayVec::new();
        let exposes = position.exposure_test();
        for (i, &mv) in moves.iter().enumerate() {
            if exposes(mv) {
                continue;
            }
            let child = position.play_unchecked(mv);
            let score = u32::from(i == usize::from(known.hint)) * 4
                + u32::from(child.threatens_royal()) * 2
                + u32::from(position.is_capture(mv));
            candidates.push((score, i as u8, child));
        }
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        for (_, i, child) in &candidates {
            if self.loses_within(child, d - 1)? {
                self.record(key, |b| {
                    b.win_within = b.win_within.min(d as Depth);
                    b.hint = *i;
                });
                return Ok(true);
            }
        }
        self.record(key, |b| b.no_win_within = b.no_win_within.max(d as Depth));
        Ok(false)
    }

    /// Whether the opponent can force the capture of the side to move's royal within `d`
    /// plies (or the side to move has no legal move).
    pub fn loses_within(&mut self, position: &Position, d: u32) -> Result<bool, Aborted> {
        let key = key_of(position);
        if let Some(answer) = self.loss_known(position, key, d) {
            return Ok(answer);
        }
        // Losses have even distances; past `loss_known`, `d` is at least 4.
        let d = if d % 2 == 1 { d - 1 } else { d };
        let moves = position.legal_moves();
        let exposing = position.exposure_test();
        let known = self.table.get(key);
        self.tick()?;
        // Moves that expose the royal lose in 2 whatever happens; the others must each be
        // answered by a win within d − 1. Try the defence that held last time first.
        let mut defences: ArrayVec<(u32, u8, Move), MAX_MOVES> = ArrayVec::new();
        for (i, &mv) in moves.iter().enumerate() {
            if !exposing(mv) {
                let score = u32::from(i == usize::from(known.hint)) * 2 + u32::from(position.is_capture(mv));
                defences.push((score, i as u8, mv));
            }
        }
        defences.sort_by_key(|c| std::cmp::Reverse(c.0));
        for &(_, i, mv) in &defences {
            if !self.wins_within(&position.play_unchecked(mv), d - 1)? {
                self.record(key, |b| {
                    b.no_loss_within_plus_one = b.no_loss_within_plus_one.max(d as Depth + 1);
                    b.hint = i;
                });
                return Ok(false);
            }
        }
        self.record(key, |b| b.loss_within = b.loss_within.min(d as Depth));
        Ok(true)
    }

    /// The budget in force, as absolute limits.
    fn limit(&self) -> Limit {
        Limit { max_nodes: self.max_nodes, deadline: self.deadline }
    }

    /// What is left of `limit` now.
    fn left_of(&self, limit: Limit) -> Budget {
        Budget {
            nodes: limit.max_nodes.saturating_sub(self.nodes),
            time: limit.deadline.map(|d| d.saturating_duration_since(Instant::now())),
        }
    }

    /// Sets the budget to `share` of `budget`, counted from now.
    fn spend(&mut self, budget: Budget, share: f64) {
        let nodes = (budget.nodes as f64 * share) as u64;
        self.budget(nodes, budget.time.map(|t| Instant::now() + t.mul_f64(share)));
    }

    /// What the search can establish about `position` within the budget, and within
    /// `max_depth` plies: the exact distance when iterative deepening reaches it, else a
    /// proven value with distance bounds when one of the deep questions is answered "yes", or
    /// a draw when the value questions refute both results (see `value.rs`), else the depth to
    /// which neither side has a forced result.
    ///
    /// The budget is split by `plan`: deepening first, for the exact distance of the
    /// near results; then the plan's deep questions (depth-bounded, "win within `D`" and
    /// "loss within `D − 1`", or at any distance), each with an equal share of what is left;
    /// then, if a value was proven, its range narrowed as the plan's [`Narrowing`] says, with
    /// whatever remains. The budget in force when it was called is in force again when it
    /// returns.
    pub fn establish(&mut self, position: &Position, max_depth: u32, plan: &Plan) -> Outcome {
        let max_depth = max_depth.min(MAX_DEPTH);
        let whole = self.limit();
        self.spend(self.left_of(whole), plan.deepening);
        let (found, established) = self.deepen(position, max_depth);
        let outcome = match found {
            Some(dtw) => Outcome::Proven(Value::from_dtw(dtw)),
            None => self.ask_deep(position, max_depth, established, whole, plan),
        };
        self.max_nodes = whole.max_nodes;
        self.deadline = whole.deadline;
        outcome
    }

    /// The deep questions of [`Prover::establish`], past the depth `established` that
    /// deepening completed.
    fn ask_deep(
        &mut self,
        position: &Position,
        max_depth: u32,
        established: u32,
        whole: Limit,
        plan: &Plan,
    ) -> Outcome {
        // Questions are placed relative to the deepest allowed distance, so that a move's
        // search (one ply shallower) asks its position exactly what its parent's question
        // asked of it, and finds the parent's proof in the table.
        let shift = MAX_DEPTH - max_depth;
        let mut questions: Vec<(Ask, f64)> = Vec::new();
        for horizon in &plan.bounds {
            // The questions in turn, each turn with twice the budget of the one before:
            // df-pn resumes from the numbers it left in its table, so a question asked again
            // goes on where it stopped, and the side that is easier to prove is found early.
            for round in 0..plan.rounds {
                let weight = f64::from(1u32 << round);
                match *horizon {
                    // Both questions under one root, with the weight of two. Asked even when
                    // deepening has covered every distance asked about, if the budget has an end:
                    // a proof could not be used then (its bound lies past `max_depth`), but a draw
                    // can, and such a position is where draws are. Skipping them made a larger
                    // budget answer less: a position drawn within 300 ms was unknown within 1 s,
                    // its deepening having reached the deepest distance first. Without a budget
                    // the question is not asked then, since it may have no end.
                    Horizon::Unbounded if established < max_depth || whole.has_an_end() => {
                        questions.push((Ask::Either, 2.0 * weight))
                    }
                    Horizon::Unbounded => {}
                    Horizon::Within(bound) => {
                        let Some(bound) = bound.checked_sub(shift) else { continue };
                        // Wins at odd depths, losses at even ones.
                        let (win, loss) = if bound % 2 == 1 { (bound, bound - 1) } else { (bound - 1, bound) };
                        for (depth, question) in [(win, Question::Win), (loss, Question::Loss)] {
                            if depth > established && depth <= max_depth {
                                questions.push((Ask::Within(depth, question), weight));
                            }
                        }
                    }
                }
            }
        }
        // What the questions refute: no win within `no_win`, no loss within `no_loss`.
        let (mut no_win, mut no_loss) = (established, established);
        for asked in 0..questions.len() {
            let (ask, weight) = questions[asked];
            if let Ask::Within(depth, question) = ask {
                if depth <= if question == Question::Win { no_win } else { no_loss } {
                    continue;
                }
            }
            let weights: f64 = questions[asked..].iter().map(|q| q.1).sum();
            self.spend(self.left_of(whole), weight / weights);
            let answer = match ask {
                Ask::Within(depth, question) => {
                    self.prove_by_numbers(position, depth, question).map(|yes| yes.then_some((question, depth)))
                }
                Ask::Either => match self.prove_either(position) {
                    Ok(Some(Settled::Drawn)) => return Outcome::Proven(Value::Draw),
                    Ok(Some(Settled::Won(win, b))) => Ok(Some((if win { Question::Win } else { Question::Loss }, b))),
                    Ok(None) => Ok(None),
                    Err(e) => Err(e),
                },
            };
            match answer {
                // A proof whose bound lies past the deepest distance asked about is not used:
                // every answer stays within `max_depth`.
                Ok(Some((question, within))) if within <= max_depth => {
                    self.spend(self.left_of(whole), 1.0);
                    let win = question == Question::Win;
                    let at_least = if win { no_win + 1 } else { no_loss + 1 };
                    return match plan.narrowing {
                        Narrowing::Bisect => self.tighten(position, win, at_least, within),
                        Narrowing::Deepen => self.deepen_within(position, win, at_least, within),
                        Narrowing::Keep => Outcome::won(win, at_least, within),
                    };
                }
                Ok(None) => match ask {
                    Ask::Within(depth, Question::Win) => no_win = no_win.max(depth),
                    Ask::Within(depth, Question::Loss) => no_loss = no_loss.max(depth),
                    // Both refuted, but a line met the horizon: nothing for sure (see `value.rs`).
                    Ask::Either => {}
                },
                Ok(Some(_)) | Err(Aborted) => {}
            }
        }
        Outcome::Unknown { no_result_within: no_win.min(no_loss) }
    }

    /// A proven value whose distance lies in `at_least..=at_most`, the lower bound raised by
    /// iterative deepening (the value's own question only) while the budget lasts.
    fn deepen_within(&mut self, position: &Position, win: bool, at_least: u32, at_most: u32) -> Outcome {
        let mut at_least = distance_from(at_least, win);
        let question = if win { Question::Win } else { Question::Loss };
        while at_least < at_most {
            match self.prove_by_numbers(position, at_least, question) {
                Ok(true) => return Outcome::won(win, at_least, at_least),
                Ok(false) => at_least += 2,
                Err(Aborted) => break,
            }
        }
        Outcome::won(win, at_least, at_most)
    }

    /// A proven value whose distance lies in `at_least..=at_most`, the range narrowed while
    /// the budget lasts by questions that gallop up from the lower bound (at it, then 2 and
    /// 4 plies past each refuted one, at most [`GALLOP_MAX`]) and then bisect: "yes" lowers
    /// the upper bound, "no" raises the lower one. Most distances lie just past what
    /// deepening refuted, and galloping finds those in a few questions; a far one still takes
    /// only a logarithmic number.
    fn tighten(&mut self, position: &Position, win: bool, at_least: u32, mut at_most: u32) -> Outcome {
        let parity = u32::from(win);
        let mut at_least = distance_from(at_least, win);
        let question = if win { Question::Win } else { Question::Loss };
        // While galloping: how far past the lower bound the next question is (even, so the
        // parity holds); `None` once bisecting.
        let mut gallop = Some(0);
        while at_least < at_most {
            let probe = match gallop {
                Some(offset) if at_least + offset < at_most => at_least + offset,
                _ => {
                    gallop = None;
                    // The midpoint, rounded down to the value's parity (and below `at_most`).
                    let middle = at_least + (at_most - at_least) / 2;
                    if middle % 2 != parity {
                        middle - 1
                    } else {
                        middle
                    }
                }
            };
            match self.prove_by_numbers(position, probe, question) {
                Ok(true) => {
                    at_most = probe;
                    gallop = None;
                }
                Ok(false) => {
                    at_least = probe + 2;
                    gallop = gallop.map(|offset: u32| (offset * 2).max(2)).filter(|&offset| offset <= GALLOP_MAX);
                }
                Err(Aborted) => break,
            }
        }
        Outcome::won(win, at_least, at_most)
    }

    /// The smallest `d` for which "win within `d`" is known without search (the rules or
    /// the table).
    pub(crate) fn proven_win_within(&self, position: &Position) -> Option<u32> {
        if position.can_capture_royal() {
            return Some(1);
        }
        let known = self.table.get(key_of(position)).win_within;
        (known != UNKNOWN).then_some(u32::from(known))
    }

    /// The smallest `d` for which "loss within `d`" is known without search.
    pub(crate) fn proven_loss_within(&self, position: &Position) -> Option<u32> {
        if position.can_capture_royal() {
            return None;
        }
        if !position.has_safe_move() {
            return Some(if position.has_no_legal_move() { 0 } else { 2 });
        }
        let known = self.table.get(key_of(position)).loss_within;
        (known != UNKNOWN).then_some(u32::from(known))
    }

    /// A move of `position`, proven to win within `within` plies, that leads to a position
    /// proven lost within fewer: the one the table knows to lose quickest, else the first
    /// that df-pn proves (moves that threaten the royal first). `None` when the budget runs
    /// out first (or the win was not proven after all).
    pub(crate) fn winning_move(&mut self, position: &Position, within: u32) -> Option<(Move, Position, u32)> {
        let exposes = position.exposure_test();
        let mut candidates: ArrayVec<(Move, Position), MAX_MOVES> = ArrayVec::new();
        for &mv in position.legal_moves().iter() {
            if !exposes(mv) {
                candidates.push((mv, position.play_unchecked(mv)));
            }
        }
        let known = candidates
            .iter()
            .filter_map(|&(mv, child)| Some((mv, child, self.proven_loss_within(&child)?)))
            .filter(|&(_, _, after)| after < within)
            .min_by_key(|&(_, _, after)| after);
        if known.is_some() {
            return known;
        }
        candidates.sort_by_key(|(_, child)| std::cmp::Reverse(child.threatens_royal()));
        for (mv, child) in candidates {
            if self.prove_by_numbers(&child, within - 1, Question::Loss).ok()? {
                let after = self.proven_loss_within(&child).unwrap_or(within - 1).min(within - 1);
                return Some((mv, child, after));
            }
        }
        None
    }

    /// Iterative deepening up to `max_depth`: `Ok(Some(d))` when the first result comes at
    /// depth `d` (the exact distance to win), `Ok(None)` when there is none within
    /// `max_depth`, and the last depth completed with no result when the budget runs out.
    pub fn deepen(&mut self, position: &Position, max_depth: u32) -> (Option<u32>, u32) {
        if position.can_capture_royal() {
            return (Some(1), 1);
        }
        if position.has_no_legal_move() {
            return (Some(0), 0);
        }
        // Neither a win in 1 nor a loss in 0.
        let mut established = 1;
        for d in 2..=max_depth.min(MAX_DEPTH) {
            // Each question by df-pn: measured on 300 real-game positions at 1 s, it proves a
            // little more than the plain search in move order (56.3% against 55.3%) and
            // reaches longer proofs (19 plies against 16).
            let question = if d % 2 == 1 { Question::Win } else { Question::Loss };
            let found = self.prove_by_numbers(position, d, question);
            match found {
                Ok(true) => return (Some(d), d),
                Ok(false) => established = d,
                Err(Aborted) => break,
            }
        }
        (None, established)
    }
}

// Every depth a search asks about is below the table's "not established" marker.
const _: () = assert!(UNKNOWN as u32 > MAX_DEPTH);
