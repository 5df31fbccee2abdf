//! `shogi4 certify` and `shogi4 verify-proof`: a proven position's certificate, written by
//! the search, and checked by the rules alone (`shogi4-certificate`, which knows no search).

use std::path::Path;

use shogi4_api::{Category, CertificateReport};
use shogi4_certificate::{verify, Verdict};

use super::grouped;
use super::probe::SearchBudget;
use crate::error::{parse_position, CliError};

/// Proves `pos` within `budget` and writes its certificate to `out`, checked before it is
/// reported.
pub fn certify(pos: &str, out: &Path, budget: &SearchBudget, json: bool) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    // Refused before the search, not after it.
    shogi4_tablebase::replaceable(out, shogi4_certificate::MAGIC).map_err(|e| CliError::Certificate(e.to_string()))?;
    let mut search = budget.search()?;
    let certificate = search.search.certify(&position, &budget.limits).ok_or_else(|| {
        CliError::Certificate(format!(
            "{}: no proof within the budget (nothing proven, or the proof tree could not be written out in time)",
            position.to_sfen()
        ))
    })?;
    let bytes = certificate.to_bytes();
    let verdict = verify(&bytes).map_err(|e| CliError::Certificate(format!("the certificate written fails: {e}")))?;
    shogi4_tablebase::write_atomically(out, &[&bytes])
        .map_err(|e| CliError::Certificate(format!("{}: {e}", out.display())))?;
    report(&verdict, bytes.len() as u64, json);
    Ok(())
}

/// Checks the certificate in `file` and says what it proves.
pub fn verify_proof(file: &Path, json: bool) -> Result<(), CliError> {
    let bytes = std::fs::read(file).map_err(|e| CliError::Certificate(format!("{}: {e}", file.display())))?;
    let verdict = verify(&bytes).map_err(|e| CliError::Certificate(format!("{}: refused: {e}", file.display())))?;
    report(&verdict, bytes.len() as u64, json);
    Ok(())
}

fn report(verdict: &Verdict, file_size: u64, json: bool) {
    let report = CertificateReport {
        sfen: verdict.root.to_sfen(),
        category: if verdict.root_wins { Category::Win } else { Category::Loss },
        dtw_at_most: verdict.bound,
        winner_positions: verdict.winner_positions,
        loser_positions: verdict.loser_positions,
        longest_line: verdict.longest_line,
        file_size,
    };
    if json {
        println!("{}", serde_json::to_string(&report).expect("serializable"));
        return;
    }
    let value = if verdict.root_wins { "wins" } else { "loses" };
    println!("position    {}", report.sfen);
    println!("proven      the side to move {value}, within {} plies", verdict.bound);
    println!(
        "proof tree  {} winner positions, {} loser positions, longest line {} plies",
        grouped(verdict.winner_positions),
        grouped(verdict.loser_positions),
        verdict.longest_line
    );
    println!("file        {} bytes", grouped(file_size));
}
