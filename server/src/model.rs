//! The JSON shapes of the API. Engine and tablebase types are converted here; the engine
//! itself knows nothing of JSON.

use serde::{Deserialize, Serialize};
use shogi4_engine::{Color, Move, Position};
use shogi4_tablebase::{MainlineStep, MoveValue, ProbeResult, Value};
use utoipa::{IntoParams, ToSchema};

use crate::error::Problem;

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

/// Query of `GET /probe` and `GET /mainline`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PositionQuery {
    /// The position, as SFEN (`trfk/3c/C3/KFRT b - 1`: side `b` is the first player) or as
    /// Fairy-Stockfish FEN (`trfk/3c/C3/KFRT[] w 0 1`: side `w` is the first player). `_` may
    /// replace spaces. In a URL, send `+` (promoted piece) as `%2B`: a bare `+` decodes to a space.
    #[param(example = "k3/4/4/K3_b_C_1")]
    pub pos: Option<String>,
}

/// One legal move, valued from the point of view of the player making it.
#[derive(Clone, Debug, Serialize, ToSchema)]
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
#[derive(Clone, Debug, Serialize, ToSchema)]
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
#[derive(Clone, Debug, Serialize, ToSchema)]
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
#[derive(Clone, Debug, Serialize, ToSchema)]
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
#[derive(Clone, Debug, Serialize, ToSchema)]
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
    /// File size in bytes.
    pub file_size: u64,
    /// XXH3-64 checksum of the table data, hex.
    pub checksum: String,
}

/// Answer of `GET /tables`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(example = json!({"tables": [{"material": "KK", "positions": 480, "slots": 120, "wins": 168, "losses": 0,
    "draws": 312, "max_dtw": 1, "file_size": 248, "checksum": "139f5c3e0007b72f"}]}))]
pub struct TablesResponse {
    /// Every loaded table, smallest closed games first.
    pub tables: Vec<TableInfo>,
}

/// Answer of `GET /health`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` once the tables are mapped.
    #[schema(example = "ok")]
    pub status: String,
    /// Number of tables served.
    pub tables: usize,
}

pub(crate) fn move_info(position: &Position, m: &MoveValue) -> MoveInfo {
    MoveInfo {
        notation: m.mv.to_string(),
        sfen: m.result.map(|p| p.to_sfen()),
        fen: m.result.map(|p| p.to_fen()),
        category: m.value.into(),
        dtw: m.value.dtw(),
        capture: m.capture,
        promotion: matches!(m.mv, Move::Board { promotes: true, .. }),
        jump: m.jump,
        drop: matches!(m.mv, Move::Drop { .. }),
        royal_capture: position.captures_royal(m.mv),
    }
}

pub(crate) fn probe_response(position: &Position, result: &ProbeResult) -> ProbeResponse {
    ProbeResponse {
        sfen: position.to_sfen(),
        fen: position.to_fen(),
        material: position.material().to_string(),
        side_to_move: position.turn().into(),
        category: result.value.into(),
        dtw: result.value.dtw(),
        moves: result.moves.iter().map(|m| move_info(position, m)).collect(),
    }
}

pub(crate) fn mainline_response(position: &Position, value: Value, line: &[MainlineStep]) -> MainlineResponse {
    let winner = match value {
        Value::Win(_) => Some(position.turn().into()),
        Value::Loss(_) => Some((!position.turn()).into()),
        Value::Draw => None,
    };
    MainlineResponse {
        sfen: position.to_sfen(),
        material: position.material().to_string(),
        category: value.into(),
        dtw: value.dtw(),
        winner,
        mainline: line
            .iter()
            .map(|s| MainlineMove { notation: s.mv.to_string(), sfen: s.result.map(|p| p.to_sfen()), dtw: s.dtw_after })
            .collect(),
    }
}
