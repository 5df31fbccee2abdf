//! The server's own request and answer shapes: the `?pos=` query and `GET /health`. Every
//! answer about positions and tables comes from `shogi4-api`, shared with the CLI.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Query of `GET /probe` and `GET /mainline`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PositionQuery {
    /// The position, as SFEN (`trfk/3c/C3/KFRT b - 1`: side `b` is the first player) or as
    /// Fairy-Stockfish FEN (`trfk/3p/P3/KFRT[] w - - 0 1`: side `w` is the first player). `_` may
    /// replace spaces. In a URL, send `+` (promoted piece) as `%2B`: a bare `+` decodes to a space.
    // Optional here only so that a missing `pos` gets our own problem document; the API
    // requires it.
    #[param(example = "k3/4/4/K3_b_C_1", required = true)]
    pub pos: Option<String>,
}

/// Answer of `GET /health`: 200 when every table in the directory is served, 503 otherwise.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok`; `no-tables` (nothing to serve) or `degraded` (some files refused) with 503.
    #[schema(example = "ok")]
    pub status: String,
    /// Number of tables served.
    pub tables: usize,
    /// Table files refused, and why.
    pub rejected: Vec<RejectedTable>,
    /// Closed games still being solved in the background.
    pub solving: Vec<String>,
    /// Why the background solve stopped, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solve_failure: Option<String>,
}

/// A table file the server refused.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RejectedTable {
    /// The file.
    pub file: String,
    /// Why it was refused.
    pub error: String,
}
