//! `shogi4 probe`: answer a position from the tables, without a server.

use std::path::Path;

use serde_json::json;
use shogi4_tablebase::Tablebase;

use crate::error::{parse_position, CliError};

pub fn run(pos: &str, tables: &Path, json: bool) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    let (tablebase, rejected) = Tablebase::open_dir(tables, false)?;
    for (path, error) in rejected {
        eprintln!("shogi4: skipping {}: {error}", path.display());
    }
    let result = tablebase.probe(&position)?;
    if json {
        let moves: Vec<_> = result
            .moves
            .iter()
            .map(|m| {
                json!({
                    "move": m.mv.to_string(),
                    "sfen": m.result.map(|p| p.to_sfen()),
                    "category": m.value.category(),
                    "dtw": m.value.dtw(),
                    "royal_capture": m.royal_capture,
                })
            })
            .collect();
        println!(
            "{}",
            json!({
                "sfen": position.to_sfen(),
                "material": position.material().to_string(),
                "category": result.value.category(),
                "dtw": result.value.dtw(),
                "moves": moves,
            })
        );
    } else {
        println!("{}  {}: {}", position.to_sfen(), position.material(), result.value);
        for m in &result.moves {
            let after = m.result.map_or("royal captured".to_string(), |p| p.to_sfen());
            println!("  {:<7} {:<12} {after}", m.mv.to_string(), m.value.to_string());
        }
    }
    Ok(())
}
