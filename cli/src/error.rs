//! The CLI's error: everything a command can fail with, printed as one line on stderr (with
//! `--json`, the same problem document the API would send).

use std::fmt;

use shogi4_api::{Problem, ProblemType};
use shogi4_engine::{NotationError, ParseMaterialError};
use shogi4_tablebase::{ProbeError, SolveError, TableError};

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// A position string was unreadable or illegal.
    Position(String, NotationError),
    /// A material name was invalid.
    Material(ParseMaterialError),
    /// A table could not be read or written.
    Table(TableError),
    /// A solve failed: too large for the memory allowed, its checkpoint refused, or its table
    /// not written.
    Solve(SolveError),
    /// A position could not be answered.
    Probe(ProbeError),
    /// The proof store could not be opened, read or written.
    Store(shogi4_proofs::StoreError),
    /// Tables failed their audit.
    AuditFailed(usize),
    /// Arguments that make no sense together.
    Usage(String),
    /// A distributed solve failed.
    Cluster(String),
    /// This process of a cluster found its own address taken before it could listen on it:
    /// nothing started, and a launcher may start the cluster again on other ports.
    AddressInUse(String),
    /// A certificate was refused by its checker, or none could be written.
    Certificate(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Position(text, e) => write!(f, "position {text:?}: {e}"),
            CliError::Material(e) => write!(f, "{e}"),
            // The library says what is wrong; which flag changes it is the CLI's to say.
            CliError::Solve(e @ SolveError::TooLarge { .. }) => write!(f, "{e}; the limit is --max-memory"),
            CliError::Solve(e) => write!(f, "{e}"),
            CliError::Table(e) => write!(f, "{e}"),
            CliError::Probe(e) => write!(f, "{e}"),
            CliError::Store(e) => write!(f, "{e}"),
            CliError::AuditFailed(n) => write!(f, "{n} table(s) failed the audit"),
            CliError::Usage(message) => write!(f, "{message}"),
            CliError::Cluster(message) | CliError::AddressInUse(message) | CliError::Certificate(message) => {
                write!(f, "{message}")
            }
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Position(_, e) => Some(e),
            CliError::Material(e) => Some(e),
            CliError::Table(e) => Some(e),
            CliError::Solve(e) => Some(e),
            CliError::Probe(e) => Some(e),
            CliError::Store(e) => Some(e),
            CliError::AuditFailed(_)
            | CliError::Usage(_)
            | CliError::Cluster(_)
            | CliError::AddressInUse(_)
            | CliError::Certificate(_) => None,
        }
    }
}

/// The exit code of a cluster process whose address was taken (`EX_TEMPFAIL`: try again);
/// every other failure exits with 1.
pub const ADDRESS_IN_USE_EXIT: u8 = 75;

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> std::process::ExitCode {
        match self {
            CliError::AddressInUse(_) => std::process::ExitCode::from(ADDRESS_IN_USE_EXIT),
            _ => std::process::ExitCode::FAILURE,
        }
    }

    /// The problem document for `--json` output: for positions and probes exactly the one the
    /// API sends (a damaged table's cause included, since here it is the operator who reads it).
    pub fn problem(&self) -> Problem {
        match self {
            CliError::Position(_, e) => Problem::from_notation(e),
            CliError::Probe(e @ ProbeError::NoTable { .. }) => Problem::from_probe(e),
            CliError::Probe(e) => Problem { detail: e.to_string(), ..Problem::from_probe(e) },
            CliError::Material(_) | CliError::Usage(_) => Problem::new(ProblemType::BadRequest, self.to_string()),
            CliError::Table(_) | CliError::Solve(_) => Problem::new(ProblemType::TableUnusable, self.to_string()),
            CliError::Store(_) => Problem::new(ProblemType::ProofStore, self.to_string()),
            CliError::AuditFailed(_) => Problem::new(ProblemType::AuditFailed, self.to_string()),
            CliError::Cluster(_) | CliError::AddressInUse(_) => {
                Problem::new(ProblemType::ClusterFailed, self.to_string())
            }
            CliError::Certificate(_) => Problem::new(ProblemType::CertificateRejected, self.to_string()),
        }
    }
}

impl From<ParseMaterialError> for CliError {
    fn from(e: ParseMaterialError) -> Self {
        CliError::Material(e)
    }
}

impl From<TableError> for CliError {
    fn from(e: TableError) -> Self {
        CliError::Table(e)
    }
}

impl From<shogi4_tablebase::FormatError> for CliError {
    fn from(e: shogi4_tablebase::FormatError) -> Self {
        CliError::Table(e.into())
    }
}

impl From<SolveError> for CliError {
    fn from(e: SolveError) -> Self {
        CliError::Solve(e)
    }
}

impl From<shogi4_proofs::StoreError> for CliError {
    fn from(e: shogi4_proofs::StoreError) -> Self {
        CliError::Store(e)
    }
}

impl From<ProbeError> for CliError {
    fn from(e: ProbeError) -> Self {
        CliError::Probe(e)
    }
}

/// Reads a position argument.
pub fn parse_position(text: &str) -> Result<shogi4_engine::Position, CliError> {
    shogi4_engine::Position::parse(text).map_err(|e| CliError::Position(text.to_string(), e))
}
