//! The retrograde solve spread over workers (threads of one process, or processes on one or
//! several machines) and connected by timely-dataflow, for games larger than one machine.
//!
//! Each worker owns a contiguous range of slots ([`Partition`]): their state (a byte and a
//! bit per slot, the in-memory solver's layout), nothing else. The solve runs in bulk-synchronous levels, as the
//! in-memory solver's (`shogi4_tablebase::solve`): at level `n` each worker turns its slots
//! decided at distance `n` into predecessor updates, timely's exchange pact carries each update
//! to the owner of its slot, the owner applies it, and a round ends only when timely's
//! progress tracking says that every update of the round has been applied everywhere. A
//! level is as many rounds as the busiest worker needs, each bounded (a worker sends at most
//! a batch of updates per round), so memory stays proportional to a worker's share. The
//! solve ends when a level decides nothing; the shares, laid end to end, are the table, and
//! process 0 writes it.
//!
//! The result does not depend on the number of processes or workers or on message order:
//! within a level every update writes only distance `n + 1`, and by parity only wins (any
//! update decides) or only losses (counting down, which commutes); see `share.rs`, whose
//! tests deliver updates in shuffled orders to 1 to 64 shares, and the CLI's tests, which
//! compare whole clusters' tables with the in-memory solver's byte for byte.
//!
//! Timely has no fault tolerance of its own: `checkpoint.rs` keeps every worker's share after
//! agreed levels, and a resumed cluster restarts from the last level all of them can restore.
//! A process that loses its connection to another stops with an error
//! ([`stop_when_a_peer_is_lost`]) instead of waiting forever.

mod checkpoint;
mod share;
mod time;
mod worker;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use shogi4_engine::Material;
use shogi4_tablebase::{Statistics, TableError};

pub use share::Partition;

/// Where the workers of a solve run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// All workers are threads of this process.
    Threads(usize),
    /// This process is one of a cluster's, connected over TCP.
    Member {
        /// Worker threads in each process.
        workers: usize,
        /// This process's place in `addresses`.
        process: usize,
        /// `host:port` of every process, in process order.
        addresses: Vec<String>,
    },
}

impl Topology {
    /// Workers in the whole cluster.
    pub fn peers(&self) -> usize {
        match self {
            Topology::Threads(workers) => *workers,
            Topology::Member { workers, addresses, .. } => workers * addresses.len(),
        }
    }

    /// This process's index (0 for threads).
    pub fn process(&self) -> usize {
        match self {
            Topology::Threads(_) => 0,
            Topology::Member { process, .. } => *process,
        }
    }

    /// Worker threads in each process.
    pub fn workers_per_process(&self) -> usize {
        match self {
            Topology::Threads(workers) | Topology::Member { workers, .. } => *workers,
        }
    }
}

/// One solve.
#[derive(Clone)]
pub struct Job {
    /// The closed game.
    pub material: Material,
    /// Where the table (and the checkpoints, while it is solved) go.
    pub out: PathBuf,
    /// With `Some(every)`: resume from the checkpoints there, and checkpoint after a level
    /// whenever `every` has passed on any worker since the last.
    pub checkpoint_every: Option<Duration>,
    /// Predecessor updates a worker sends per round at most (the bound on data in flight).
    pub batch: usize,
    /// Distances above this are kept in the overflow list: `MAX_INLINE_DTW` in real solves,
    /// lower in tests to drive small games through that path.
    pub max_inline: u32,
    /// What process 0 reports while it solves.
    pub events: Arc<dyn Fn(&Event) + Send + Sync>,
}

impl Job {
    /// A solve of `material` into `out` with the default batch and no checkpoints.
    pub fn new(material: Material, out: PathBuf) -> Job {
        Job {
            material,
            out,
            checkpoint_every: None,
            batch: 1 << 20,
            max_inline: shogi4_tablebase::MAX_INLINE_DTW,
            events: Arc::new(|_| {}),
        }
    }
}

/// What process 0 reports during a solve.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The cluster is connected and the shares allocated.
    Started {
        /// Workers in the cluster.
        peers: usize,
        /// Slots of the game.
        slots: u64,
        /// The level the solve resumes after, if it resumes.
        resumed_after: Option<u32>,
    },
    /// A level is complete.
    Level(LevelSummary),
    /// Every worker's share after this level is on disk, and every process has committed it.
    Checkpointed(u32),
    /// The table is being written.
    Writing,
}

/// One level's figures, for the whole cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelSummary {
    /// The distance whose slots were walked (init is reported as level 0's moves).
    pub level: u32,
    /// Slots decided at that distance.
    pub decided: u64,
    /// Moves (init) or un-moves generated.
    pub edges: u64,
    /// Updates sent to another worker.
    pub exchanged: u64,
    /// Updates sent to a worker of another process (over the network).
    pub network: u64,
    /// Rounds the level took.
    pub rounds: u64,
    /// Seconds since the solve started.
    pub elapsed: f64,
}

/// What a finished solve reports (on process 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// The table written.
    pub path: PathBuf,
    /// Its statistics.
    pub statistics: Statistics,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Moves and un-moves generated, as the in-memory solver counts them.
    pub edges: u64,
    /// Updates sent to another worker, all levels together.
    pub exchanged: u64,
    /// Updates sent to another process.
    pub network: u64,
    /// The level the solve resumed after, if it did.
    pub resumed_after: Option<u32>,
}

/// Bytes of one predecessor update on the wire (a slot number).
pub const UPDATE_BYTES: u64 = 8;

/// Why a distributed solve failed.
#[derive(Debug)]
pub enum ClusterError {
    /// A file could not be read or written.
    Io(PathBuf, std::io::Error),
    /// A checkpoint cannot be resumed from.
    Checkpoint(String),
    /// Another worker failed; its reason.
    Peer {
        /// The worker.
        worker: usize,
        /// What it reported.
        reason: String,
    },
    /// The table could not be written.
    Table(TableError),
    /// This process's own `host:port` was taken by another program: nothing has started, and
    /// the cluster can be started again on other ports.
    AddressInUse(String),
    /// Timely could not start the cluster, or a worker stopped.
    Dataflow(String),
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterError::Io(path, e) => write!(f, "{}: {e}", path.display()),
            ClusterError::Checkpoint(why) => write!(f, "checkpoint refused: {why}"),
            ClusterError::Peer { worker, reason } => write!(f, "worker {worker} failed: {reason}"),
            ClusterError::Table(e) => write!(f, "{e}"),
            ClusterError::AddressInUse(address) => {
                write!(f, "cluster: this process's address {address} is already in use by another program")
            }
            ClusterError::Dataflow(why) => write!(f, "cluster: {why}"),
        }
    }
}

impl std::error::Error for ClusterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClusterError::Io(_, e) => Some(e),
            ClusterError::Table(e) => Some(e),
            _ => None,
        }
    }
}

impl From<TableError> for ClusterError {
    fn from(e: TableError) -> Self {
        ClusterError::Table(e)
    }
}

/// Runs this process's part of `job`: all of it for [`Topology::Threads`], one process's
/// workers for [`Topology::Member`] (every process of the cluster runs this with its own
/// index). Returns the outcome on process 0, `None` on the others.
pub fn solve(job: Job, topology: Topology) -> Result<Option<Finished>, ClusterError> {
    worker::run(job, topology)
}

/// Makes this process exit with a clear message (exit code 1) as soon as it loses its
/// connection to another process of the cluster. Timely's network threads panic then, and
/// its workers would otherwise wait for messages that never come; the checkpoints on disk
/// stay valid (each was written atomically), so the cluster can be resumed; `how_to_resume`
/// ends the message (the binary knows how it is resumed, the library does not).
pub fn stop_when_a_peer_is_lost(how_to_resume: &'static str) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("timely communication error") || message.contains("MergeQueue poisoned") {
            eprintln!(
                "error: lost the connection to another process of the cluster ({message}); stopping. \
                 {how_to_resume}"
            );
            std::process::exit(1);
        }
        previous(info);
    }));
}
