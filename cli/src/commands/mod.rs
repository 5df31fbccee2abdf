//! One module per subcommand.

pub mod analyse;
pub mod audit;
pub mod certify;
pub mod cluster;
pub mod compress;
pub mod count;
pub mod info;
pub mod perft;
pub mod probe;
pub mod prove;
pub mod solve;
pub mod steered;
pub mod uci;

use std::path::PathBuf;

use shogi4_tablebase::{Statistics, TableDir};

use crate::error::CliError;

/// The table files named on the command line: files as they are, directories by their
/// tables; none at all is a usage error.
pub fn table_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(TableDir::new(path).files()?);
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        return Err(CliError::Usage("no table files found".into()));
    }
    Ok(files)
}

/// `1234567` as `1,234,567`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `part` as a percentage of `whole`, one decimal.
pub fn percent(part: u64, whole: u64) -> String {
    format!("{:.1}%", 100.0 * part as f64 / whole.max(1) as f64)
}

/// Prints one report as a line of JSON, its keys in alphabetical order (as the reports were
/// printed before they had types, so that their bytes did not change).
pub fn print_json(report: &impl serde::Serialize) {
    println!("{}", json_line(report));
}

/// One report as a line of JSON, keys in alphabetical order.
pub fn json_line(report: &impl serde::Serialize) -> String {
    serde_json::to_value(report).expect("reports serialise").to_string()
}

/// Wins, losses, draws (counts and percentages) and the longest distance, one per line.
pub fn print_outcomes(s: &Statistics, indent: &str) {
    print!("{}", outcomes_text(s, indent));
}

/// The lines [`print_outcomes`] prints.
pub fn outcomes_text(s: &Statistics, indent: &str) -> String {
    format!(
        "{indent}wins        {} ({})\n{indent}losses      {} ({})\n{indent}draws       {} ({})\n{indent}max dtw     {}\n",
        grouped(s.wins),
        percent(s.wins, s.positions),
        grouped(s.losses),
        percent(s.losses, s.positions),
        grouped(s.draws),
        percent(s.draws, s.positions),
        s.max_dtw
    )
}
