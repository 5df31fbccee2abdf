//! The answers: probe, mainline, batch and table descriptions, with their builders from
//! tablebase and search results. Engine, tablebase and search types are converted here and
//! nowhere else.

use serde::{Deserialize, Serialize};
use shogi4_engine::{Color, Material, Move, Position};
use shogi4_search::{Analysis, Line, MoveOutcome, Outcome};
use shogi4_tablebase::{Mainline, MainlineStep, MoveFlags, MoveValue, ProbeResult, Table, Value};
use utoipa::ToSchema;

use crate::Problem;

/// Win, loss or draw, or (from a search only) unknown.
#[derive(Clone, Copy, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// The player in question can force the capture of the opponent's royal.
    Win,
    /// The opponent can force the capture of this player's royal.
    Loss,
    /// Neither side can force a royal capture.
    Draw,
    /// A search found no forced result within `no_result_within` plies: the distance is
    /// larger, or it is a draw. Tables never answer this.
    Unknown,
}

/// Where an answer came from.
#[derive(Clone, Copy, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The solved table of the position's closed game: every value exact, draws included.
    Table,
    /// A proof search (no table holds the position, as for every real-game position):
    /// wins and losses it reports are exact; the rest is `unknown` with the depth searched.
    Search,
    /// The proof store: an earlier search (in the background, by `shogi4 prove`, or in an
    /// imported file) had proven the position's value before this request; the moves were
    /// searched again for this answer.
    Store,
    /// A published proof certificate covers the position (`certificate` names its file in
    /// the server's `tables/certificates/`; it was checked by the rules alone when the server
    /// first loaded that file, and `shogi4 verify-proof FILE` checks it again anywhere): its value is proven,
    /// its bounds may be narrowed by what searches found; the moves were searched for this
    /// answer.
    Certificate,
}

/// What a search did for an answer.
#[derive(Clone, Copy, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct SearchStats {
    /// Positions examined (expanded, or generated and looked up).
    pub nodes: u64,
    /// Wall-clock milliseconds.
    pub millis: u64,
}

impl SearchStats {
    fn new(nodes: u64, elapsed: std::time::Duration) -> SearchStats {
        SearchStats { nodes, millis: elapsed.as_millis() as u64 }
    }
}

/// A value as the API states it: category, the exact distance or its bounds, and for unknown
/// results the depth searched without finding one.
struct Stated {
    category: Category,
    dtw: Option<u32>,
    bounds: Option<(u32, u32)>,
    no_result_within: Option<u32>,
}

impl From<Value> for Stated {
    fn from(value: Value) -> Stated {
        Stated { category: value.into(), dtw: value.dtw(), bounds: None, no_result_within: None }
    }
}

impl From<Outcome> for Stated {
    fn from(outcome: Outcome) -> Stated {
        match outcome {
            Outcome::Proven(value) => value.into(),
            Outcome::Bounded { win, at_least, at_most } => Stated {
                category: if win { Category::Win } else { Category::Loss },
                dtw: None,
                bounds: Some((at_least, at_most)),
                no_result_within: None,
            },
            Outcome::Unknown { no_result_within } => Stated {
                category: Category::Unknown,
                dtw: None,
                bounds: None,
                no_result_within: Some(no_result_within),
            },
        }
    }
}

impl From<Value> for Category {
    fn from(value: Value) -> Category {
        match value {
            Value::Win(_) => Category::Win,
            Value::Loss(_) => Category::Loss,
            Value::Draw => Category::Draw,
        }
    }
}

/// A player.
#[derive(Clone, Copy, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The first player (SFEN `b`, Fairy-Stockfish FEN `w`, uppercase letters).
    First,
    /// The second player (SFEN `w`, Fairy-Stockfish FEN `b`, lowercase letters).
    Second,
}

impl From<Color> for Side {
    fn from(color: Color) -> Side {
        match color {
            Color::First => Side::First,
            Color::Second => Side::Second,
        }
    }
}

/// One legal move, valued from the point of view of the player making it.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct MoveInfo {
    /// The move: `a2a3` (step), `b1b3` (jump), `a3a4+` (promotes), `C@b2` (drop).
    #[serde(rename = "move")]
    #[schema(example = "a1b2")]
    pub notation: String,
    /// SFEN of the position after the move; null when the move captures the royal.
    pub sfen: Option<String>,
    /// Fairy-Stockfish FEN of the position after the move; null when it captures the royal.
    pub fen: Option<String>,
    /// What this move is worth to the player making it (the side to move of the probed
    /// position): `win` if it keeps or achieves a forced win.
    pub category: Category,
    /// Plies from the probed position to the royal capture if this move is played and both
    /// sides then play perfectly, counting this move: 1 for a royal capture. For the best move
    /// this equals the position's `dtw`. Null for draws, unknown results and proven results
    /// whose distance is only bounded.
    pub dtw: Option<u32>,
    /// For a proven `win` or `loss` whose exact distance the search did not establish: the
    /// distance, counted as `dtw` is, is at least this (every shorter one was refuted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw_at_least: Option<u32>,
    /// For a proven `win` or `loss` whose exact distance the search did not establish: the
    /// distance is at most this (a forced result within it was proven).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw_at_most: Option<u32>,
    /// For an `unknown` move (search only): no forced result within this many plies from the
    /// probed position, this move included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_result_within: Option<u32>,
    /// It captures a piece (the royal included).
    pub capture: bool,
    /// It promotes the moving piece.
    pub promotion: bool,
    /// It jumps over a friendly piece.
    pub jump: bool,
    /// It drops a piece from the hand.
    pub drop: bool,
    /// It captures the opponent's royal: the game ends, won.
    pub royal_capture: bool,
    /// For a royal capture only: the game's last position in SFEN syntax (the capturing piece
    /// on the royal's square, the hands unchanged, the loser to move), for a board to show.
    /// It has one royal, so it is not a position the API accepts.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "K3/4/4/4 w C 1")]
    pub after_capture: Option<String>,
}

/// What an answer says of its position's value, in the same words for every endpoint: the
/// category for the side to move, the distance (exact, or its bounds), how deep an unknown
/// result was searched, and where the value came from.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct Verdict {
    /// The value for the side to move.
    pub category: Category,
    /// Distance to win: plies until the royal is captured under perfect play (the winner
    /// shortens, the loser lengthens). Odd when the side to move wins, even when it loses;
    /// 1 = it can capture the royal now; 0 = it has no legal move and has lost. Null for draws,
    /// unknown results and proven results whose distance is only bounded.
    pub dtw: Option<u32>,
    /// For a `win` or `loss` proven by search without its exact distance: the distance to win
    /// is at least this (every shorter distance was refuted). Same parity as `dtw` would have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw_at_least: Option<u32>,
    /// For a `win` or `loss` proven by search without its exact distance: the distance to win
    /// is at most this (a forced royal capture within it was proven).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw_at_most: Option<u32>,
    /// For an `unknown` result: neither side can force the royal capture within this many
    /// plies (the search went that deep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_result_within: Option<u32>,
    /// Where the answer came from.
    pub source: Source,
    /// For `source: certificate`: the certificate's file name (`d1d2.s4cert`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
}

impl Verdict {
    fn new(stated: Stated, source: Source) -> Verdict {
        Verdict {
            category: stated.category,
            dtw: stated.dtw,
            dtw_at_least: stated.bounds.map(|b| b.0),
            dtw_at_most: stated.bounds.map(|b| b.1),
            no_result_within: stated.no_result_within,
            source,
            certificate: None,
        }
    }

    /// The value proven by the certificate in the file `name`.
    fn certified_by(&mut self, name: &str) {
        self.source = Source::Certificate;
        self.certificate = Some(name.to_string());
    }
}

/// The solved value of a position and of each of its moves.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[schema(example = json!({
    "sfen": "k3/4/4/K3 b C 1", "fen": "k3/4/4/K3[P] w - - 0 1", "material": "KKC", "side_to_move": "first",
    "category": "win", "dtw": 9, "source": "table",
    "moves": [{"move": "a1b2", "sfen": "k3/4/1K2/4 w C 1", "fen": "k3/4/1K2/4[P] b - - 0 1", "category": "win", "dtw": 9,
               "capture": false, "promotion": false, "jump": false, "drop": false, "royal_capture": false}]
}))]
pub struct ProbeResponse {
    /// The position in canonical SFEN.
    pub sfen: String,
    /// The position in Fairy-Stockfish FEN.
    pub fen: String,
    /// Its closed game: `KK` plus the non-royal pieces in C, F, R, T order.
    pub material: String,
    /// The player to move.
    pub side_to_move: Side,
    /// Its value for the player to move, and where it came from.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// For `source: search`: the work it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchStats>,
    /// Every legal move, best first: exact wins by shortest `dtw`, bounded wins by smallest
    /// `dtw_at_most`, then draws (tables) or unknown (search), then bounded losses by largest
    /// `dtw_at_most`, then exact losses by longest `dtw`; ties in move-generation order.
    pub moves: Vec<MoveInfo>,
    /// For a value that is not proven (`unknown`) only: what the engine makes of the
    /// position. An estimate, never a value: `category`, `dtw` and the bounds never come
    /// from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
}

/// The engine's estimate of a position no proof reaches: its score for the side to move, its
/// best move and the line it expects, and how far it looked. Nothing here is proven.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq)]
#[schema(example = json!({
    "expected_score": 0.731, "centipawns": 100, "best_move": "c1b2",
    "line": ["c1b2", "c4c3", "b2c3", "b4c3"], "depth": 12, "nodes": 143210
}))]
pub struct Estimate {
    /// The score the engine expects for the side to move, from 0 (it loses) to 1 (it wins),
    /// rounded to three decimals: the logistic curve its evaluation was fitted with.
    pub expected_score: f64,
    /// The evaluation for the side to move in centipawns (a carp is about 100); absent when
    /// the engine sees a royal capture instead (`engine_sees_capture_in`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub centipawns: Option<i32>,
    /// Plies to a royal capture on every line the engine searched: positive when the side to
    /// move captures, negative when it is captured. The engine prunes, so this is not a proof.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_sees_capture_in: Option<i32>,
    /// The engine's best move.
    pub best_move: String,
    /// The line the engine expects, from its best move.
    pub line: Vec<String>,
    /// The deepest iteration the engine completed, in plies.
    pub depth: u32,
    /// Positions the engine searched.
    pub nodes: u64,
}

/// One step of the line of best play.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct MainlineMove {
    /// The move.
    #[serde(rename = "move")]
    pub notation: String,
    /// SFEN after the move; null for the final royal capture.
    pub sfen: Option<String>,
    /// For the final royal capture only: the game's last position in SFEN syntax, as a move
    /// of `GET /probe` gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_capture: Option<String>,
    /// Plies left to the royal capture after this move (0 after the capture), on a line of
    /// best play. Absent on a forced line of a bounded result, which has `dtw_at_most`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw: Option<u32>,
    /// On a forced line of a bounded result: the royal capture comes within this many plies
    /// after this move (it may come sooner with best play).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw_at_most: Option<u32>,
}

/// The line of best play from a position to the royal capture.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[schema(example = json!({
    "sfen": "k3/4/1K2/4 b C 1", "material": "KKC", "category": "win", "dtw": 3, "source": "table", "winner": "first",
    "mainline": [
        {"move": "C@b3", "sfen": "k3/1C2/1K2/4 w - 1", "dtw": 2},
        {"move": "a4b4", "sfen": "1k2/1C2/1K2/4 b - 1", "dtw": 1},
        {"move": "b2b4", "sfen": null, "after_capture": "1K2/1C2/4/4 w - 1", "dtw": 0}
    ]
}))]
pub struct MainlineResponse {
    /// The position in canonical SFEN.
    pub sfen: String,
    /// Its closed game.
    pub material: String,
    /// Its value for the player to move, and where it came from. An exact `dtw` equals the
    /// length of `mainline`; with `dtw_at_most`, `mainline` is a forced winning line of at
    /// most that many moves, not necessarily the shortest.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Who captures the royal at the end of the line; null for draws and unknown results.
    pub winner: Option<Side>,
    /// The moves, each side playing its best (for a bounded result: the winner keeping a
    /// proven win, the loser its slowest known defence); empty for a draw (play goes on
    /// forever) or an unknown result.
    pub mainline: Vec<MainlineMove>,
}

/// Body of `POST /probe`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"positions": ["k3/4/4/K3 b C 1", "trfk/3p/P3/KFRT[] w - - 0 1"]}))]
pub struct BatchRequest {
    /// Positions in SFEN or Fairy-Stockfish FEN (JSON strings, so `+` needs no escaping).
    pub positions: Vec<String>,
}

/// One entry of a batch answer: exactly one of `result` and `error` is present.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchEntry {
    /// The position as sent.
    pub pos: String,
    /// The answer, as `GET /probe` gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ProbeResponse>,
    /// Why this entry has no answer, as the problem `GET /probe` would return.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Problem>,
}

/// Answer of `POST /probe`: one entry per position, in order.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResponse {
    /// The entries, in the order of the request.
    pub results: Vec<BatchEntry>,
}

/// What a proof certificate proves, once checked (`shogi4 certify` and `shogi4 verify-proof`
/// with `--json`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CertificateReport {
    /// The position proven, SFEN.
    pub sfen: String,
    /// `win` or `loss`, for the side to move.
    pub category: Category,
    /// The result comes within this many plies.
    pub dtw_at_most: u32,
    /// The winner's positions of the proof tree.
    pub winner_positions: u64,
    /// The loser's positions of the proof tree.
    pub loser_positions: u64,
    /// The proof's longest line in plies.
    pub longest_line: u32,
    /// The certificate file's size in bytes.
    pub file_size: u64,
}

/// A loaded table.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct TableInfo {
    /// The closed game.
    #[schema(example = "KKCF")]
    pub material: String,
    /// Positions (both sides to move, no symmetry folding).
    pub positions: u64,
    /// Slots in the file (positions folded by colour flip and mirror).
    pub slots: u64,
    /// Positions won by the side to move.
    pub wins: u64,
    /// Positions lost by the side to move.
    pub losses: u64,
    /// Drawn positions.
    pub draws: u64,
    /// The longest distance to win.
    pub max_dtw: u32,
    /// `histogram[d]`: positions at distance to win `d` (draws not counted).
    pub histogram: Vec<u64>,
    /// Distances of 254 plies or more, stored exactly beside the value bytes.
    pub overflow_entries: u64,
    /// File size in bytes.
    pub file_size: u64,
    /// XXH3-64 checksum of the whole file (its own field read as zero), hex.
    pub checksum: String,
    /// The game's longest win, with an example position; `null` when nothing is won.
    pub longest_win: Option<LongestWin>,
}

/// The longest win of a closed game and one position (the first in index order) that has it.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct LongestWin {
    /// Its distance in plies (odd: the winner makes the last move).
    pub dtw: u32,
    /// A position won in exactly `dtw` plies by the side to move.
    #[schema(example = "k3/4/4/K3 b C 1")]
    pub sfen: String,
}

/// Answer of `GET /tables`.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[schema(example = json!({"tables": [{"material": "KK", "positions": 480, "slots": 120, "wins": 168, "losses": 0,
    "draws": 312, "max_dtw": 1, "histogram": [0, 168], "overflow_entries": 0, "file_size": 248,
    "checksum": "139f5c3e0007b72f", "longest_win": {"dtw": 1, "sfen": "4/4/4/Kk2 b - 1"}}]}))]
pub struct TablesResponse {
    /// Every loaded table, smallest closed games first.
    pub tables: Vec<TableInfo>,
    /// Closed games of the configured set still being solved (their tables join `tables` as
    /// each is done).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub solving: Vec<String>,
}

/// One file a mirror can download from `GET /files/{name}`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct FileEntry {
    /// The file's name, as `GET /files/{name}` takes it.
    #[schema(example = "KKCF.s4tb")]
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// SHA-256 of its bytes, hex: what `sha256sum` prints for the downloaded copy.
    #[schema(example = "5f0c…")]
    pub sha256: String,
    /// For a table, its closed game.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub material: Option<String>,
}

/// Answer of `GET /files`: the table files this server serves, and the two files that
/// describe the set (`SHA256SUMS`, `manifest.json`).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct FilesResponse {
    /// Every table file served, smallest closed games first, then `SHA256SUMS` and
    /// `manifest.json`.
    pub files: Vec<FileEntry>,
}

/// One table of `manifest.json`: what `GET /tables` says of it, with its file's name and
/// SHA-256.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct ManifestEntry {
    /// The table.
    #[serde(flatten)]
    pub info: TableInfo,
    /// The file's name.
    pub file: String,
    /// SHA-256 of the file, hex.
    pub sha256: String,
}

/// `manifest.json`: every table of a set.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct Manifest {
    /// The tables, smallest closed games first.
    pub tables: Vec<ManifestEntry>,
}

impl Manifest {
    /// The file `manifest.json`, as the server sends it and `shogi4 publish` writes it.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("serialisable")
    }

    /// The file `SHA256SUMS` of the same tables, in the same order, as `sha256sum -c` reads it.
    pub fn sha256sums(&self) -> Vec<u8> {
        self.tables.iter().map(|t| format!("{}  {}\n", t.sha256, t.file)).collect::<String>().into_bytes()
    }
}

impl MoveInfo {
    fn build(before: &Position, mv: Move, result: Option<Position>, stated: Stated, flags: MoveFlags) -> MoveInfo {
        let (sfen, fen) = result.map(|p| p.to_sfen_and_fen()).unzip();
        MoveInfo {
            notation: mv.to_string(),
            sfen,
            fen,
            category: stated.category,
            dtw: stated.dtw,
            dtw_at_least: stated.bounds.map(|b| b.0),
            dtw_at_most: stated.bounds.map(|b| b.1),
            no_result_within: stated.no_result_within,
            capture: flags.capture,
            promotion: flags.promotion,
            jump: flags.jump,
            drop: flags.drop,
            royal_capture: flags.royal_capture,
            after_capture: before.sfen_after_royal_capture(mv),
        }
    }

    /// A move of `before`, from its table's answer.
    pub fn new(before: &Position, m: &MoveValue) -> MoveInfo {
        MoveInfo::build(before, m.mv, m.result, m.value.into(), m.flags)
    }

    /// A move of `before`, from a search's answer.
    pub fn searched(before: &Position, m: &MoveOutcome) -> MoveInfo {
        MoveInfo::build(before, m.mv, m.result, m.outcome.into(), m.flags)
    }
}

impl ProbeResponse {
    fn build(
        position: &Position,
        material: Material,
        stated: Stated,
        source: Source,
        search: Option<SearchStats>,
        moves: Vec<MoveInfo>,
    ) -> ProbeResponse {
        let (sfen, fen) = position.to_sfen_and_fen();
        ProbeResponse {
            sfen,
            fen,
            material: material.to_string(),
            side_to_move: position.turn().into(),
            verdict: Verdict::new(stated, source),
            search,
            moves,
            estimate: None,
        }
    }

    /// The same answer with the engine's estimate, which only an unproven answer carries.
    pub fn with_estimate(mut self, estimate: Estimate) -> ProbeResponse {
        if self.verdict.category == Category::Unknown {
            self.estimate = Some(estimate);
        }
        self
    }

    /// The same answer, its value proven by the certificate in the file `name`.
    pub fn certified_by(mut self, name: &str) -> ProbeResponse {
        self.verdict.certified_by(name);
        self
    }

    /// The answer of `GET /probe` for `position`, whose table gave `result`.
    pub fn new(position: &Position, result: &ProbeResult) -> ProbeResponse {
        let moves = result.moves.iter().map(|m| MoveInfo::new(position, m)).collect();
        ProbeResponse::build(position, result.material, result.value.into(), Source::Table, None, moves)
    }

    /// The answer of `GET /probe` for `position`, which a search analysed; `source` is
    /// [`Source::Search`], or [`Source::Store`] when the store had proven its value before.
    pub fn searched(position: &Position, analysis: &Analysis, source: Source) -> ProbeResponse {
        let moves = analysis.moves.iter().map(|m| MoveInfo::searched(position, m)).collect();
        let stats = SearchStats::new(analysis.nodes, analysis.elapsed);
        ProbeResponse::build(position, position.material(), analysis.outcome.into(), source, Some(stats), moves)
    }
}

impl MainlineResponse {
    fn build(position: &Position, stated: Stated, source: Source, steps: &[MainlineStep]) -> MainlineResponse {
        let exact = stated.bounds.is_none();
        let winner = match stated.category {
            Category::Win => Some(position.turn().into()),
            Category::Loss => Some((!position.turn()).into()),
            Category::Draw | Category::Unknown => None,
        };
        MainlineResponse {
            sfen: position.to_sfen(),
            material: position.material().to_string(),
            verdict: Verdict::new(stated, source),
            winner,
            mainline: steps
                .iter()
                .scan(*position, |before, s| {
                    let step = MainlineMove {
                        notation: s.mv.to_string(),
                        sfen: s.result.map(|p| p.to_sfen()),
                        after_capture: before.sfen_after_royal_capture(s.mv),
                        dtw: exact.then_some(s.dtw_after),
                        dtw_at_most: (!exact).then_some(s.dtw_after),
                    };
                    if let Some(next) = s.result {
                        *before = next;
                    }
                    Some(step)
                })
                .collect(),
        }
    }

    /// The answer of `GET /mainline` for `position` from its table.
    pub fn new(position: &Position, line: &Mainline) -> MainlineResponse {
        MainlineResponse::build(position, line.value.into(), Source::Table, &line.steps)
    }

    /// The answer of `GET /mainline` for `position` from a search: what it established and
    /// the line that shows it (empty when it proved nothing); `source` as for a probe.
    pub fn searched(position: &Position, line: &Line, source: Source) -> MainlineResponse {
        MainlineResponse::build(position, line.outcome.into(), source, &line.steps)
    }

    /// The same answer, its value proven by the certificate in the file `name`.
    pub fn certified_by(mut self, name: &str) -> MainlineResponse {
        self.verdict.certified_by(name);
        self
    }
}

impl TableInfo {
    /// The description of a table. It scans the value bytes once (for the longest win), so
    /// it is built when a table is loaded and kept.
    pub fn new<B: AsRef<[u8]>>(table: &Table<B>) -> TableInfo {
        let header = table.header();
        let s = &header.statistics;
        TableInfo {
            material: header.material.to_string(),
            positions: s.positions,
            slots: header.slots,
            wins: s.wins,
            losses: s.losses,
            draws: s.draws,
            max_dtw: s.max_dtw,
            histogram: s.histogram.clone(),
            overflow_entries: header.overflow_entries,
            file_size: table.size(),
            checksum: format!("{:016x}", header.checksum),
            longest_win: table.longest_win().map(|(dtw, position)| LongestWin { dtw, sfen: position.to_sfen() }),
        }
    }
}
