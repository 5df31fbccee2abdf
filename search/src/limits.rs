//! A search's budget ([`Limits`]), the defaults a served search gets, and the switch that
//! ends a search from another thread ([`Cancel`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::table::MAX_DEPTH;

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
