//! `shogi4 probe` and `shogi4 mainline`: answer a position from the tables, without a server.
//! With `--json` they print exactly the bodies of `GET /probe` and `GET /mainline`.

use std::path::Path;

use shogi4_api::{MainlineResponse, ProbeResponse};
use shogi4_tablebase::Tablebase;

use crate::error::{parse_position, CliError};

pub fn probe(pos: &str, tables: &Path, json: bool) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    let result = open(tables)?.probe(&position)?;
    if json {
        println!("{}", serde_json::to_string(&ProbeResponse::new(&position, &result)).expect("serializable"));
    } else {
        println!("{}  {}: {}", position.to_sfen(), result.material, result.value);
        for m in &result.moves {
            let after = m.result.map_or("royal captured".to_string(), |p| p.to_sfen());
            println!("  {:<7} {:<12} {after}", m.mv.to_string(), m.value.to_string());
        }
    }
    Ok(())
}

pub fn mainline(pos: &str, tables: &Path, json: bool) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    let line = open(tables)?.mainline(&position)?;
    if json {
        println!("{}", serde_json::to_string(&MainlineResponse::new(&position, &line)).expect("serializable"));
    } else {
        println!("{}  {}: {}", position.to_sfen(), line.material, line.value);
        for step in &line.steps {
            let after = step.result.map_or("royal captured".to_string(), |p| p.to_sfen());
            println!("  {:<7} {:>3}  {after}", step.mv.to_string(), step.dtw_after);
        }
    }
    Ok(())
}

/// The tables of `dir`, mapped without verifying checksums (an answer's consistency is
/// checked along the way instead); files that fail their header checks are named and skipped.
fn open(dir: &Path) -> Result<Tablebase, CliError> {
    let (tablebase, rejected) = Tablebase::open_dir(dir, false)?;
    for (path, error) in rejected {
        eprintln!("shogi4: skipping {}: {error}", path.display());
    }
    Ok(tablebase)
}
