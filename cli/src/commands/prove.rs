//! `shogi4 prove`: grows the proof store from the start position with the best-first prover
//! of the search library (`shogi4_search::best_first`, PN² over the store's game graph). This
//! module is its glue: the limits (positions, time, memory, the store's size), the searchers
//! and their tables, progress, the report; and `shogi4 proofs export|import`.

use std::path::Path;
use std::time::{Duration, Instant};

use shogi4_api::cli::{ProofsExported, ProofsImported, ProveReport, StartNumbers};
use shogi4_proofs::{Carried, Exported, Imported, Opened, Origin, ProofStore, StoreError};
use shogi4_search::best_first::{BestFirst, INFINITE};
use shogi4_search::{Limits, Outcome, Search};
use shogi4_tablebase::Value;

use crate::commands::probe::describe;
use crate::error::{parse_position, CliError};
use crate::progress::Bar;

/// When `prove` stops, besides a settled start.
pub struct Stop {
    /// Positions searched at most.
    pub positions: u64,
    /// Wall-clock time at most.
    pub time: Option<Duration>,
    /// Resident memory at most: the run stops at the first step that finds it reached.
    pub memory_bytes: u64,
    /// Size of the store's file at most, checked the same way (a step adds a few records).
    pub store_bytes: u64,
}

impl Stop {
    /// Why a run stops now, if a limit besides the positions is reached: checked before each
    /// step.
    pub fn reached(&self, started: Instant, store_path: &Path) -> Option<&'static str> {
        if self.time.is_some_and(|t| started.elapsed() >= t) {
            return Some("time is up");
        }
        if shogi4_tablebase::resident_bytes().unwrap_or(0) >= self.memory_bytes {
            return Some("the memory limit is reached");
        }
        if std::fs::metadata(store_path).map_or(0, |m| m.len()) >= self.store_bytes {
            return Some("the store's size limit is reached");
        }
        None
    }
}

/// The proof store a prover run grows, opened once the searchers' tables are known to fit the
/// memory limit (a damaged store is rebuilt from what can be read; a read-only one refused).
pub fn open_store(stop: &Stop, store_path: &Path, table_bytes: usize, threads: usize) -> Result<ProofStore, CliError> {
    let tables = (table_bytes as u64).saturating_mul(threads as u64);
    if tables.saturating_add(BASE_MEMORY) > stop.memory_bytes {
        return Err(CliError::Usage(format!(
            "a transposition table of {} MiB for each of {threads} thread(s) does not fit a memory limit of {} MiB \
             with {} MiB to spare",
            table_bytes >> 20,
            stop.memory_bytes >> 20,
            BASE_MEMORY >> 20
        )));
    }
    super::probe::tables_fit(table_bytes, threads)?;
    let (store, opened) = ProofStore::open(store_path)?;
    match opened {
        Opened::Rebuilt { aside, salvaged, lost } => eprintln!(
            "shogi4: {} was damaged: moved to {}, {salvaged} readable records carried over{}",
            store_path.display(),
            aside.display(),
            super::probe::lost_records(lost)
        ),
        Opened::ReadOnly => return Err(StoreError::ReadOnly(store_path.to_path_buf()).into()),
        Opened::Fine => {}
    }
    Ok(store)
}

/// Memory the process needs besides the transposition table, before the graph grows: the
/// binary, the store's cache, the first nodes.
const BASE_MEMORY: u64 = 64 << 20;

pub fn run(
    from: &str,
    stop: &Stop,
    store_path: &Path,
    limits: &Limits,
    table_bytes: usize,
    threads: usize,
    json: bool,
) -> Result<(), CliError> {
    let start = parse_position(from)?;
    let store = open_store(stop, store_path, table_bytes, threads)?;
    let started = Instant::now();
    let bar = Bar::new();
    shogi4_tablebase::Progress::phase(&bar, "prove", stop.positions);
    let mut tree = BestFirst::new(&store, start)?;
    let mut searches: Vec<Search> = (0..threads).map(|_| Search::new(table_bytes)).collect();
    let (mut searched, mut nodes) = (0u64, 0u64);
    let mut ended = "budget spent";
    // The most-proving line of the last step: the moves from the start to the leaf searched.
    let mut line: Vec<String> = Vec::new();
    while searched < stop.positions {
        if tree.root_settled().is_some() {
            ended = "the start is settled";
            break;
        }
        if let Some(why) = stop.reached(started, store_path) {
            ended = why;
            break;
        }
        let wanted = (stop.positions - searched).min(threads as u64) as usize;
        let Some(batch) = tree.choose_leaves(wanted, &mut line)? else {
            continue; // expanded from the store alone: check the limits and choose again
        };
        if batch.is_empty() {
            ended = "nothing left to expand";
            break;
        }
        for (leaf, analysis) in tree.analyse(&batch, &mut searches, limits) {
            searched += 1;
            nodes += analysis.nodes;
            tree.record_analysis(leaf, &analysis)?;
            shogi4_tablebase::Progress::advance(&bar, 1);
        }
        tree.settle_from_children()?;
        let root = tree.root_numbers();
        let speed = nodes as f64 / started.elapsed().as_secs_f64().max(1e-3) / 1e6;
        bar.note(format!(
            "start: win {}/{}, loss {}/{}; graph {} ({} proven); {speed:.1} M nodes/s; {} MiB, store {} MiB; line {}",
            shown(root.win.0),
            shown(root.win.1),
            shown(root.loss.0),
            shown(root.loss.1),
            tree.len(),
            tree.counts().0,
            shogi4_tablebase::resident_bytes().unwrap_or(0) >> 20,
            std::fs::metadata(store_path).map_or(0, |m| m.len()) >> 20,
            line.join(" ")
        ));
    }
    shogi4_tablebase::Progress::finish_phase(&bar);
    let (proven, expanded) = tree.counts();
    let records = store.len()?;
    // The replies' positions, with what the store knows of those not explored this run.
    let unknown = Outcome::Unknown { no_result_within: 0 };
    let start_value = describe(tree.root_outcome().unwrap_or(unknown));
    // Each reply's outcome for the player making it.
    let mut replies: Vec<(String, String)> = Vec::new();
    for &mv in start.legal_moves().iter() {
        let outcome = if start.captures_royal(mv) {
            Outcome::Proven(Value::Win(1))
        } else {
            tree.outcome_of(&start.play_unchecked(mv))?.map_or(unknown, Outcome::for_mover)
        };
        replies.push((mv.to_string(), describe(outcome)));
    }
    let root = tree.root_numbers();
    let store_bytes = std::fs::metadata(store_path).map_or(0, |m| m.len());
    let peak_memory = shogi4_tablebase::peak_rss_bytes();
    if json {
        // Proof and disproof numbers of the start's two questions; null for infinite.
        let finite = |n: u32| (n != INFINITE).then_some(n);
        super::print_json(&ProveReport {
            start: start_value,
            replies: replies.into_iter().collect(),
            searched,
            threads: threads as u64,
            resumed: tree.resumed(),
            expanded: expanded as u64,
            graph: tree.len() as u64,
            proven: proven as u64,
            nodes,
            records,
            ended: ended.to_string(),
            seconds: started.elapsed().as_secs_f64(),
            start_numbers: StartNumbers {
                win: [finite(root.win.0), finite(root.win.1)],
                loss: [finite(root.loss.0), finite(root.loss.1)],
            },
            store_bytes,
            peak_memory_bytes: peak_memory,
            line,
        });
    } else {
        println!("start: {start_value}");
        for (mv, outcome) in replies {
            println!("  {mv:<7} {outcome}");
        }
        println!(
            "{searched} positions searched ({nodes} nodes, {threads} at a time at most), {} expanded from the \
             store; the graph holds {} positions, {proven} proven, {expanded} expanded; the store holds {records} \
             records ({ended})",
            tree.resumed(),
            tree.len()
        );
        println!(
            "start's numbers: win {}/{}, loss {}/{} (proof/disproof); store {store_bytes} bytes; peak memory {} MiB",
            shown(root.win.0),
            shown(root.win.1),
            shown(root.loss.0),
            shown(root.loss.1),
            peak_memory.map_or("?".to_string(), |bytes| (bytes >> 20).to_string())
        );
        println!("most-proving line: {}", line.join(" "));
    }
    Ok(())
}

/// A proof or disproof number as the progress line shows it.
pub fn shown(number: u32) -> String {
    if number == INFINITE {
        "∞".to_string()
    } else {
        number.to_string()
    }
}

/// `shogi4 proofs export`: the store's proven outcomes (and with `carried`, its unknown
/// ones too) to one file.
pub fn export(store_path: &Path, file: &Path, carried: Carried, json: bool) -> Result<(), CliError> {
    // Refused before the store is opened (an open store may write to its file): the store
    // itself, any other database or device given as FILE.
    shogi4_tablebase::replaceable(file, shogi4_proofs::EXPORT_MAGIC).map_err(|e| CliError::Usage(e.to_string()))?;
    // Opening a missing store would begin an empty one, only to export nothing from it.
    if !store_path.exists() {
        return Err(CliError::Usage(format!("no proof store at {}: nothing to export", store_path.display())));
    }
    let (store, _) = ProofStore::open(store_path)?;
    let Exported { records, unknown } = store.export(file, carried)?;
    let bytes = std::fs::metadata(file).map_or(0, |m| m.len());
    if json {
        super::print_json(&ProofsExported { records, unknown, bytes });
    } else {
        let proven = records - unknown;
        println!("{proven} proven and {unknown} unknown outcomes written to {} ({bytes} bytes)", file.display());
    }
    Ok(())
}

/// `shogi4 proofs import`: an exported file, or a proof certificate (`.s4cert`, checked by the
/// rules first), merged into the store.
pub fn import(store_path: &Path, file: &Path, json: bool) -> Result<(), CliError> {
    // The file is read and checked whole before the store is opened, so that a refused file
    // leaves no new, empty store behind.
    let (facts, origin) = match shogi4_proofs::is_certificate(file) {
        true => (shogi4_proofs::read_certificate(file)?, Origin::Certificate),
        false => (shogi4_proofs::read_export(file)?, Origin::Import),
    };
    let (store, _) = ProofStore::open(store_path)?;
    let Imported { records, changed } = store.import_facts(&facts, origin)?;
    if json {
        super::print_json(&ProofsImported { records, changed });
    } else {
        println!(
            "{records} outcomes read from {}; {changed} records of {} new or narrowed",
            file.display(),
            store_path.display()
        );
    }
    Ok(())
}
