//! `shogi4 audit`: checksum and local consistency of every slot.

use std::path::{Path, PathBuf};

use shogi4_api::cli::{AuditChecked, AuditReport, AuditViolation};
use shogi4_tablebase::{audit, open_table, CorruptValue, TableDir, TableError, Value};

use super::grouped;
use crate::error::CliError;
use crate::progress::Bar;

pub fn run(paths: &[PathBuf], json: bool) -> Result<(), CliError> {
    let files = super::table_files(paths)?;
    let mut failed = 0;
    for file in &files {
        if !audit_file(file, json) {
            failed += 1;
        }
    }
    if failed > 0 {
        return Err(CliError::AuditFailed(failed));
    }
    Ok(())
}

/// Audits one file, prints the verdict, and says whether it passed.
fn audit_file(file: &Path, json: bool) -> bool {
    // A table whose header is unreadable cannot be checked further; one whose checksum fails
    // still gets the consistency check, to show which positions are wrong.
    let table = match open_table(file) {
        Ok(table) => table,
        Err(e) => {
            if json {
                let failed = AuditReport {
                    file: file.display().to_string(),
                    ok: false,
                    error: Some(e.to_string()),
                    checked: None,
                };
                super::print_json(&failed);
            } else {
                println!("FAIL {}: {e}", file.display());
            }
            return false;
        }
    };
    // A file named after another game is refused by the server: so it fails here too.
    let checksum = TableDir::check_name(file, &table)
        .err()
        .or_else(|| table.verify_checksum().err().map(TableError::from))
        .map(|e| e.to_string());
    let report = audit(&table, &Bar::new());
    let ok = report.violations == 0 && checksum.is_none();
    if json {
        let first_violations = report
            .first
            .iter()
            .map(|v| AuditViolation {
                slot: v.slot,
                sfen: v.position.to_sfen(),
                stored: describe(v.stored),
                implied: describe(v.implied),
            })
            .collect();
        let checked = AuditChecked {
            material: table.header().material.to_string(),
            checksum_error: checksum.clone(),
            slots: report.slots,
            violations: report.violations,
            first_violations,
            edges: report.edges,
            seconds: report.seconds,
        };
        super::print_json(&AuditReport { file: file.display().to_string(), ok, error: None, checked: Some(checked) });
    } else if ok {
        println!(
            "ok   {}: checksum and {} slots consistent ({} moves, {:.2} s)",
            file.display(),
            grouped(report.slots),
            grouped(report.edges),
            report.seconds
        );
    } else {
        if let Some(error) = &checksum {
            println!("FAIL {}: {error}", file.display());
        }
        println!(
            "{} {}: {} of {} slots inconsistent",
            if report.violations > 0 { "FAIL" } else { "    " },
            file.display(),
            grouped(report.violations),
            grouped(report.slots)
        );
        for v in &report.first {
            println!(
                "  slot {}: {}  stored {}, its moves imply {}",
                v.slot,
                v.position.to_sfen(),
                describe(v.stored),
                describe(v.implied)
            );
        }
    }
    ok
}

/// A value read from a table, or what made it unreadable.
fn describe(value: Result<Value, CorruptValue>) -> String {
    match value {
        Ok(value) => value.to_string(),
        Err(e) => format!("nothing readable ({e})"),
    }
}
