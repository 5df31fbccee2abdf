//! `shogi4 info`: a table's header and statistics.

use std::path::Path;

use serde_json::json;
use shogi4_tablebase::{open_table, Header, VERSION};

use super::{grouped, print_outcomes, statistics_json};
use crate::error::CliError;

pub fn run(file: &Path, json: bool) -> Result<(), CliError> {
    let table = open_table(file)?;
    let h = table.header();
    if json {
        println!("{}", header_json(h, table.size()));
        return Ok(());
    }
    let s = &h.statistics;
    println!("file        {}", file.display());
    println!("format      s4tb version {VERSION}, {} bytes", grouped(table.size()));
    println!("material    {}", h.material);
    println!("slots       {}", grouped(h.slots));
    println!("positions   {}", grouped(s.positions));
    print_outcomes(s, "");
    println!("overflow    {} entries", h.overflow_entries);
    println!("checksum    {:016x} (xxh3-64)", h.checksum);
    Ok(())
}

/// A header as JSON.
pub fn header_json(h: &Header, size: u64) -> serde_json::Value {
    let mut fields = statistics_json(&h.statistics);
    fields.extend([
        ("material".to_string(), json!(h.material.to_string())),
        ("version".to_string(), json!(VERSION)),
        ("slots".to_string(), json!(h.slots)),
        ("overflow_entries".to_string(), json!(h.overflow_entries)),
        ("checksum".to_string(), json!(format!("{:016x}", h.checksum))),
        ("file_size".to_string(), json!(size)),
    ]);
    serde_json::Value::Object(fields)
}
