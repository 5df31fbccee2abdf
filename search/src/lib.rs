//! Proof search for Shogi4 positions that no table holds, above all the real game.
//!
//! An answer is **proven**, a win or loss with the exact distance to win (exact because every
//! shallower depth was searched to completion); or **bounded**, a win or loss proven by a
//! question without a depth ("does the side to move win, however far?"), its distance known
//! to lie in a range; or a **draw**, proven when both value questions are refuted by lines
//! that each end in the questioner's proven defeat or in a repetition (`value.rs`); or
//! **unknown** with the depth `D` up to which neither side has a forced result: a true
//! statement too (the position's distance is larger than `D`, or it is a draw).
//!
//! Why the value questions: the exact distance needs every shorter distance refuted first,
//! and in iterative deepening those refutations cost most of the search, while a player needs
//! the value first. How a budget is split between the two is a [`Plan`]: by default 5% for
//! deepening and the rest for the value questions, and a proven range is narrowed by two
//! questions just past its lower bound, then bisection ([`Narrowing`]). Both were chosen by
//! measuring reach on the committed sets (`scripts/search-reach.sh`); the runs, what else was
//! tried, and where a node's time goes are in `docs/measurements.md` ("The search's budget
//! split and the cost of a node").
//!
//! ```
//! use shogi4_engine::Position;
//! use shogi4_search::{Limits, Outcome, Search};
//! use shogi4_tablebase::Value;
//!
//! let mut search = Search::new(1 << 20);
//! // The first player's carp threatens nothing yet, but a drop wins in 3.
//! let position = Position::parse("k3/4/1K2/4 b C 1").unwrap();
//! let report = search.prove(&position, &Limits::nodes(100_000));
//! assert_eq!(report.outcome, Outcome::Proven(Value::Win(3)));
//! ```

pub mod assemble;
pub mod best_first;
mod dfpn;
pub mod guess;
mod numbers;
mod prover;
pub mod steered;
mod table;
mod value;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shogi4_certificate::{Certificate, Entry};
use shogi4_engine::Position;
use shogi4_tablebase::{MainlineStep, MoveFlags, Value};

use prover::Prover;
pub use prover::{Horizon, Narrowing, Plan, MAX_DEPTH};
pub use table::TranspositionTable;

/// The node budget a served search gets unless configured otherwise: several seconds of search
/// on one core (nodes are positions examined; the README gives the current speed), so the time
/// budget normally ends a search first and the node budget bounds what it may cost.
pub const DEFAULT_MAX_NODES: u64 = 60_000_000;

/// The transposition table a searcher gets unless configured otherwise, in MiB (the server's
/// `--search-table-mb`, the CLI's `--table-mb`).
pub const DEFAULT_TABLE_MB: usize = 64;

/// The time budget of a search answering a query unless configured otherwise, in
/// milliseconds (the server's `--search-ms`, and the CLI's, which answers as the server does).
pub const DEFAULT_QUERY_MS: u64 = 300;

/// What a search establishes about a position, for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A win or loss with its exact distance to win, or a draw (neither side can force the
    /// royal capture, at any distance).
    Proven(Value),
    /// A win or loss, proven, whose distance to win is only known to lie in a range: every
    /// distance below `at_least` was refuted, and a forced result within `at_most` was
    /// proven. Both bounds have the parity of the value (odd for a win, even for a loss), and
    /// `at_least < at_most` (equal bounds are an exact [`Outcome::Proven`]).
    Bounded {
        /// Whether the side to move wins (else it loses).
        win: bool,
        /// The distance is at least this.
        at_least: u32,
        /// The distance is at most this.
        at_most: u32,
    },
    /// Neither side can force the royal capture within this many plies (the distance is
    /// larger, or the position is a draw).
    Unknown {
        /// The depth searched to completion.
        no_result_within: u32,
    },
}

impl Outcome {
    /// A proven win (or loss) with its distance between the two bounds, rounded to the value's
    /// parity; exact when they meet.
    pub fn won(win: bool, at_least: u32, at_most: u32) -> Outcome {
        let at_least = distance_from(at_least, win);
        debug_assert_eq!(at_most % 2, u32::from(win), "an upper bound of the value's parity");
        if at_least >= at_most {
            Outcome::Proven(Value::from_dtw(at_most))
        } else {
            Outcome::Bounded { win, at_least, at_most }
        }
    }

    /// Whether the side to move is proven to win (`Some(true)`) or to lose (`Some(false)`),
    /// exactly or within bounds; `None` when nothing is proven, or a draw.
    pub fn proven_win(self) -> Option<bool> {
        match self {
            Outcome::Proven(Value::Win(_)) => Some(true),
            Outcome::Proven(Value::Loss(_)) => Some(false),
            Outcome::Bounded { win, .. } => Some(win),
            Outcome::Proven(Value::Draw) | Outcome::Unknown { .. } => None,
        }
    }

    /// Whether the value is proven: a win or a loss (exact or within bounds), or a draw.
    pub fn is_settled(self) -> bool {
        !matches!(self, Outcome::Unknown { .. })
    }

    /// The distance to win's range, `(at_least, at_most)`: equal for an exact value; `None`
    /// for draws and unknown results.
    pub fn distance_bounds(self) -> Option<(u32, u32)> {
        match self {
            Outcome::Proven(value) => value.dtw().map(|d| (d, d)),
            Outcome::Bounded { at_least, at_most, .. } => Some((at_least, at_most)),
            Outcome::Unknown { .. } => None,
        }
    }

    /// The outcome for the player who moves into a position with this outcome.
    pub fn for_mover(self) -> Outcome {
        match self {
            Outcome::Proven(value) => Outcome::Proven(value.for_mover()),
            Outcome::Bounded { win, at_least, at_most } => {
                Outcome::Bounded { win: !win, at_least: at_least + 1, at_most: at_most + 1 }
            }
            Outcome::Unknown { no_result_within } => Outcome::Unknown { no_result_within: no_result_within + 1 },
        }
    }

    /// The outcome of the position a move leads to, for its side to move, given the move's
    /// outcome for the mover: the inverse of [`Outcome::for_mover`].
    pub fn after_move(self) -> Outcome {
        match self {
            Outcome::Proven(Value::Win(n)) => Outcome::Proven(Value::Loss(n.saturating_sub(1))),
            Outcome::Proven(Value::Loss(n)) => Outcome::Proven(Value::Win(n.saturating_sub(1))),
            Outcome::Proven(Value::Draw) => Outcome::Proven(Value::Draw),
            Outcome::Bounded { win, at_least, at_most } => {
                Outcome::won(!win, at_least.saturating_sub(1), at_most.saturating_sub(1))
            }
            Outcome::Unknown { no_result_within } => {
                Outcome::Unknown { no_result_within: no_result_within.saturating_sub(1) }
            }
        }
    }

    /// What two true statements about one position say together: an exact value over
    /// anything else, two ranges intersected, a range raised by a deeper "no result within",
    /// the deeper of two unknowns.
    pub fn merge(self, other: Outcome) -> Outcome {
        match (self, other) {
            (Outcome::Proven(_), _) => self,
            (_, Outcome::Proven(_)) => other,
            (Outcome::Bounded { win, at_least: a, at_most: b }, Outcome::Bounded { at_least: c, at_most: d, .. }) => {
                Outcome::won(win, a.max(c), b.min(d))
            }
            (Outcome::Bounded { win, at_least, at_most }, Outcome::Unknown { no_result_within })
            | (Outcome::Unknown { no_result_within }, Outcome::Bounded { win, at_least, at_most }) => {
                Outcome::won(win, at_least.max(no_result_within + 1), at_most)
            }
            (Outcome::Unknown { no_result_within: a }, Outcome::Unknown { no_result_within: b }) => {
                Outcome::Unknown { no_result_within: a.max(b) }
            }
        }
    }

    /// Whether two statements about one position cannot both be true: two proven values that
    /// disagree (a win and a loss, a draw and either, two different exact distances), or
    /// distance ranges that do not meet, or a "no result within" that a proven distance falls
    /// inside. A true search never makes two such statements, so one of them is forged or
    /// corrupt: [`Outcome::merge`] must not be asked to combine them.
    pub fn conflicts(self, other: Outcome) -> bool {
        let value = |o: Outcome| match o {
            Outcome::Proven(Value::Draw) => Some(None),
            o => o.proven_win().map(Some),
        };
        match (value(self), value(other)) {
            (Some(a), Some(b)) if a != b => true,
            (Some(Some(_)), Some(Some(_))) => {
                let ((a, b), (c, d)) =
                    (self.distance_bounds().unwrap_or((0, 0)), other.distance_bounds().unwrap_or((0, 0)));
                a.max(c) > b.min(d)
            }
            (Some(Some(_)), None) | (None, Some(Some(_))) => {
                let (proven, unknown) = if value(self).is_some() { (self, other) } else { (other, self) };
                let Outcome::Unknown { no_result_within } = unknown else { return false };
                proven.distance_bounds().is_some_and(|(_, at_most)| at_most <= no_result_within)
            }
            _ => false,
        }
    }

    /// What the outcomes of every legal move (each for the player making it) prove about the
    /// position, without search: a win if some move wins, its distance between the quickest
    /// possible win (a winning move's lower bound, or one more than an unknown move's depth)
    /// and the quickest proven one; a loss if every move loses, its distance between the
    /// largest lower bound and the largest upper bound (the loser takes the longest way); a
    /// draw if every move is a draw or a loss, and one a draw; an unknown result as deep as the
    /// shallowest unknown move's otherwise. `None` without moves.
    pub fn from_moves(moves: impl IntoIterator<Item = Outcome>) -> Option<Outcome> {
        let (mut fastest_possible, mut fastest_proven) = (u32::MAX, None::<u32>);
        let (mut all_lose, mut loss_at_least, mut loss_at_most) = (true, 0, 0);
        let mut shallowest = u32::MAX;
        let mut any = false;
        for outcome in moves {
            any = true;
            match (outcome.proven_win(), outcome.distance_bounds(), outcome) {
                (Some(true), Some((at_least, at_most)), _) => {
                    all_lose = false;
                    fastest_possible = fastest_possible.min(at_least);
                    fastest_proven = Some(fastest_proven.map_or(at_most, |f| f.min(at_most)));
                }
                (Some(false), Some((at_least, at_most)), _) => {
                    loss_at_least = loss_at_least.max(at_least);
                    loss_at_most = loss_at_most.max(at_most);
                }
                (_, _, Outcome::Unknown { no_result_within }) => {
                    all_lose = false;
                    // A win through this move, if any, is slower than its depth.
                    fastest_possible = fastest_possible.min(no_result_within + 1);
                    shallowest = shallowest.min(no_result_within);
                }
                // A draw: neither side wins through it, nor loses.
                _ => all_lose = false,
            }
        }
        match fastest_proven {
            _ if !any => None,
            Some(at_most) => Some(Outcome::won(true, fastest_possible.min(at_most), at_most)),
            None if all_lose => Some(Outcome::won(false, loss_at_least, loss_at_most)),
            // Every move is a draw or a loss, and one is a draw: nothing wins, and that one
            // does not lose.
            None if shallowest == u32::MAX => Some(Outcome::Proven(Value::Draw)),
            // No move wins within the shallowest unknown move's depth, and through that move
            // the position does not lose within it either.
            None => Some(Outcome::Unknown { no_result_within: shallowest }),
        }
    }

    /// Sort key, better for the side in question first: exact wins (quickest first), bounded
    /// wins (smallest upper bound first), unknown (deeper first: a longer search that found
    /// nothing is the likelier draw), draws, bounded losses (largest upper bound first), exact
    /// losses (slowest first).
    fn rank(self) -> (u8, i64, i64) {
        match self {
            Outcome::Proven(Value::Win(n)) => (6, -i64::from(n), 0),
            Outcome::Bounded { win: true, at_least, at_most } => (5, -i64::from(at_most), -i64::from(at_least)),
            Outcome::Unknown { no_result_within } => (4, i64::from(no_result_within), 0),
            Outcome::Proven(Value::Draw) => (3, 0, 0),
            Outcome::Bounded { win: false, at_least, at_most } => (2, i64::from(at_most), i64::from(at_least)),
            Outcome::Proven(Value::Loss(n)) => (1, i64::from(n), 0),
        }
    }
}

/// The smallest distance of a win's (odd) or a loss's (even) parity that is at least `d`.
pub(crate) fn distance_from(d: u32, win: bool) -> u32 {
    if d % 2 == u32::from(win) {
        d
    } else {
        d + 1
    }
}

/// A search's budget: the deepest distance to ask about, nodes, and wall-clock time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest distance to win looked for (at most [`MAX_DEPTH`]).
    pub max_depth: u32,
    /// Nodes (positions examined) at most.
    pub max_nodes: u64,
    /// Wall-clock time at most; `None` for no limit (the node limit alone makes a search
    /// deterministic).
    pub time: Option<Duration>,
}

impl Limits {
    /// A node budget alone, at any depth.
    pub fn nodes(max_nodes: u64) -> Limits {
        Limits { max_depth: MAX_DEPTH, max_nodes, time: None }
    }
}

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
/// Only those, not everything a store holds: the whole committed opening store as it was (261,541
/// outcomes) taken into the table before each search proved 124 of the reach script's 200
/// careful-play positions as a value at 2 M nodes, against 122 without (37 exactly against 36),
/// since only 4 of them, and a child of 10, are in it.
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

/// A switch that ends a search from another thread, as if its budget had run out (what it
/// proved so far stays true and is kept): for a search whose asker is gone. Clones share
/// the switch; the search reads it whenever it reads the clock.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Ends the searches that watch this switch.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A proof searcher and the transposition table it owns (and keeps between searches: what
/// it stores is true of the positions alone, so every later search profits).
pub struct Search {
    table: TranspositionTable,
    numbers: numbers::NumberTable,
    plan: Plan,
    cancel: Option<Cancel>,
}

impl Search {
    /// A searcher whose table holds about `table_bytes` bytes, allocated now and never more.
    pub fn new(table_bytes: usize) -> Search {
        // Half for the facts, half for the proof numbers of unresolved positions.
        Search {
            table: TranspositionTable::with_bytes(table_bytes / 2),
            numbers: numbers::NumberTable::with_bytes(table_bytes / 2),
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
    fn prover(&mut self, max_nodes: u64, deadline: Option<Instant>) -> (Prover<'_>, &Plan) {
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

    /// [`Search::certify`], the tree found another way: walked from what the table proves
    /// ([`assemble::Assembler`], bounds the heights of the trees written), and where the table
    /// has let part of it go, that part proven again as `certify` does. For a table shared by
    /// many searches, whose entries' bounds need not fall along the lines of one tree.
    pub fn certify_by_walk(&mut self, position: &Position, limits: &Limits) -> Option<Certificate> {
        let started = Instant::now();
        let (mut prover, plan) = self.prover(limits.max_nodes, limits.time.map(|t| started + t));
        let win = prover.establish(position, limits.max_depth, plan).proven_win()?;
        let (certificate, ..) = assemble::Assembler::over(Tabled { prover: &mut prover }, *position, win).assemble();
        certificate
    }
}

/// A search's table as the source of a certificate's walk.
struct Tabled<'p, 't> {
    prover: &'p mut Prover<'t>,
}

impl assemble::Source for Tabled<'_, '_> {
    fn lost_within(&mut self, positions: &[Position]) -> Vec<Option<u32>> {
        positions.iter().map(|position| self.prover.proven_loss_within(position)).collect()
    }

    fn certify(&mut self, position: &Position) -> Option<Certificate> {
        let within = self.prover.proven_win_within(position).unwrap_or(MAX_DEPTH - 1);
        let mut certificate = Certificate::new(*position, true);
        certify_winner(self.prover, position, within, &mut certificate)?;
        Some(certificate)
    }
}

/// Writes the proof that `position`'s side to move wins within `within` plies; returns the
/// bound its entry got (at most `within`).
fn certify_winner(prover: &mut Prover, position: &Position, within: u32, certificate: &mut Certificate) -> Option<u32> {
    if let Some(entry) = certificate.get(position).filter(|entry| u32::from(entry.bound) <= within) {
        return Some(u32::from(entry.bound));
    }
    let moves = position.legal_moves();
    let index_of = |mv| moves.iter().position(|&m| m == mv).and_then(|i| u8::try_from(i).ok());
    let (move_index, bound) = match moves.iter().find(|&&mv| position.captures_royal(mv)) {
        Some(&mv) => (index_of(mv)?, 1),
        None => {
            let (mv, loser, after) = prover.winning_move(position, within)?;
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
fn certify_loser(prover: &mut Prover, position: &Position, within: u32, certificate: &mut Certificate) -> Option<u32> {
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
fn exact_line(prover: &mut Prover, position: &Position, dtw: u32) -> Option<Vec<MainlineStep>> {
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
fn forced_line(prover: &mut Prover, position: &Position, win: bool, within: u32) -> Option<Vec<MainlineStep>> {
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
                    let (mv, child, after) = prover.winning_move(&current, within)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_cannot_both_be_true_conflict() {
        let win = |at_least, at_most| Outcome::won(true, at_least, at_most);
        let loss4 = Outcome::Proven(Value::Loss(4));
        let draw = Outcome::Proven(Value::Draw);
        let unknown = |d| Outcome::Unknown { no_result_within: d };
        // The forged record of the round-4 review: a loss against a certified win within 21.
        assert!(win(1, 21).conflicts(loss4) && loss4.conflicts(win(1, 21)));
        assert!(draw.conflicts(loss4) && win(3, 9).conflicts(draw));
        assert!(win(3, 9).conflicts(win(11, 15)), "ranges that do not meet");
        assert!(Outcome::Proven(Value::Win(7)).conflicts(unknown(9)), "a win within a depth refuted");
        // Statements that narrow each other do not.
        assert!(!win(3, 21).conflicts(win(9, 15)));
        assert!(!win(3, 21).conflicts(Outcome::Proven(Value::Win(9))));
        assert!(!win(3, 21).conflicts(unknown(12)));
        assert!(!draw.conflicts(unknown(40)) && !unknown(3).conflicts(unknown(9)));
        assert!(!loss4.conflicts(loss4));
    }

    #[test]
    fn moves_settle_a_draw_only_when_nothing_else_is_possible() {
        let draw = Outcome::Proven(Value::Draw);
        let loss = Outcome::Proven(Value::Loss(4));
        let unknown = Outcome::Unknown { no_result_within: 9 };
        let win = Outcome::Bounded { win: true, at_least: 5, at_most: 11 };
        // Every move a draw or a loss, one a draw: a draw.
        assert_eq!(Outcome::from_moves([loss, draw, loss]), Some(draw));
        assert_eq!(Outcome::from_moves([draw]), Some(draw));
        // An unknown move may still win.
        assert_eq!(Outcome::from_moves([draw, unknown]), Some(unknown));
        // A winning move wins.
        assert_eq!(Outcome::from_moves([draw, win]), Some(win));
        // Every move lost: a loss, the longest.
        assert_eq!(Outcome::from_moves([loss]), Some(Outcome::Proven(Value::Loss(4))));
        assert_eq!(Outcome::from_moves([]), None);
        assert!(draw.is_settled() && loss.is_settled() && win.is_settled() && !unknown.is_settled());
        assert_eq!(draw.proven_win(), None);
    }
}
