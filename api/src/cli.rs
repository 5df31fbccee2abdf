//! What the `shogi4` commands print with `--json`, one type a report, so that the scripts
//! that read them parse named, documented fields (the server's bodies are in `responses`).

use std::collections::BTreeMap;

use serde::Serialize;
use shogi4_tablebase::Statistics;

/// A closed game's outcome counts, as solving and reading a table report them.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Outcomes {
    /// All positions.
    pub positions: u64,
    /// Wins for the side to move.
    pub wins: u64,
    /// Losses for the side to move.
    pub losses: u64,
    /// Draws.
    pub draws: u64,
    /// The longest distance to win.
    pub max_dtw: u32,
    /// Positions by distance to win (draws not counted).
    pub histogram: Vec<u64>,
}

impl From<&Statistics> for Outcomes {
    fn from(s: &Statistics) -> Outcomes {
        Outcomes {
            positions: s.positions,
            wins: s.wins,
            losses: s.losses,
            draws: s.draws,
            max_dtw: s.max_dtw,
            histogram: s.histogram.clone(),
        }
    }
}

/// `shogi4 perft`.
#[derive(Clone, Debug, Serialize)]
pub struct PerftReport {
    /// The position, in SFEN.
    pub pos: String,
    /// Leaf nodes at depth 1, 2, ….
    pub nodes: Vec<u64>,
}

/// `shogi4 count`.
#[derive(Clone, Debug, Serialize)]
pub struct CountReport {
    /// The closed game.
    pub material: String,
    /// Its positions, by the published convention.
    pub positions: u64,
    /// Its folded slots (four positions each).
    pub slots: u64,
}

/// `shogi4 solve` (one line per table) and `shogi4 bench`.
#[derive(Clone, Debug, Serialize)]
pub struct SolveReport {
    /// The closed game.
    pub material: String,
    /// Slots solved.
    pub slots: u64,
    /// Wall-clock seconds of the solve.
    pub seconds: f64,
    /// Predecessor edges walked.
    pub edges: u64,
    /// Nanoseconds per edge.
    pub ns_per_edge: f64,
    /// The process's peak resident memory so far (null where it cannot be read).
    pub peak_rss_bytes: Option<u64>,
    /// Where the table was written; null for `bench`.
    pub path: Option<String>,
    /// Its outcome counts.
    #[serde(flatten)]
    pub outcomes: Outcomes,
    /// `bench` only: the audit of the solved table.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub bench: Option<BenchFigures>,
}

/// What `shogi4 bench` adds to a solve's report.
#[derive(Clone, Debug, Serialize)]
pub struct BenchFigures {
    /// Seconds the audit took.
    pub audit_seconds: f64,
    /// Slots the audit found inconsistent.
    pub audit_violations: u64,
    /// The audit's time over the solve's.
    pub audit_to_solve_ratio: f64,
    /// Bytes of the table file.
    pub table_bytes: u64,
    /// Worker threads.
    pub threads: usize,
}

/// `shogi4 solve --cluster` or `--hostfile`: the cluster's solve of one game.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterReport {
    /// The closed game.
    pub material: String,
    /// Processes in the cluster.
    pub processes: usize,
    /// Workers in all.
    pub workers: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Predecessor edges walked.
    pub edges: u64,
    /// Edges per second.
    pub edges_per_second: f64,
    /// Bytes of updates exchanged between workers, per edge.
    pub exchanged_bytes_per_edge: f64,
    /// Of those, bytes that crossed process boundaries, per edge.
    pub network_bytes_per_edge: f64,
    /// The level the solve resumed after, if it resumed.
    pub resumed_after: Option<u32>,
    /// The process's peak resident memory (null where it cannot be read).
    pub peak_rss_bytes: Option<u64>,
    /// Where the table was written.
    pub path: String,
    /// Its outcome counts.
    #[serde(flatten)]
    pub outcomes: Outcomes,
}

/// `shogi4 compress`: one table.
#[derive(Clone, Debug, Serialize)]
pub struct CompressReport {
    /// The closed game.
    pub material: String,
    /// The file written.
    pub file: String,
    /// Bytes of the source table.
    pub bytes_before: u64,
    /// Bytes of the result.
    pub bytes_after: u64,
    /// The result's bytes per position.
    pub bytes_per_position: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// One slot whose stored value its moves' values contradict.
#[derive(Clone, Debug, Serialize)]
pub struct AuditViolation {
    /// The slot.
    pub slot: u64,
    /// One of its positions.
    pub sfen: String,
    /// The value stored.
    pub stored: String,
    /// The value its moves imply.
    pub implied: String,
}

/// `shogi4 audit`: one file.
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    /// The file.
    pub file: String,
    /// Whether it passed: readable, named after its game, its checksum right, every slot
    /// consistent.
    pub ok: bool,
    /// Why it could not be read at all (then nothing below is given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The rest, for a file that could be read.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub checked: Option<AuditChecked>,
}

/// The audit of a readable table.
#[derive(Clone, Debug, Serialize)]
pub struct AuditChecked {
    /// Its closed game.
    pub material: String,
    /// A wrong name or checksum; null if both are right.
    pub checksum_error: Option<String>,
    /// Slots checked.
    pub slots: u64,
    /// Slots inconsistent with their moves.
    pub violations: u64,
    /// The first few of them.
    pub first_violations: Vec<AuditViolation>,
    /// Moves followed.
    pub edges: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// `shogi4 prove`: where the best-first prover stands after a run.
#[derive(Clone, Debug, Serialize)]
pub struct ProveReport {
    /// The start position's outcome, in words (`unknown (> 18)`).
    pub start: String,
    /// Each of the start's moves, by notation: its outcome for the player making it.
    pub replies: BTreeMap<String, String>,
    /// Positions searched this run.
    pub searched: u64,
    /// Leaves searched side by side (`--threads`).
    pub threads: u64,
    /// Positions expanded from what the store knew, without search.
    pub resumed: u64,
    /// Positions of the graph expanded.
    pub expanded: u64,
    /// Positions of the graph in memory.
    pub graph: u64,
    /// Positions of the graph proven won or lost.
    pub proven: u64,
    /// Search nodes spent this run.
    pub nodes: u64,
    /// Records in the store.
    pub records: u64,
    /// Why the run ended.
    pub ended: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The start's proof and disproof numbers for both questions; null for infinite.
    pub start_numbers: StartNumbers,
    /// Bytes of the store's file.
    pub store_bytes: u64,
    /// The process's peak resident memory (null where it cannot be read).
    pub peak_memory_bytes: Option<u64>,
    /// The most-proving line of the last step: the moves from the start to the position it
    /// searched.
    pub line: Vec<String>,
}

/// `shogi4 prove --steer`: where the steered proof stands after a run.
#[derive(Clone, Debug, Serialize)]
pub struct SteeredReport {
    /// The start position's outcome for its side to move, in words.
    pub start: String,
    /// The player whose win is sought: `first` or `second`.
    pub attacker: String,
    /// `proven` (the attacker wins), `refuted` (it does not) or `open`.
    pub status: String,
    /// The start's proof and disproof numbers; null for infinite.
    pub numbers: [Option<u32>; 2],
    /// Each move of the start, the engine's best first, and where its proof stands.
    pub branches: Vec<SteeredBranch>,
    /// The proof's size once the start is proven: the attacker's positions in it.
    pub proof_positions: Option<u64>,
    /// Leaf searches run this run.
    pub searched: u64,
    /// Positions expanded this run.
    pub expanded: u64,
    /// Positions of the tree in memory.
    pub graph: u64,
    /// Proof-search nodes the leaf searches spent.
    pub nodes: u64,
    /// Engine nodes the rankings spent.
    pub guide_nodes: u64,
    /// Records in the store.
    pub records: u64,
    /// Why the run ended.
    pub ended: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Bytes of the store's file.
    pub store_bytes: u64,
    /// The process's peak resident memory (null where it cannot be read).
    pub peak_memory_bytes: Option<u64>,
    /// The most-proving line from the start.
    pub line: Vec<String>,
}

/// One move of the steered prover's start.
#[derive(Clone, Debug, Serialize)]
pub struct SteeredBranch {
    /// The move.
    #[serde(rename = "move")]
    pub mv: String,
    /// What is known of the position it leads to, for the player making it, in words.
    pub outcome: String,
    /// `proven`, `refuted` or `open`, for the attacker.
    pub status: String,
    /// The engine's expected score for the attacker after it (0 to 1): an estimate, not a
    /// value.
    pub estimate: f32,
    /// Its proof and disproof numbers; null for infinite.
    pub numbers: [Option<u32>; 2],
    /// The most-proving line below it, its own move first (while open).
    pub line: Vec<String>,
}

/// Proof and disproof numbers of the two questions asked of the start.
#[derive(Clone, Debug, Serialize)]
pub struct StartNumbers {
    /// "Does the side to move win?": proof, disproof.
    pub win: [Option<u32>; 2],
    /// "Does it lose?": proof, disproof.
    pub loss: [Option<u32>; 2],
}

/// `shogi4 proofs export`.
#[derive(Clone, Debug, Serialize)]
pub struct ProofsExported {
    /// Outcomes written.
    pub records: u64,
    /// Of them, unknown outcomes (`--with-unknown`; 0 without).
    pub unknown: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// `shogi4 proofs import`.
#[derive(Clone, Debug, Serialize)]
pub struct ProofsImported {
    /// Records in the file.
    pub records: u64,
    /// Records of the store that changed.
    pub changed: u64,
}

/// `shogi4 analyse`: the engine's estimate, never a proven value unless `proven` says so.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyseReport {
    /// The position, in SFEN.
    pub sfen: String,
    /// The best lines, best first.
    pub lines: Vec<AnalyseLine>,
    /// The root's proven outcome, when a table or the proof store knows it.
    pub proven: Option<String>,
    /// The deepest iteration completed.
    pub depth: u32,
    /// The deepest ply reached.
    pub seldepth: u32,
    /// Nodes searched.
    pub nodes: u64,
    /// Milliseconds spent.
    pub ms: u64,
}

/// One line of [`AnalyseReport`]: exactly one of `score_cp`, `win_in` and `loss_in` is set.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyseLine {
    /// The evaluation for the side to move, in centipawns (a carp is about 100).
    pub score_cp: Option<i32>,
    /// The search found a royal capture in this many plies on every line it considered.
    pub win_in: Option<u32>,
    /// The search found its royal captured in this many plies on every line it considered.
    pub loss_in: Option<u32>,
    /// The expected score for the side to move, 0 to 1, that the score stands for.
    pub expected_score: f64,
    /// The expected line, from the root move.
    pub pv: Vec<String>,
}
