//! `shogi4 info`: a table's header and statistics.

use std::path::Path;

use serde_json::json;
use shogi4_tablebase::{open_table, Header, VERSION};

use super::{grouped, percent};
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
    println!("wins        {} ({})", grouped(s.wins), percent(s.wins, s.positions));
    println!("losses      {} ({})", grouped(s.losses), percent(s.losses, s.positions));
    println!("draws       {} ({})", grouped(s.draws), percent(s.draws, s.positions));
    println!("max dtw     {}", s.max_dtw);
    println!("overflow    {} entries", h.overflow_entries);
    println!("checksum    {:016x} (xxh3-64)", h.checksum);
    Ok(())
}

/// A header as JSON (shared with `solve --json`'s statistics).
pub fn header_json(h: &Header, size: u64) -> serde_json::Value {
    let s = &h.statistics;
    json!({
        "material": h.material.to_string(),
        "version": VERSION,
        "slots": h.slots,
        "positions": s.positions,
        "wins": s.wins,
        "losses": s.losses,
        "draws": s.draws,
        "max_dtw": s.max_dtw,
        "histogram": s.histogram,
        "overflow_entries": h.overflow_entries,
        "checksum": format!("{:016x}", h.checksum),
        "file_size": size,
    })
}
