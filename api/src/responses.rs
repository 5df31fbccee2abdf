//! The answers: probe, mainline, batch and table descriptions, with their builders from
//! tablebase results. Engine and tablebase types are converted here and nowhere else.

use serde::{Deserialize, Serialize};
use shogi4_engine::{Color, Position};
use shogi4_tablebase::{Header, Mainline, MoveValue, ProbeResult, Value};
use utoipa::ToSchema;

use crate::Problem;

/// Win, loss or draw.
#[derive(Clone, Copy, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// The player in question can force the capture of the opponent's royal.
    Win,
    /// The opponent can force the capture of this player's royal.
    Loss,
    /// Neither side can force a royal capture.
    Draw,
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
    /// this equals the position's `dtw`. Null for draws.
    pub dtw: Option<u32>,
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
}

/// The solved value of a position and of each of its moves.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[schema(example = json!({
    "sfen": "k3/4/4/K3 b C 1", "fen": "k3/4/4/K3[C] w 0 1", "material": "KKC", "side_to_move": "first",
    "category": "win", "dtw": 9,
    "moves": [{"move": "a1b2", "sfen": "k3/4/1K2/4 w C 1", "fen": "k3/4/1K2/4[C] b 0 1", "category": "win", "dtw": 9,
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
    /// The value for the side to move.
    pub category: Category,
    /// Distance to win: plies until the royal is captured under perfect play (the winner
    /// shortens, the loser lengthens). Odd when the side to move wins, even when it loses;
    /// 1 = it can capture the royal now; 0 = it has no legal move and has lost. Null for draws.
    pub dtw: Option<u32>,
    /// Every legal move, best first: wins by shortest `dtw`, then draws, then losses by
    /// longest `dtw`; ties in move-generation order.
    pub moves: Vec<MoveInfo>,
}

/// One step of the line of best play.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct MainlineMove {
    /// The move.
    #[serde(rename = "move")]
    pub notation: String,
    /// SFEN after the move; null for the final royal capture.
    pub sfen: Option<String>,
    /// Plies left to the royal capture after this move (0 after the capture).
    pub dtw: u32,
}

/// The line of best play from a position to the royal capture.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[schema(example = json!({
    "sfen": "k3/4/1K2/4 b C 1", "material": "KKC", "category": "win", "dtw": 3, "winner": "first",
    "mainline": [
        {"move": "C@b3", "sfen": "k3/1C2/1K2/4 w - 1", "dtw": 2},
        {"move": "a4b4", "sfen": "1k2/1C2/1K2/4 b - 1", "dtw": 1},
        {"move": "b2b4", "sfen": null, "dtw": 0}
    ]
}))]
pub struct MainlineResponse {
    /// The position in canonical SFEN.
    pub sfen: String,
    /// Its closed game.
    pub material: String,
    /// The value for the side to move.
    pub category: Category,
    /// Plies to the royal capture; null for draws. Equals the length of `mainline`.
    pub dtw: Option<u32>,
    /// Who captures the royal at the end of the line; null for draws.
    pub winner: Option<Side>,
    /// The moves, each side playing its best; empty for a draw (play goes on forever).
    pub mainline: Vec<MainlineMove>,
}

/// Body of `POST /probe`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"positions": ["k3/4/4/K3 b C 1", "trfk/3c/C3/KFRT[] w 0 1"]}))]
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
}

/// Answer of `GET /tables`.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[schema(example = json!({"tables": [{"material": "KK", "positions": 480, "slots": 120, "wins": 168, "losses": 0,
    "draws": 312, "max_dtw": 1, "histogram": [0, 168], "overflow_entries": 0, "file_size": 248,
    "checksum": "139f5c3e0007b72f"}]}))]
pub struct TablesResponse {
    /// Every loaded table, smallest closed games first.
    pub tables: Vec<TableInfo>,
}

impl MoveInfo {
    /// A move of a probe answer.
    pub fn new(m: &MoveValue) -> MoveInfo {
        MoveInfo {
            notation: m.mv.to_string(),
            sfen: m.result.map(|p| p.to_sfen()),
            fen: m.result.map(|p| p.to_fen()),
            category: m.value.into(),
            dtw: m.value.dtw(),
            capture: m.flags.capture,
            promotion: m.flags.promotion,
            jump: m.flags.jump,
            drop: m.flags.drop,
            royal_capture: m.flags.royal_capture,
        }
    }
}

impl ProbeResponse {
    /// The answer of `GET /probe` for `position`, whose probe gave `result`.
    pub fn new(position: &Position, result: &ProbeResult) -> ProbeResponse {
        ProbeResponse {
            sfen: position.to_sfen(),
            fen: position.to_fen(),
            material: result.material.to_string(),
            side_to_move: position.turn().into(),
            category: result.value.into(),
            dtw: result.value.dtw(),
            moves: result.moves.iter().map(MoveInfo::new).collect(),
        }
    }
}

impl MainlineResponse {
    /// The answer of `GET /mainline` for `position`.
    pub fn new(position: &Position, line: &Mainline) -> MainlineResponse {
        let winner = match line.value {
            Value::Win(_) => Some(position.turn().into()),
            Value::Loss(_) => Some((!position.turn()).into()),
            Value::Draw => None,
        };
        MainlineResponse {
            sfen: position.to_sfen(),
            material: line.material.to_string(),
            category: line.value.into(),
            dtw: line.value.dtw(),
            winner,
            mainline: line
                .steps
                .iter()
                .map(|s| MainlineMove {
                    notation: s.mv.to_string(),
                    sfen: s.result.map(|p| p.to_sfen()),
                    dtw: s.dtw_after,
                })
                .collect(),
        }
    }
}

impl TableInfo {
    /// The description of a table with this header, `file_size` bytes long.
    pub fn new(header: &Header, file_size: u64) -> TableInfo {
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
            file_size,
            checksum: format!("{:016x}", header.checksum),
        }
    }
}
