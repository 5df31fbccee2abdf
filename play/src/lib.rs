//! The Shogi4 engine: the best move and an estimate of a position where no proof reaches.
//!
//! [`Engine::search`] runs iterative deepening over a principal-variation alpha-beta search
//! (`search.rs`), ordered by `ordering.rs`, remembering in a fixed-size shared table
//! (`table.rs`), and evaluating the horizon with a linear model learned from proven outcomes
//! (`eval.rs`). Scores are centipawns for the side to move, or mate scores for a forced royal
//! capture (`score.rs`).
//!
//! What is proven comes from an [`Oracle`] (tables, the proof store, certificates), and is
//! used as exact at the node it covers; everything else is an estimate. The crate is pure:
//! no I/O, no serde, no threads beyond [`Limits::threads`].
//!
//! ```
//! use shogi4_engine::Position;
//! use shogi4_play::{Engine, Limits};
//! use shogi4_search::Cancel;
//!
//! let engine = Engine::new(1);
//! let position = Position::parse("k3/1K2/4/4 b C 1").unwrap();
//! let limits = Limits { depth: Some(3), ..Limits::default() };
//! let analysis = engine.search(&position, &[], &limits, &(), &Cancel::default(), |_| {});
//! assert_eq!(analysis.best_move().unwrap().to_string(), "b3a4");
//! assert_eq!(analysis.score(), Some(shogi4_play::score::win_in(1)));
//! ```

pub mod eval;
mod guide;
mod ordering;
pub mod score;
mod search;
mod table;

pub use guide::EngineGuide;
pub use search::{Analysis, Engine, Limits, Line, Oracle, Progress, Pruning, Recalled, Switch};
