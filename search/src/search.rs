//! The searcher: [`Search`] owns a transposition table and answers for a position
//! ([`Search::prove`]), a position and each of its moves ([`Search::analyse`]), a line
//! ([`Search::mainline`]) or a certificate ([`Search::certify`]), building on what a
//! [`Recall`] knows.

use std::time::{Duration, Instant};

use shogi4_certificate::Certificate;
use shogi4_engine::Position;
use shogi4_tablebase::{MoveFlags, Value};

use crate::deepening::Plan;
use crate::limits::{Cancel, Limits};
use crate::line::{exact_line, forced_line, Line};
use crate::numbers::NumberTable;
use crate::outcome::Outcome;
use crate::prover::Prover;
use crate::spell::{certify_loser, certify_winner};
use crate::table::TranspositionTable;

/// The answer for one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// What was established.
    pub outcome: Outcome,
    /// Nodes (positions examined).
    pub nodes: u64,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

/// One legal move and what the search established about it, for the player making it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    /// The move.
    pub mv: shogi4_engine::Move,
    /// The position after it; `None` when it captures the royal.
    pub result: Option<Position>,
    /// Its outcome for the player making it.
    pub outcome: Outcome,
    /// What kind of move it is.
    pub flags: MoveFlags,
}

/// The answer for a position and each of its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The position's outcome for its side to move.
    pub outcome: Outcome,
    /// Every legal move, best first: proven wins by shortest distance, unknown, draws, proven
    /// losses by longest distance; ties in move-generation order.
    pub moves: Vec<MoveOutcome>,
    /// Nodes (positions examined), position and moves together.
    pub nodes: u64,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

impl Analysis {
    /// What the analysis established that is worth keeping, by position key: the position's
    /// outcome and each move's position's (for that position's own side to move). The one
    /// rule of what a store records after a search; an unknown result shallower than
    /// [`MIN_RECORDED_DEPTH`] is left out, since a small share of a budget finds it again in
    /// milliseconds.
    pub fn facts(&self, position: &Position) -> Vec<(u128, Outcome)> {
        let mut facts = vec![(position.key(), self.outcome)];
        facts.extend(self.moves.iter().filter_map(|m| Some((m.result?.key(), m.outcome.after_move()))));
        facts.retain(|(_, outcome)| !matches!(outcome, Outcome::Unknown { no_result_within } if *no_result_within < MIN_RECORDED_DEPTH));
        facts
    }
}

/// The shallowest unknown result [`Analysis::facts`] keeps.
pub const MIN_RECORDED_DEPTH: u32 = 12;

/// What is known of positions outside a searcher's own table: a proof store, published
/// certificates. A search recalls it for its position and the moves' positions before it
/// starts, and builds on it.
///
/// Only those, not everything a store holds: the whole store taken in first proved hardly more
/// (`docs/measurements.md`, "Figures once kept in doc comments").
pub trait Recall {
    /// What is known of each of `positions`, in order (`None`: nothing). A source that
    /// cannot be read is, to the search, one that knows nothing; it reports its failure
    /// its own way.
    fn recall(&self, positions: &[Position]) -> Vec<Option<Outcome>>;
}

/// Nothing known beyond the search itself.
impl Recall for () {
    fn recall(&self, positions: &[Position]) -> Vec<Option<Outcome>> {
        vec![None; positions.len()]
    }
}

/// A proof searcher and the transposition table it owns (and keeps between searches: what
/// it stores is true of the positions alone, so every later search profits).
pub struct Search {
    table: TranspositionTable,
    numbers: NumberTable,
    pub(crate) plan: Plan,
    cancel: Option<Cancel>,
}

impl Search {
    /// A searcher whose table holds about `table_bytes` bytes, allocated now and never more.
    pub fn new(table_bytes: usize) -> Search {
        // Half for the facts, half for the proof numbers of unresolved positions.
        Search {
            table: TranspositionTable::with_bytes(table_bytes / 2),
            numbers: NumberTable::with_bytes(table_bytes / 2),
            plan: Plan::default(),
            cancel: None,
        }
    }

    /// Makes the searches from now on end once `cancel` is set (or never, for `None`).
    pub fn watch(&mut self, cancel: Option<Cancel>) {
        self.cancel = cancel;
    }

    /// A prover over this searcher's tables, within `max_nodes` and until `deadline`, and
    /// the plan it follows.
    pub(crate) fn prover(&mut self, max_nodes: u64, deadline: Option<Instant>) -> (Prover<'_>, &Plan) {
        let prover = Prover::new(&mut self.table, &mut self.numbers, max_nodes, deadline, self.cancel.clone());
        (prover, &self.plan)
    }

    /// The same searcher, splitting its budgets by `plan` instead of the default.
    pub fn with_plan(mut self, plan: Plan) -> Search {
        self.plan = plan;
        self
    }

    /// The memory its tables hold.
    pub fn table_bytes(&self) -> usize {
        self.table.bytes() + self.numbers.bytes()
    }

    /// Forgets everything the tables hold.
    pub fn clear(&mut self) {
        self.table.clear();
        self.numbers.clear();
    }

    /// Takes in what is already known of the position with this key (from an earlier search,
    /// kept in a proof store), so that searches through it need not establish it again.
    pub fn remember(&mut self, key: u128, outcome: Outcome) {
        self.table.remember(key, outcome);
    }

    /// Takes in what `known` holds of `position` and of its moves' positions; returns what
    /// it held of `position` itself.
    pub fn recall(&mut self, position: &Position, known: &dyn Recall) -> Option<Outcome> {
        self.recall_all(position, known).into_iter().next().and_then(|(_, outcome)| outcome)
    }

    /// [`Search::recall`], returning what `known` held of each position: the position first,
    /// then its moves' positions.
    fn recall_all(&mut self, position: &Position, known: &dyn Recall) -> Vec<(Position, Option<Outcome>)> {
        let mut positions = vec![*position];
        positions.extend(position.successors().map(|(_, child)| child));
        let recalled = known.recall(&positions);
        for (position, outcome) in positions.iter().zip(&recalled) {
            if let Some(outcome) = outcome {
                self.remember(position.key(), *outcome);
            }
        }
        positions.into_iter().zip(recalled).collect()
    }

    /// [`Search::analyse`] after recalling what `known` holds (see [`Search::recall`]). The
    /// answer says at least what was known to be proven of the position; the second value
    /// is what `known` held of it.
    pub fn analyse_recalling(
        &mut self,
        position: &Position,
        limits: &Limits,
        known: &dyn Recall,
    ) -> (Analysis, Option<Outcome>) {
        let recalled = self.recall_all(position, known);
        let before = recalled.first().and_then(|&(_, outcome)| outcome);
        let mut analysis = self.analyse(position, limits);
        // The table may have let a recalled value go under pressure, or been unable to hold it
        // (a distance bound past its deepest): the position's and each move's proven values
        // are merged back in, so that a proven position shows the moves that prove it.
        if let Some(proven) = before.filter(|o| o.is_settled()) {
            analysis.outcome = analysis.outcome.merge(proven);
        }
        for m in &mut analysis.moves {
            let Some(child) = m.result else { continue };
            let known = recalled.iter().find(|(p, _)| p.key() == child.key()).and_then(|&(_, o)| o);
            if let Some(proven) = known.filter(|o| o.is_settled()) {
                m.outcome = m.outcome.merge(proven.for_mover());
            }
        }
        // Best first again, ties in move-generation order, as `analyse` gives them.
        let legal = position.legal_moves();
        let order = |mv| legal.iter().position(|&m| m == mv);
        analysis.moves.sort_by_key(|m| (std::cmp::Reverse(m.outcome.rank()), order(m.mv)));
        (analysis, before)
    }

    /// [`Search::mainline`] after recalling what `known` holds; the second value is what it
    /// held of the position.
    pub fn mainline_recalling(
        &mut self,
        position: &Position,
        limits: &Limits,
        known: &dyn Recall,
    ) -> (Line, Option<Outcome>) {
        let before = self.recall(position, known);
        (self.mainline(position, limits), before)
    }

    /// The outcome of `position` within `limits`.
    pub fn prove(&mut self, position: &Position, limits: &Limits) -> Report {
        let started = Instant::now();
        let (mut prover, plan) = self.prover(limits.max_nodes, limits.time.map(|t| started + t));
        let outcome = prover.establish(position, limits.max_depth, plan);
        Report { outcome, nodes: prover.nodes, elapsed: started.elapsed() }
    }

    /// The outcome of `position` and of each of its moves, within `limits` for them all:
    /// the position gets up to half the budget, the moves share what is left.
    pub fn analyse(&mut self, position: &Position, limits: &Limits) -> Analysis {
        let started = Instant::now();
        let deadline = limits.time.map(|t| started + t);
        let half = limits.time.map(|t| started + t / 2);
        let (mut prover, plan) = self.prover(limits.max_nodes / 2, half);
        let outcome = prover.establish(position, limits.max_depth, plan);
        let legal = position.legal_moves();
        let mut moves = Vec::with_capacity(legal.len());
        let mut left = legal.iter().filter(|&&mv| !position.captures_royal(mv)).count() as u64;
        for &mv in legal.iter() {
            let flags = MoveFlags::of(position, mv);
            if flags.royal_capture {
                moves.push(MoveOutcome { mv, result: None, outcome: Outcome::Proven(Value::Win(1)), flags });
                continue;
            }
            // Each remaining move gets an equal share of the nodes and time left.
            let nodes_left = limits.max_nodes.saturating_sub(prover.nodes);
            let share = deadline.map(|d| {
                let now = Instant::now();
                now + d.saturating_duration_since(now) / left as u32
            });
            prover.budget(nodes_left / left, share);
            left -= 1;
            let child = position.play_unchecked(mv);
            // The child is one ply further from any result the position has.
            let child_depth = limits.max_depth.saturating_sub(1).max(1);
            let outcome = prover.establish(&child, child_depth, plan).for_mover();
            moves.push(MoveOutcome { mv, result: Some(child), outcome, flags });
        }
        moves.sort_by_key(|m| std::cmp::Reverse(m.outcome.rank()));
        // The moves may have proven more than the position's own search (a winning move found
        // among them, or every move lost): back-propagated, without search.
        let outcome = Outcome::from_moves(moves.iter().map(|m| m.outcome)).map_or(outcome, |m| outcome.merge(m));
        Analysis { outcome, moves, nodes: prover.nodes, elapsed: started.elapsed() }
    }

    /// What the search establishes about a position within `limits`, and the line that
    /// proves it: for an exact value the line of best play (the winner keeps the shortest
    /// win, the loser the longest defence); for a bounded value a forced winning line (each
    /// winning move keeps a proven win within a smaller bound), not necessarily the
    /// shortest. A line that cannot be completed within the budget is not given: the answer
    /// then falls back to what holds without it, "no result within" the depth refuted.
    pub fn mainline(&mut self, position: &Position, limits: &Limits) -> Line {
        let started = Instant::now();
        let (mut prover, plan) = self.prover(limits.max_nodes, limits.time.map(|t| started + t));
        let outcome = prover.establish(position, limits.max_depth, plan);
        let steps = match outcome {
            // A draw has no line to show: nothing ends it.
            Outcome::Proven(Value::Draw) => Some(Vec::new()),
            Outcome::Proven(value) => value.dtw().and_then(|dtw| exact_line(&mut prover, position, dtw)),
            Outcome::Bounded { win, at_most, .. } => forced_line(&mut prover, position, win, at_most),
            Outcome::Unknown { .. } => Some(Vec::new()),
        };
        let (outcome, steps) = match steps {
            Some(steps) => (outcome, steps),
            None => {
                let refuted = outcome.distance_bounds().map_or(0, |(at_least, _)| at_least.saturating_sub(1));
                (Outcome::Unknown { no_result_within: refuted }, Vec::new())
            }
        };
        Line { outcome, steps, nodes: prover.nodes, elapsed: started.elapsed() }
    }
}

impl Search {
    /// A certificate of `position`'s value ([`shogi4_certificate`]), when the search proves
    /// one within `limits` and can then spell out the whole proof within the same budget: at
    /// each of the winner's positions a move whose position is a proven loss within fewer
    /// plies, and below it every reply of the loser. `None` otherwise (nothing proven, or the
    /// budget ran out while the tree was written).
    pub fn certify(&mut self, position: &Position, limits: &Limits) -> Option<Certificate> {
        let started = Instant::now();
        let (mut prover, plan) = self.prover(limits.max_nodes, limits.time.map(|t| started + t));
        let outcome = prover.establish(position, limits.max_depth, plan);
        let (win, (_, at_most)) = (outcome.proven_win()?, outcome.distance_bounds()?);
        let mut certificate = Certificate::new(*position, win);
        if win {
            certify_winner(&mut prover, position, at_most, &mut certificate)?;
        } else {
            certify_loser(&mut prover, position, at_most, &mut certificate)?;
        }
        Some(certificate.reachable_only())
    }
}
