//! Proof search for Shogi4 positions that no table holds, above all the real game.
//!
//! An answer is either **proven**, a win or loss with the exact distance to win (exact
//! because every shallower depth was searched to completion), or **unknown** with the depth
//! `D` up to which neither side has a forced result: a true statement too (the position's
//! distance is larger than `D`, or it is a draw). A search never claims a draw.
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

mod dfpn;
mod prover;
mod table;

use std::time::{Duration, Instant};

use shogi4_engine::Position;
use shogi4_tablebase::{MainlineStep, MoveFlags, Value};

use prover::Prover;
pub use prover::MAX_DEPTH;
pub use table::TranspositionTable;

/// The node budget a served search gets unless configured otherwise: about 3 s of search on one
/// core of today's build (nodes are positions examined, 15–20 M a second), so the time budget
/// normally ends a search first and the node budget bounds what it may cost.
pub const DEFAULT_MAX_NODES: u64 = 60_000_000;

/// What a search establishes about a position, for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A win or loss with its exact distance to win.
    Proven(Value),
    /// Neither side can force the royal capture within this many plies (the distance is
    /// larger, or the position is a draw).
    Unknown {
        /// The depth searched to completion.
        no_result_within: u32,
    },
}

impl Outcome {
    /// The outcome for the player who moves into a position with this outcome.
    pub fn for_mover(self) -> Outcome {
        match self {
            Outcome::Proven(value) => Outcome::Proven(value.for_mover()),
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
            Outcome::Unknown { no_result_within } => {
                Outcome::Unknown { no_result_within: no_result_within.saturating_sub(1) }
            }
        }
    }

    /// Sort key, better for the side in question first: quick wins, slow wins, unknown
    /// (deeper first: a longer search that found nothing is the likelier draw), slow losses,
    /// quick losses.
    fn rank(self) -> (u8, i64) {
        match self {
            Outcome::Proven(Value::Win(n)) => (3, -i64::from(n)),
            Outcome::Unknown { no_result_within } => (2, i64::from(no_result_within)),
            Outcome::Proven(Value::Draw) => (1, 0),
            Outcome::Proven(Value::Loss(n)) => (0, i64::from(n)),
        }
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
    /// Every legal move, best first: proven wins by shortest distance, unknown, proven losses
    /// by longest distance; ties in move-generation order.
    pub moves: Vec<MoveOutcome>,
    /// Nodes (positions examined), position and moves together.
    pub nodes: u64,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

/// A proof searcher and the transposition table it owns (and keeps between searches: what
/// it stores is true of the positions alone, so every later search profits).
pub struct Search {
    table: TranspositionTable,
    numbers: dfpn::NumberTable,
}

impl Search {
    /// A searcher whose table holds about `table_bytes` bytes, allocated now and never more.
    pub fn new(table_bytes: usize) -> Search {
        // Half for the facts, half for the proof numbers of unresolved positions.
        Search {
            table: TranspositionTable::with_bytes(table_bytes / 2),
            numbers: dfpn::NumberTable::with_bytes(table_bytes / 2),
        }
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

    /// The outcome of `position` within `limits`.
    pub fn prove(&mut self, position: &Position, limits: &Limits) -> Report {
        let started = Instant::now();
        let mut prover =
            Prover::new(&mut self.table, &mut self.numbers, limits.max_nodes, limits.time.map(|t| started + t));
        let outcome = outcome_of(prover.deepen(position, limits.max_depth));
        Report { outcome, nodes: prover.nodes, elapsed: started.elapsed() }
    }

    /// The outcome of `position` and of each of its moves, within `limits` for them all:
    /// the position gets up to half the budget, the moves share what is left.
    pub fn analyse(&mut self, position: &Position, limits: &Limits) -> Analysis {
        let started = Instant::now();
        let deadline = limits.time.map(|t| started + t);
        let half = limits.time.map(|t| started + t / 2);
        let mut prover = Prover::new(&mut self.table, &mut self.numbers, limits.max_nodes / 2, half);
        let outcome = outcome_of(prover.deepen(position, limits.max_depth));
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
            let outcome = outcome_of(prover.deepen(&child, child_depth)).for_mover();
            moves.push(MoveOutcome { mv, result: Some(child), outcome, flags });
        }
        moves.sort_by_key(|m| std::cmp::Reverse(m.outcome.rank()));
        Analysis { outcome, moves, nodes: prover.nodes, elapsed: started.elapsed() }
    }

    /// The line of best play from a position whose outcome the search proves, each side
    /// playing a move that keeps the exact distance (the winner the shortest win, the loser
    /// the longest defence): `None` if the position is not proven within `limits`.
    pub fn mainline(&mut self, position: &Position, limits: &Limits) -> Option<(Value, Vec<MainlineStep>)> {
        let started = Instant::now();
        let mut prover =
            Prover::new(&mut self.table, &mut self.numbers, limits.max_nodes, limits.time.map(|t| started + t));
        let dtw = prover.deepen(position, limits.max_depth).0?;
        let value = Value::from_dtw(dtw);
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
        Some((value, steps))
    }
}

fn outcome_of((found, established): (Option<u32>, u32)) -> Outcome {
    match found {
        Some(dtw) => Outcome::Proven(Value::from_dtw(dtw)),
        None => Outcome::Unknown { no_result_within: established },
    }
}
