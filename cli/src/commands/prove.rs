//! `shogi4 prove`: fills the proof store with the first plies of the real game. Positions are
//! taken breadth-first from the start (each distinct position once, nearest first), each is
//! searched within the budget, and what it established is committed at once; positions the
//! store already knows are skipped, so an interrupted run resumes where it stopped.

use std::collections::HashSet;
use std::path::Path;

use serde_json::json;
use shogi4_proofs::{Opened, ProofStore};
use shogi4_search::{Limits, Outcome, Search};

use crate::error::{parse_position, CliError};
use crate::progress::Bar;

pub fn run(
    from: &str,
    plies: u32,
    store_path: &Path,
    limits: &Limits,
    table_bytes: usize,
    json: bool,
) -> Result<(), CliError> {
    let start = parse_position(from)?;
    let (store, opened) = ProofStore::open(store_path)?;
    if let Opened::Rebuilt(aside) = opened {
        eprintln!("shogi4: {} was damaged: moved to {}, starting afresh", store_path.display(), aside.display());
    }
    // The positions within `plies` of the start, each once, nearest first.
    let mut seen = HashSet::from([start.key()]);
    let mut frontier = vec![start];
    let mut positions = vec![start];
    for _ in 0..plies {
        let mut next = Vec::new();
        for position in &frontier {
            for &mv in position.legal_moves().iter() {
                if position.captures_royal(mv) {
                    continue;
                }
                let child = position.play_unchecked(mv);
                if seen.insert(child.key()) {
                    next.push(child);
                }
            }
        }
        positions.extend_from_slice(&next);
        frontier = next;
    }
    let known = store.get_many(&positions.iter().map(|p| p.key()).collect::<Vec<_>>())?;
    let todo: Vec<_> = positions.iter().zip(&known).filter(|(_, k)| k.is_none()).map(|(p, _)| *p).collect();
    let bar = Bar::new();
    shogi4_tablebase::Progress::phase(&bar, "prove", todo.len() as u64);
    let mut search = Search::new(table_bytes);
    let (mut proven, mut nodes) = (0u64, 0u64);
    for position in &todo {
        let report = search.prove(position, limits);
        nodes += report.nodes;
        proven += u64::from(matches!(report.outcome, Outcome::Proven(_)));
        store.record(&[(position.key(), report.outcome)])?;
        shogi4_tablebase::Progress::advance(&bar, 1);
    }
    shogi4_tablebase::Progress::finish_phase(&bar);
    let skipped = positions.len() - todo.len();
    if json {
        println!(
            "{}",
            json!({ "positions": positions.len(), "skipped": skipped, "searched": todo.len(), "proven": proven,
                    "nodes": nodes, "records": store.len()? })
        );
    } else {
        println!(
            "{} positions within {plies} plies: {skipped} already known, {} searched, {proven} proven ({nodes} nodes); the store holds {} records",
            positions.len(),
            todo.len(),
            store.len()?
        );
    }
    Ok(())
}
