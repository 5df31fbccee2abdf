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
mod children;
mod deepening;
mod dfpn;
pub mod guess;
mod limits;
mod line;
mod numbers;
mod outcome;
mod prover;
mod search;
mod spell;
pub mod steered;
mod table;
mod value;

pub use deepening::{Horizon, Narrowing, Plan};
pub use limits::{Cancel, Limits, DEFAULT_MAX_NODES, DEFAULT_QUERY_MS, DEFAULT_TABLE_MB};
pub use line::Line;
pub use outcome::Outcome;
pub use search::{Analysis, MoveOutcome, Recall, Report, Search, MIN_RECORDED_DEPTH};
pub use table::{TranspositionTable, MAX_DEPTH};
