//! `shogi4 perft`.

use shogi4_api::cli::PerftReport;
use shogi4_engine::perft;

use crate::error::{parse_position, CliError};

pub fn run(pos: &str, depth: u32, json: bool) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    if depth == 0 {
        return Err(CliError::Usage("depth must be at least 1".into()));
    }
    let mut nodes = Vec::new();
    for d in 1..=depth {
        let n = perft(&position, d);
        if !json {
            println!("{d} {n}");
        }
        nodes.push(n);
    }
    if json {
        super::print_json(&PerftReport { pos: position.to_sfen(), nodes });
    }
    Ok(())
}
