//! RFC 9457 problem documents: what went wrong, where and why, as the API sends it with
//! `application/problem+json` and as `shogi4 … --json` prints it.

use serde::Serialize;
use shogi4_engine::{Material, NotationError};
use shogi4_tablebase::ProbeError;
use utoipa::ToSchema;

/// An RFC 9457 problem document.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
#[schema(example = json!({
    "type": "/problems/unparsable-position",
    "title": "Unparsable position",
    "status": 400,
    "detail": "invalid position notation at character 14: unknown piece letter 'X' (pieces are K, C, F, R, T; lowercase for the second player)",
    "offset": 14
}))]
pub struct Problem {
    /// A URI reference naming the kind of problem (stable; documented under `/docs`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Short human-readable summary of the kind of problem.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What exactly went wrong with this request.
    pub detail: String,
    /// For unparsable positions: the character offset (0-based) of the problem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// For missing tables: the position's closed game.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub material: Option<String>,
    /// For missing tables: the closed games this server has tables for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loaded: Option<Vec<String>>,
}

impl Problem {
    /// A problem of the kind `/problems/{slug}`.
    pub fn new(slug: &str, title: &str, status: u16, detail: impl Into<String>) -> Problem {
        Problem {
            kind: format!("/problems/{slug}"),
            title: title.to_string(),
            status,
            detail: detail.into(),
            offset: None,
            material: None,
            loaded: None,
        }
    }

    /// A position that cannot be read (400, with the character offset) or that breaks the
    /// rules (422).
    pub fn from_notation(error: &NotationError) -> Problem {
        match error {
            NotationError::Syntax(e) => Problem {
                offset: Some(e.offset),
                ..Problem::new("unparsable-position", "Unparsable position", 400, error.to_string())
            },
            NotationError::Illegal(_) => Problem::new("illegal-position", "Illegal position", 422, error.to_string()),
        }
    }

    /// A position the tables cannot answer: no table (404, naming the closed game and the
    /// loaded ones), or a damaged table (500: our fault, details logged, not sent).
    pub fn from_probe(error: &ProbeError) -> Problem {
        match error {
            ProbeError::NoTable { material, loaded } => Problem {
                material: Some(material.to_string()),
                loaded: Some(loaded.iter().map(Material::to_string).collect()),
                ..Problem::new("no-table", "No table for this closed game", 404, error.to_string())
            },
            ProbeError::Inconsistent { .. } | ProbeError::Corrupt { .. } => Problem::internal(),
        }
    }

    /// Our own fault (500); the cause is logged by whoever caught it, never sent.
    pub fn internal() -> Problem {
        Problem::new("internal", "Internal server error", 500, "an internal error occurred; it has been logged")
    }
}
