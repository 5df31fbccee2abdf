//! Solved tables of Shogi4 closed games: the retrograde solver, the `.s4tb` file format, the
//! audit, and probing (value, move values, line of best play).
//!
//! Builds on `shogi4-engine`; knows files (it writes and memory-maps tables, and owns the
//! table directory) but nothing of HTTP or JSON.
//!
//! ```
//! use shogi4_engine::Position;
//! use shogi4_tablebase::{solve, Silent, Table, Tablebase, Value};
//!
//! // Solve the closed game of a royal and a carp, then probe it from memory.
//! let solved = solve("KKC".parse().unwrap(), &Silent);
//! let tablebase = Tablebase::from_tables([Table::new(solved.table.to_bytes()).unwrap()]);
//! let position = Position::parse("k3/4/4/K3 b C 1").unwrap();
//! assert_eq!(tablebase.value(&position).unwrap(), Value::Win(9));
//! ```

mod audit;
mod checkpoint;
pub mod compressed;
mod durable;
mod format;
mod memory;
mod probe;
mod progress;
mod solver;
mod store;
mod table;
mod value;

pub use audit::{audit, implied_value, AuditReport, Violation, REPORTED_VIOLATIONS};
pub use checkpoint::{body as checkpoint_body, fingerprint as index_fingerprint, CheckpointError, Checkpoints};
pub use durable::{replaceable, write_atomically, DurableFile};
pub use format::{
    file_name, layout, material_field, material_in_field, recorded_checksum, CorruptValue, Damage, FormatError, Header,
    SolveError, SolvedTable, Statistics, TableError, TableWriter, EXTENSION, MAGIC, VERSION, VERSION_COMPRESSED,
};
pub use memory::{available_memory, huge_vec, prefetch, refuse_too_large, solve_memory_needed};
pub use probe::{Mainline, MainlineStep, MoveFlags, MoveValue, ProbeError, ProbeResult, Tablebase};
pub use progress::{Progress, Silent};
pub use solver::{
    level_rule, peak_rss_bytes, resident_bytes, solve, solve_resumable, solve_with_inline_limit, FirstLook, Solution,
};
pub use store::{Loaded, SolveEvent, SolveMode, TableDir, TableStatus};
pub use table::{open_regular_file, open_table, MappedTable, Table};
pub use value::{Value, MAX_INLINE_DTW, OVERFLOW_CODE};
