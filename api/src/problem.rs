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

/// Every kind of problem the server or the CLI reports: the one catalogue from which each
/// problem document's `type`, `title` and `status`, the server's `Retry-After` rule and the
/// OpenAPI text's list of problems are all derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProblemType {
    /// Position notation that cannot be read.
    UnparsablePosition,
    /// A malformed query string, body or argument.
    BadRequest,
    /// A position that breaks the rules.
    IllegalPosition,
    /// No table for the position's closed game.
    NoTable,
    /// No such endpoint.
    NotFound,
    /// No served file of that name.
    NoSuchFile,
    /// The endpoint does not take this method.
    MethodNotAllowed,
    /// Too many positions in one batch.
    BatchTooLarge,
    /// A request body over the limit.
    BodyTooLarge,
    /// A request body that did not arrive in time.
    BodyTimeout,
    /// A URI over the limit.
    UriTooLong,
    /// A byte range past the end of a file.
    RangeNotSatisfiable,
    /// The server is at its concurrency limit.
    Overloaded,
    /// The client's token bucket is spent.
    RateLimited,
    /// The request took too long.
    Timeout,
    /// Every search worker stayed busy.
    SearchBusy,
    /// The position's table is being solved.
    TableBeingSolved,
    /// A table's mapped file changed after it was verified.
    TableChanged,
    /// Every download slot is taken.
    DownloadsBusy,
    /// Our own fault.
    Internal,
    /// A table file cannot be used (the CLI).
    TableUnusable,
    /// The proof store cannot be used (the CLI).
    ProofStore,
    /// Tables failed their audit (the CLI).
    AuditFailed,
    /// A distributed solve failed (the CLI).
    ClusterFailed,
    /// A proof certificate was refused by its checker, or none could be written (the CLI).
    CertificateRejected,
}

impl ProblemType {
    /// Every kind, in the order the API's documentation lists them.
    pub const ALL: [ProblemType; 25] = [
        ProblemType::UnparsablePosition,
        ProblemType::BadRequest,
        ProblemType::IllegalPosition,
        ProblemType::NoTable,
        ProblemType::NotFound,
        ProblemType::NoSuchFile,
        ProblemType::MethodNotAllowed,
        ProblemType::BatchTooLarge,
        ProblemType::BodyTooLarge,
        ProblemType::BodyTimeout,
        ProblemType::UriTooLong,
        ProblemType::RangeNotSatisfiable,
        ProblemType::Overloaded,
        ProblemType::RateLimited,
        ProblemType::Timeout,
        ProblemType::SearchBusy,
        ProblemType::TableBeingSolved,
        ProblemType::TableChanged,
        ProblemType::DownloadsBusy,
        ProblemType::Internal,
        ProblemType::TableUnusable,
        ProblemType::ProofStore,
        ProblemType::AuditFailed,
        ProblemType::ClusterFailed,
        ProblemType::CertificateRejected,
    ];

    /// The `type` slug, stable: `/problems/{slug}`.
    pub fn slug(self) -> &'static str {
        self.entry().0
    }

    /// The title every problem of this kind carries.
    pub fn title(self) -> &'static str {
        self.entry().1
    }

    /// The HTTP status (the CLI's problems carry one too, for the same reader).
    pub fn status(self) -> u16 {
        self.entry().2
    }

    /// What else the document or the response carries, for the documentation.
    pub fn carries(self) -> &'static str {
        self.entry().3
    }

    /// Whether the server sends `Retry-After` with it: the refusals for load, which a client
    /// should retry later.
    pub fn retry_after(self) -> bool {
        matches!(
            self,
            ProblemType::Overloaded
                | ProblemType::RateLimited
                | ProblemType::Timeout
                | ProblemType::SearchBusy
                | ProblemType::TableBeingSolved
                | ProblemType::TableChanged
                | ProblemType::DownloadsBusy
        )
    }

    /// Whether only the CLI reports it (never the server).
    pub fn cli_only(self) -> bool {
        matches!(
            self,
            ProblemType::TableUnusable
                | ProblemType::ProofStore
                | ProblemType::AuditFailed
                | ProblemType::ClusterFailed
                | ProblemType::CertificateRejected
        )
    }

    /// The `type` URI reference.
    pub fn uri(self) -> String {
        format!("/problems/{}", self.slug())
    }

    /// (slug, title, status, what else it carries)
    fn entry(self) -> (&'static str, &'static str, u16, &'static str) {
        match self {
            ProblemType::UnparsablePosition => {
                ("unparsable-position", "Unparsable position", 400, "the character `offset` where reading failed")
            }
            ProblemType::BadRequest => ("bad-request", "Malformed request", 400, "malformed query string or body"),
            ProblemType::IllegalPosition => ("illegal-position", "Illegal position", 422, ""),
            ProblemType::NoTable => {
                ("no-table", "No table for this closed game", 404, "`material`, and the `loaded` closed games")
            }
            ProblemType::NotFound => ("not-found", "No such endpoint", 404, ""),
            ProblemType::NoSuchFile => ("no-such-file", "No such file", 404, "`GET /files` lists the served files"),
            ProblemType::MethodNotAllowed => ("method-not-allowed", "Method not allowed", 405, ""),
            ProblemType::BatchTooLarge => ("batch-too-large", "Too many positions in one batch", 413, ""),
            ProblemType::BodyTooLarge => ("body-too-large", "Request body too large", 413, ""),
            ProblemType::BodyTimeout => ("body-timeout", "Request body too slow", 408, ""),
            ProblemType::UriTooLong => ("uri-too-long", "URI too long", 414, ""),
            ProblemType::RangeNotSatisfiable => {
                ("range-not-satisfiable", "Range not satisfiable", 416, "`Content-Range: bytes */size`")
            }
            ProblemType::Overloaded => ("overloaded", "Too many requests in flight", 429, ""),
            ProblemType::RateLimited => {
                ("rate-limited", "Rate limit exceeded", 429, "`X-RateLimit-Limit`, `X-RateLimit-Remaining`")
            }
            ProblemType::Timeout => ("timeout", "Request timed out", 503, ""),
            ProblemType::SearchBusy => ("search-busy", "Every search worker is busy", 503, ""),
            ProblemType::TableBeingSolved => ("table-being-solved", "This table is being solved", 503, "`material`"),
            ProblemType::TableChanged => {
                ("table-changed", "This table's file changed on the server", 503, "`material`")
            }
            ProblemType::DownloadsBusy => ("downloads-busy", "Every download slot is taken", 503, ""),
            ProblemType::Internal => ("internal", "Internal server error", 500, "never expected: it is logged"),
            ProblemType::TableUnusable => ("table-unusable", "Table unusable", 500, ""),
            ProblemType::ProofStore => ("proof-store", "Proof store unusable", 500, ""),
            ProblemType::AuditFailed => ("audit-failed", "Audit failed", 500, ""),
            ProblemType::ClusterFailed => ("cluster-failed", "Distributed solve failed", 500, ""),
            ProblemType::CertificateRejected => {
                ("certificate-rejected", "No valid proof certificate", 422, "what the checker found wrong")
            }
        }
    }

    /// The list of the server's problems for the API's documentation (Markdown), one line
    /// each: URI, status, what else it carries, and `Retry-After` where it is sent.
    pub fn served_catalogue() -> String {
        ProblemType::ALL
            .iter()
            .filter(|kind| !kind.cli_only())
            .map(|kind| {
                let mut extras: Vec<&str> = Vec::new();
                if !kind.carries().is_empty() {
                    extras.push(kind.carries());
                }
                if kind.retry_after() {
                    extras.push("`Retry-After`");
                }
                let extras = if extras.is_empty() { String::new() } else { format!("; {}", extras.join("; ")) };
                format!("- `{}` ({}{extras}): {}\n", kind.uri(), kind.status(), kind.title())
            })
            .collect()
    }
}

impl Problem {
    /// A problem of kind `kind`, with this request's `detail`.
    pub fn new(kind: ProblemType, detail: impl Into<String>) -> Problem {
        Problem {
            kind: kind.uri(),
            title: kind.title().to_string(),
            status: kind.status(),
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
            NotationError::Syntax(e) => {
                Problem { offset: Some(e.offset), ..Problem::new(ProblemType::UnparsablePosition, error.to_string()) }
            }
            NotationError::Illegal(_) => Problem::new(ProblemType::IllegalPosition, error.to_string()),
        }
    }

    /// A position the tables cannot answer: no table (404, naming the closed game and the
    /// loaded ones), or a damaged table (500: our fault, details logged, not sent).
    pub fn from_probe(error: &ProbeError) -> Problem {
        match error {
            ProbeError::NoTable { material, loaded } => Problem {
                material: Some(material.to_string()),
                loaded: Some(loaded.iter().map(Material::to_string).collect()),
                ..Problem::new(ProblemType::NoTable, error.to_string())
            },
            ProbeError::Inconsistent { .. } | ProbeError::Corrupt { .. } => Problem::internal(),
        }
    }

    /// Our own fault (500); the cause is logged by whoever caught it, never sent.
    pub fn internal() -> Problem {
        Problem::new(ProblemType::Internal, "an internal error occurred; it has been logged")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_lists_every_kind_once_with_a_distinct_slug() {
        let slugs: std::collections::HashSet<&str> = ProblemType::ALL.iter().map(|k| k.slug()).collect();
        assert_eq!(slugs.len(), ProblemType::ALL.len());
        // ALL is in declaration order, so a kind inserted anywhere but at the end, and not
        // listed, moves the others off their places.
        for (i, kind) in ProblemType::ALL.iter().enumerate() {
            assert_eq!(*kind as usize, i, "{kind:?} is out of place in ALL");
        }
        for kind in ProblemType::ALL {
            assert!((400..600).contains(&kind.status()), "{kind:?}");
            assert!(!kind.retry_after() || matches!(kind.status(), 429 | 503), "{kind:?}");
        }
    }
}
