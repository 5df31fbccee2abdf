//! The JSON vocabulary of the Shogi4 tablebase, shared by the HTTP API and the `shogi4` CLI:
//! one type per answer, built from table or search results in one place, so that both
//! edges say the same thing in the same words and the OpenAPI schemas follow the code.
//!
//! ```
//! use shogi4_api::ProbeResponse;
//! use shogi4_engine::Position;
//! use shogi4_tablebase::{solve, Silent, Table};
//!
//! let table = Table::new(solve("KKC".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
//! let position = Position::parse("k3/4/4/K3 b C 1").unwrap();
//! let answer = ProbeResponse::new(&position, &table.probe(&position).unwrap());
//! assert_eq!(answer.verdict.dtw, Some(9));
//! assert_eq!(serde_json::to_value(&answer).unwrap()["category"], "win");
//! ```

pub mod cli;
mod problem;
mod responses;

pub use problem::{Problem, ProblemType};
pub use responses::{
    BatchEntry, BatchRequest, BatchResponse, Category, CertificateReport, Estimate, FileEntry, FilesResponse,
    LongestWin, MainlineMove, MainlineResponse, Manifest, ManifestEntry, MoveInfo, ProbeResponse, SearchStats, Side,
    Source, TableInfo, TablesResponse, Verdict,
};
