//! The server's one error type: every failure becomes an RFC 9457 `application/problem+json`
//! body with the status that fits it. Only our own faults are 500, and they are logged.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use shogi4_engine::{Material, NotationError};
use shogi4_tablebase::ProbeError;
use utoipa::ToSchema;

/// An RFC 9457 problem document.
#[derive(Clone, Debug, Serialize, ToSchema)]
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

/// Everything a request can fail with.
#[derive(Debug)]
pub enum ApiError {
    /// The position string is not valid notation (400).
    Unparsable(NotationError),
    /// The position is well formed but illegal (422).
    Illegal(NotationError),
    /// No table for the position's closed game (404).
    NoTable(ProbeError),
    /// The query string or JSON body is malformed (400).
    BadRequest(String),
    /// A batch with more positions than allowed (413).
    BatchTooLarge {
        /// Positions sent.
        sent: usize,
        /// The maximum.
        max: usize,
    },
    /// The request body exceeds the limit (413).
    BodyTooLarge(String),
    /// The URI exceeds the limit (414).
    UriTooLong(usize),
    /// No such route (404).
    NotFound(String),
    /// The route does not take this method (405).
    MethodNotAllowed(String),
    /// Too many requests in flight (429).
    Overloaded,
    /// The request took too long (503).
    Timeout,
    /// Our own fault (500).
    Internal(String),
}

impl ApiError {
    /// A tablebase failure: a missing table (404), or a damaged one (our fault, 500).
    pub fn from_probe(error: ProbeError) -> ApiError {
        match error {
            ProbeError::NoTable { .. } => ApiError::NoTable(error),
            ProbeError::Inconsistent { .. } => ApiError::Internal(error.to_string()),
        }
    }

    /// Reads a position, telling unparsable (400) from illegal (422).
    pub fn from_notation(error: NotationError) -> ApiError {
        match error {
            NotationError::Syntax(_) => ApiError::Unparsable(error),
            NotationError::Illegal(_) => ApiError::Illegal(error),
        }
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unparsable(_) | ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Illegal(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NoTable(_) | ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::BatchTooLarge { .. } | ApiError::BodyTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UriTooLong(_) => StatusCode::URI_TOO_LONG,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Overloaded => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Timeout => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The problem document.
    pub fn problem(&self) -> Problem {
        let (slug, title) = match self {
            ApiError::Unparsable(_) => ("unparsable-position", "Unparsable position"),
            ApiError::Illegal(_) => ("illegal-position", "Illegal position"),
            ApiError::NoTable(_) => ("no-table", "No table for this closed game"),
            ApiError::BadRequest(_) => ("bad-request", "Malformed request"),
            ApiError::BatchTooLarge { .. } => ("batch-too-large", "Too many positions in one batch"),
            ApiError::BodyTooLarge(_) => ("body-too-large", "Request body too large"),
            ApiError::UriTooLong(_) => ("uri-too-long", "URI too long"),
            ApiError::NotFound(_) => ("not-found", "No such endpoint"),
            ApiError::MethodNotAllowed(_) => ("method-not-allowed", "Method not allowed"),
            ApiError::Overloaded => ("overloaded", "Too many requests in flight"),
            ApiError::Timeout => ("timeout", "Request timed out"),
            ApiError::Internal(_) => ("internal", "Internal server error"),
        };
        let detail = match self {
            ApiError::Unparsable(e) | ApiError::Illegal(e) => e.to_string(),
            ApiError::NoTable(e) => e.to_string(),
            ApiError::BadRequest(m) | ApiError::BodyTooLarge(m) | ApiError::NotFound(m) => m.clone(),
            ApiError::MethodNotAllowed(m) => m.clone(),
            ApiError::BatchTooLarge { sent, max } => format!("{sent} positions sent; at most {max} per batch"),
            ApiError::UriTooLong(max) => format!("the URI is longer than {max} bytes"),
            ApiError::Overloaded => "the server is at its concurrency limit; retry shortly".to_string(),
            ApiError::Timeout => "the request did not finish in time".to_string(),
            ApiError::Internal(_) => "an internal error occurred; it has been logged".to_string(),
        };
        let mut problem = Problem {
            kind: format!("/problems/{slug}"),
            title: title.to_string(),
            status: self.status().as_u16(),
            detail,
            offset: None,
            material: None,
            loaded: None,
        };
        match self {
            ApiError::Unparsable(NotationError::Syntax(e)) => problem.offset = Some(e.offset),
            ApiError::NoTable(ProbeError::NoTable { material, loaded }) => {
                problem.material = Some(material.to_string());
                problem.loaded = Some(loaded.iter().map(Material::to_string).collect());
            }
            _ => {}
        }
        problem
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(cause) = &self {
            tracing::error!(%cause, "internal error");
        }
        let problem = self.problem();
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (self.status(), body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        response
    }
}
