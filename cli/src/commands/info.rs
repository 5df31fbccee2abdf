//! `shogi4 info`: a table's header and statistics.

use std::path::Path;

use shogi4_api::TableInfo;
use shogi4_tablebase::{open_table, recorded_checksum, VERSION};

use super::{grouped, print_outcomes};
use crate::error::CliError;

pub fn run(file: &Path, json: bool) -> Result<(), CliError> {
    let table = open_table(file)?;
    let h = table.header();
    if json {
        println!("{}", serde_json::to_string(&TableInfo::new(&table)).expect("serializable"));
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
    // Only the header's field is compared here; `shogi4 audit` checks the bytes against it.
    let reference = match recorded_checksum(h.material) {
        Some(recorded) if recorded == h.checksum => ", the recorded reference".to_string(),
        Some(recorded) => format!(", NOT the recorded reference {recorded:016x}"),
        None => String::new(),
    };
    println!("checksum    {:016x} (xxh3-64{reference})", h.checksum);
    match table.longest_win() {
        Some((dtw, position)) => println!("longest win {dtw} plies, e.g. {position}"),
        None => println!("longest win none"),
    }
    Ok(())
}
