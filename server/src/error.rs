//! The server's one error type: every failure becomes an RFC 9457 `application/problem+json`
//! body with the status that fits it. Only our own faults are 500, and they are logged.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
pub use shogi4_api::{Problem, ProblemType};
use shogi4_engine::NotationError;
use shogi4_tablebase::ProbeError;

/// Everything a request can fail with.
#[derive(Debug)]
pub enum ApiError {
    /// The position string is not valid notation (400) or describes an illegal position (422).
    Position(NotationError),
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
    /// The request body did not arrive within this time (408).
    BodyTimeout(std::time::Duration),
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
    /// Every search worker stayed busy for the whole search budget (503).
    SearchBusy,
    /// The position's table is being solved right now (503).
    BeingSolved(shogi4_engine::Material),
    /// The client's rate limit is spent (429).
    RateLimited {
        /// What the request costs, in tokens.
        cost: u32,
        /// When enough tokens will be back.
        retry_after: std::time::Duration,
        /// The bucket's size.
        limit: u32,
        /// Tokens left now.
        remaining: u32,
    },
    /// The table's file is served mapped and changed after it was verified (503).
    TableChanged {
        /// The table's closed game.
        material: shogi4_engine::Material,
        /// What changed.
        reason: String,
    },
    /// No served file has this name (404).
    NoFile(String),
    /// Every download slot is taken, or the client's share of them (503).
    DownloadsBusy(String),
    /// A `Range` that starts past the end of a file of this many bytes (416).
    RangeNotSatisfiable(u64),
    /// Our own fault (500).
    Internal(String),
}

impl ApiError {
    /// A tablebase failure: a missing table (404), or a damaged one (our fault, 500).
    pub fn from_probe(error: ProbeError) -> ApiError {
        match error {
            ProbeError::NoTable { .. } => ApiError::NoTable(error),
            ProbeError::Inconsistent { .. } | ProbeError::Corrupt { .. } => ApiError::Internal(error.to_string()),
        }
    }

    /// The kind of problem, from the one catalogue.
    pub fn kind(&self) -> ProblemType {
        match self {
            ApiError::Position(NotationError::Syntax(_)) => ProblemType::UnparsablePosition,
            ApiError::Position(NotationError::Illegal(_)) => ProblemType::IllegalPosition,
            ApiError::BadRequest(_) => ProblemType::BadRequest,
            ApiError::NoTable(_) => ProblemType::NoTable,
            ApiError::NotFound(_) => ProblemType::NotFound,
            ApiError::NoFile(_) => ProblemType::NoSuchFile,
            ApiError::RangeNotSatisfiable(_) => ProblemType::RangeNotSatisfiable,
            ApiError::BatchTooLarge { .. } => ProblemType::BatchTooLarge,
            ApiError::BodyTooLarge(_) => ProblemType::BodyTooLarge,
            ApiError::BodyTimeout(_) => ProblemType::BodyTimeout,
            ApiError::UriTooLong(_) => ProblemType::UriTooLong,
            ApiError::MethodNotAllowed(_) => ProblemType::MethodNotAllowed,
            ApiError::Overloaded => ProblemType::Overloaded,
            ApiError::RateLimited { .. } => ProblemType::RateLimited,
            ApiError::Timeout => ProblemType::Timeout,
            ApiError::SearchBusy => ProblemType::SearchBusy,
            ApiError::BeingSolved(_) => ProblemType::TableBeingSolved,
            ApiError::TableChanged { .. } => ProblemType::TableChanged,
            ApiError::DownloadsBusy(_) => ProblemType::DownloadsBusy,
            ApiError::Internal(_) => ProblemType::Internal,
        }
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.kind().status()).expect("the catalogue's statuses are valid")
    }

    /// The problem document.
    pub fn problem(&self) -> Problem {
        let kind = self.kind();
        match self {
            ApiError::Position(e) => Problem::from_notation(e),
            ApiError::NoTable(e) => Problem::from_probe(e),
            ApiError::Internal(_) => Problem::internal(),
            ApiError::BadRequest(m) => Problem::new(kind, m.clone()),
            ApiError::BatchTooLarge { sent, max } => {
                Problem::new(kind, format!("{sent} positions sent; at most {max} per batch"))
            }
            ApiError::BodyTooLarge(m) => Problem::new(kind, m.clone()),
            ApiError::BodyTimeout(deadline) => Problem::new(
                kind,
                format!("the request body did not arrive within {} ms (--body-timeout-ms)", deadline.as_millis()),
            ),
            ApiError::UriTooLong(max) => Problem::new(kind, format!("the URI is longer than {max} bytes")),
            ApiError::NotFound(m) => Problem::new(kind, m.clone()),
            ApiError::MethodNotAllowed(m) => Problem::new(kind, m.clone()),
            ApiError::Overloaded => Problem::new(kind, "the server is at its concurrency limit; retry shortly"),
            ApiError::RateLimited { cost, retry_after, limit, .. } if *cost > *limit => Problem::new(
                kind,
                format!(
                    "this request costs {cost} tokens, more than the {limit} a client can hold (retry after {:.1} s \
                     cannot help): send fewer positions per batch",
                    retry_after.as_secs_f64()
                ),
            ),
            ApiError::RateLimited { cost, retry_after, limit, .. } => Problem::new(
                kind,
                format!(
                    "this request costs {cost} tokens and your budget ({limit} at most) is spent; retry after {:.1} s \
                     (table probes cost 1, mainlines 5, searches 10; for bulk use, download the tables)",
                    retry_after.as_secs_f64()
                ),
            ),
            ApiError::BeingSolved(material) => Problem {
                material: Some(material.to_string()),
                ..Problem::new(
                    kind,
                    format!("the {material} table is being solved on this server right now; retry in a few seconds"),
                )
            },
            ApiError::TableChanged { material, reason } => Problem {
                material: Some(material.to_string()),
                ..Problem::new(
                    kind,
                    format!(
                        "the {material} table is served from its file, and {reason}; no answer is given from bytes \
                         that were not verified. The operator must restore the file and reload the tables"
                    ),
                )
            },
            ApiError::SearchBusy => Problem::new(
                kind,
                "positions without a table are answered by proof search, and every search worker stayed busy for \
                 the whole search budget; retry shortly",
            ),
            ApiError::Timeout => Problem::new(kind, "the request did not finish in time"),
            ApiError::NoFile(name) => Problem::new(
                kind,
                format!("this server serves no file named {name:?}; `GET /files` lists those it does"),
            ),
            ApiError::DownloadsBusy(reason) => Problem::new(
                kind,
                format!("{reason}; retry when one has finished (a mirror script resumes where it stopped)"),
            ),
            ApiError::RangeNotSatisfiable(len) => {
                Problem::new(kind, format!("the range starts past the end of the file, which has {len} bytes"))
            }
        }
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
        // Every refusal for load says when to come back.
        match &self {
            ApiError::Overloaded | ApiError::Timeout | ApiError::SearchBusy => {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            ApiError::BeingSolved(_) | ApiError::DownloadsBusy(_) => {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            ApiError::RangeNotSatisfiable(len) => {
                let value = HeaderValue::from_str(&format!("bytes */{len}")).expect("ASCII");
                response.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            ApiError::TableChanged { .. } => {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
            }
            ApiError::RateLimited { retry_after, limit, remaining, .. } => {
                let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
                let headers = response.headers_mut();
                headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
                headers.insert("x-ratelimit-limit", HeaderValue::from(*limit));
                headers.insert("x-ratelimit-remaining", HeaderValue::from(*remaining));
            }
            _ => {}
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of every variant (a new variant must be added here, or `kind`'s exhaustive
    /// match is the only place it is checked).
    fn every_error() -> Vec<ApiError> {
        let material: shogi4_engine::Material = "KKC".parse().unwrap();
        let syntax = shogi4_engine::Position::parse("x").unwrap_err();
        let illegal = shogi4_engine::Position::parse("kk2/4/4/K3 b - 1").unwrap_err();
        vec![
            ApiError::Position(syntax),
            ApiError::Position(illegal),
            ApiError::NoTable(ProbeError::NoTable { material, loaded: vec![] }),
            ApiError::BadRequest("x".into()),
            ApiError::BatchTooLarge { sent: 2, max: 1 },
            ApiError::BodyTooLarge("x".into()),
            ApiError::BodyTimeout(std::time::Duration::from_secs(5)),
            ApiError::UriTooLong(10),
            ApiError::NotFound("x".into()),
            ApiError::MethodNotAllowed("x".into()),
            ApiError::Overloaded,
            ApiError::Timeout,
            ApiError::SearchBusy,
            ApiError::BeingSolved(material),
            ApiError::RateLimited {
                cost: 1,
                retry_after: std::time::Duration::from_millis(300),
                limit: 5,
                remaining: 0,
            },
            ApiError::TableChanged { material, reason: "x".into() },
            ApiError::NoFile("x".into()),
            ApiError::DownloadsBusy("x".into()),
            ApiError::RangeNotSatisfiable(10),
            ApiError::Internal("x".into()),
        ]
    }

    /// Each error answers as the catalogue says (type, title, status, `Retry-After`), and the
    /// served OpenAPI text lists its type: a type the server can emit is never undocumented.
    #[test]
    fn every_error_answers_as_the_catalogue_says_and_is_documented() {
        let spec = crate::openapi::spec_json();
        let mut seen = std::collections::HashSet::new();
        for error in every_error() {
            let kind = error.kind();
            seen.insert(kind);
            let problem = error.problem();
            assert_eq!((problem.kind.as_str(), problem.title.as_str()), (kind.uri().as_str(), kind.title()));
            assert_eq!(problem.status, kind.status());
            let response = error.into_response();
            assert_eq!(response.status().as_u16(), kind.status());
            assert_eq!(response.headers().contains_key(header::RETRY_AFTER), kind.retry_after(), "{kind:?}");
            assert!(!kind.cli_only(), "{kind:?}");
            assert!(spec.contains(&format!("`{}`", kind.uri())), "{kind:?} is missing from the OpenAPI text");
        }
        let served = ProblemType::ALL.iter().filter(|k| !k.cli_only()).count();
        assert_eq!(seen.len(), served, "a served kind no error produces");
    }
}
