//! `shogi4 prove`: fills the proof store with the first plies of the real game, best-first.
//!
//! Each position within `plies` of the start is analysed once: its own outcome and every
//! move's are searched within the budget, and what they established is committed at once
//! (the position's outcome, and the proven outcomes of its children within reach). The order
//! is best-first: a position's priority is how far the line to it strays from the search's
//! best moves (the sum of each move's rank among its siblings, 0 for the best), then its
//! ply. So the lines that best play follows are proven first, and an interrupted run has done
//! the most useful part. Positions the store already knows are not searched again (their
//! children are still explored), so a second run resumes where the first stopped.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;

use serde_json::json;
use shogi4_engine::Position;
use shogi4_proofs::{Opened, ProofStore};
use shogi4_search::{Limits, Search};

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
    let nearest = nearest_plies(&start, plies);
    let bar = Bar::new();
    shogi4_tablebase::Progress::phase(&bar, "prove", nearest.len() as u64);
    let mut search = Search::new(table_bytes);
    let (mut searched, mut proven, mut nodes) = (0u64, 0u64, 0u64);
    let mut done = HashSet::new();
    // (stray, ply, sequence number): the sequence keeps the order deterministic among equals.
    let mut queue = BinaryHeap::from([Reverse((0u32, 0u32, 0u64))]);
    let mut pending = vec![start];
    while let Some(Reverse((stray, _, id))) = queue.pop() {
        let position = pending[id as usize];
        if !done.insert(position.key()) {
            continue;
        }
        // Its nearest ply decides how far on to go, whatever line reached it first.
        let ply = nearest[&position.key()];
        let children: Vec<Position> = if store.get(position.key())?.is_some() {
            // Known: explore on, in move-generation order, without searching again.
            let moves = position.legal_moves();
            moves.iter().filter(|&&mv| !position.captures_royal(mv)).map(|&mv| position.play_unchecked(mv)).collect()
        } else {
            let analysis = search.analyse(&position, limits);
            nodes += analysis.nodes;
            searched += 1;
            proven += u64::from(analysis.outcome.proven_win().is_some());
            let mut facts = vec![(position.key(), analysis.outcome)];
            if ply < plies {
                facts.extend(analysis.moves.iter().filter_map(|m| {
                    let child = m.result?;
                    let after = m.outcome.after_move();
                    after.proven_win().is_some().then(|| (child.key(), after))
                }));
            }
            store.record(&facts)?;
            analysis.moves.iter().filter_map(|m| m.result).collect()
        };
        shogi4_tablebase::Progress::advance(&bar, 1);
        if ply == plies {
            continue;
        }
        for (rank, child) in children.into_iter().enumerate() {
            if !done.contains(&child.key()) {
                queue.push(Reverse((stray + rank as u32, nearest[&child.key()], pending.len() as u64)));
                pending.push(child);
            }
        }
    }
    shogi4_tablebase::Progress::finish_phase(&bar);
    let positions = done.len() as u64;
    debug_assert_eq!(positions, nearest.len() as u64);
    let skipped = positions - searched;
    if json {
        println!(
            "{}",
            json!({ "positions": positions, "skipped": skipped, "searched": searched, "proven": proven,
                    "nodes": nodes, "records": store.len()? })
        );
    } else {
        println!(
            "{positions} positions within {plies} plies: {skipped} already known, {searched} searched, {proven} proven \
             ({nodes} nodes); the store holds {} records",
            store.len()?
        );
    }
    Ok(())
}

/// The distinct positions within `plies` of `start`, by key, with the fewest plies that reach
/// each.
fn nearest_plies(start: &Position, plies: u32) -> HashMap<u128, u32> {
    let mut seen = HashMap::from([(start.key(), 0)]);
    let mut frontier = vec![*start];
    for ply in 1..=plies {
        let mut next = Vec::new();
        for position in &frontier {
            for &mv in position.legal_moves().iter().filter(|&&mv| !position.captures_royal(mv)) {
                let child = position.play_unchecked(mv);
                if let std::collections::hash_map::Entry::Vacant(entry) = seen.entry(child.key()) {
                    entry.insert(ply);
                    next.push(child);
                }
            }
        }
        frontier = next;
    }
    seen
}

/// `shogi4 proofs export`: the store's proven outcomes to one file.
pub fn export(store_path: &Path, file: &Path, json: bool) -> Result<(), CliError> {
    let (store, _) = ProofStore::open(store_path)?;
    let records = store.export(file)?;
    let bytes = std::fs::metadata(file).map_or(0, |m| m.len());
    if json {
        println!("{}", json!({ "records": records, "bytes": bytes }));
    } else {
        println!("{records} proven outcomes written to {} ({bytes} bytes)", file.display());
    }
    Ok(())
}

/// `shogi4 proofs import`: an exported file merged into the store.
pub fn import(store_path: &Path, file: &Path, json: bool) -> Result<(), CliError> {
    let (store, _) = ProofStore::open(store_path)?;
    let imported = store.import(file)?;
    if json {
        println!("{}", json!({ "records": imported.records, "changed": imported.changed }));
    } else {
        println!(
            "{} outcomes read from {}; {} records of {} new or narrowed",
            imported.records,
            file.display(),
            imported.changed,
            store_path.display()
        );
    }
    Ok(())
}
