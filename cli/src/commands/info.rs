//! `shogi4 info`: a table's header and statistics; `shogi4 publish`: a set's `SHA256SUMS` and
//! `manifest.json`, the files a server sends its mirrors.

use std::path::Path;

use shogi4_api::{Manifest, ManifestEntry, TableInfo};
use shogi4_tablebase::{open_table, recorded_checksum, VERSION, VERSION_COMPRESSED};

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
    let per_position = table.size() as f64 / s.positions.max(1) as f64;
    match h.compressed_bytes {
        None => println!(
            "format      s4tb version {VERSION}, plain, {} bytes, {per_position:.4} byte per position",
            grouped(table.size())
        ),
        Some(_) => {
            // What the same table takes plain: the same header and overflow, a byte a slot.
            let plain = shogi4_tablebase::Header { compressed_bytes: None, ..h.clone() }.file_size();
            println!(
                "format      s4tb version {VERSION_COMPRESSED}, compressed, {} bytes, {per_position:.4} byte per \
                 position ({:.1}× smaller than plain)",
                grouped(table.size()),
                plain as f64 / table.size().max(1) as f64
            );
        }
    }
    println!("material    {}", h.material);
    println!("slots       {}", grouped(h.slots));
    println!("positions   {}", grouped(s.positions));
    print_outcomes(s, "");
    println!("overflow    {} entries", h.overflow_entries);
    // Only the header's field is compared here; `shogi4 audit` checks the bytes against it.
    let reference = match recorded_checksum(h.material) {
        // The recorded references are those of the plain tables the solver writes.
        _ if table.is_compressed() => ", of the compressed file".to_string(),
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

/// Writes `SHA256SUMS` and `manifest.json` beside the tables of `dir` (each checked against
/// its checksum first), byte for byte what a server serving `dir` sends as
/// `/files/SHA256SUMS` and `/files/manifest.json`. A file that fails its checks is refused
/// with its reason, and nothing is written.
pub fn publish(dir: &Path, json: bool) -> Result<(), CliError> {
    use sha2::Digest;
    let (tablebase, rejected) = shogi4_tablebase::Tablebase::open_dir(dir, true)?;
    if let Some((path, error)) = rejected.into_iter().next() {
        return Err(CliError::Usage(format!("{}: {error}; nothing published", path.display())));
    }
    let tables: Vec<ManifestEntry> = tablebase
        .tables()
        .map(|(&material, table)| {
            let digest = sha2::Sha256::digest(table.file_bytes());
            ManifestEntry {
                info: TableInfo::new(table),
                file: shogi4_tablebase::file_name(material),
                sha256: digest.iter().map(|b| format!("{b:02x}")).collect(),
            }
        })
        .collect();
    if tables.is_empty() {
        return Err(CliError::Usage(format!("no tables in {}", dir.display())));
    }
    let manifest = Manifest { tables };
    for (name, bytes) in [("SHA256SUMS", manifest.sha256sums()), ("manifest.json", manifest.to_bytes())] {
        let path = dir.join(name);
        shogi4_tablebase::write_atomically(&path, &[&bytes])
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    }
    if json {
        println!("{}", String::from_utf8(manifest.to_bytes()).expect("JSON is UTF-8"));
    } else {
        println!("wrote {0}/SHA256SUMS and {0}/manifest.json ({1} tables)", dir.display(), manifest.tables.len());
    }
    Ok(())
}
