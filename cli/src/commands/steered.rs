//! `shogi4 prove --steer PLAYER`: proves that one player wins, with the engine choosing the
//! moves (the steered prover of the search library, `shogi4_search::steered`). This module is
//! its glue: the store and the limits shared with `shogi4 prove`, the engine as the guide
//! (knowing what the store proves), progress, and the report of each of the start's moves.

use std::path::Path;
use std::time::Instant;

use shogi4_api::cli::{SteeredBranch, SteeredReport};
use shogi4_engine::Color;
use shogi4_play::{EngineGuide, Recalled};
use shogi4_search::best_first::INFINITE;
use shogi4_search::steered::{leaf_plan, Numbers, Status, Steered, Steering};
use shogi4_search::{Outcome, Search};

use crate::commands::probe::describe;
use crate::commands::prove::{open_store, shown, Stop};
use crate::error::{parse_position, CliError};
use crate::progress::Bar;

/// How the engine ranks a position's moves.
pub struct GuideSettings {
    /// Nodes a ranking.
    pub nodes: u64,
    /// A proof store the engine consults instead of the run's own (read only, never trusted).
    pub hints: Option<std::path::PathBuf>,
}

/// The engine's table, in MiB: rankings are small searches, and many of them share it.
const GUIDE_TABLE_MB: usize = 64;

#[allow(clippy::too_many_arguments)]
pub fn run(
    from: &str,
    attacker: Color,
    stop: &Stop,
    store_path: &Path,
    steering: Steering,
    guide: GuideSettings,
    table_bytes: usize,
    threads: usize,
    json: bool,
) -> Result<(), CliError> {
    let start = parse_position(from)?;
    let store = open_store(stop, store_path, table_bytes, threads)?;
    let started = Instant::now();
    let bar = Bar::new();
    shogi4_tablebase::Progress::phase(&bar, "prove (steered)", stop.positions);
    let hints = match &guide.hints {
        Some(path) if !path.exists() => {
            return Err(CliError::Usage(format!("no proof store at {} (--hints)", path.display())))
        }
        Some(path) => Some(shogi4_proofs::ProofStore::open_read_only(path)?),
        None => None,
    };
    let oracle = Recalled(hints.as_ref().unwrap_or(&store));
    let mut engine = EngineGuide::new(GUIDE_TABLE_MB, guide.nodes, &oracle);
    let mut tree = Steered::new(&store, start, attacker, steering)?;
    let mut searches: Vec<Search> = (0..threads).map(|_| Search::new(table_bytes).with_plan(leaf_plan())).collect();
    let mut ended = "budget spent";
    loop {
        let (_, _, searched, nodes) = tree.counts();
        if searched >= stop.positions {
            break;
        }
        if tree.root_status() != Status::Open {
            ended = "the start is settled";
            break;
        }
        if let Some(why) = stop.reached(started, store_path) {
            ended = why;
            break;
        }
        if !tree.step(&mut engine, &mut searches)? {
            ended = if tree.root_status() != Status::Open {
                "the start is settled"
            } else {
                // The start is open, yet no line is: each one is refuted or comes back to a
                // position before it (a draw by repetition, if the engine's estimate is level).
                "every line is refuted or repeats"
            };
            break;
        }
        let done = tree.counts().2 - searched;
        shogi4_tablebase::Progress::advance(&bar, done);
        let numbers = tree.root_numbers();
        let speed = nodes as f64 / started.elapsed().as_secs_f64().max(1e-3) / 1e6;
        bar.note(format!(
            "start: {}/{}; tree {}; {speed:.1} M nodes/s; {} MiB; line {}",
            shown(numbers.proof),
            shown(numbers.disproof),
            tree.counts().0,
            shogi4_tablebase::resident_bytes().unwrap_or(0) >> 20,
            tree.most_proving_line().iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" ")
        ));
    }
    shogi4_tablebase::Progress::finish_phase(&bar);
    let (graph, expanded, searched, nodes) = tree.counts();
    let status = |s: Status| match s {
        Status::Proven => "proven",
        Status::Refuted => "refuted",
        Status::Open => "open",
    };
    let finite = |n: u32| (n != INFINITE).then_some(n);
    let pair = |n: Numbers| [finite(n.proof), finite(n.disproof)];
    let unknown = Outcome::Unknown { no_result_within: 0 };
    let report = SteeredReport {
        start: describe(tree.root_outcome().unwrap_or(unknown)),
        attacker: if attacker == Color::First { "first" } else { "second" }.to_string(),
        status: status(tree.root_status()).to_string(),
        numbers: pair(tree.root_numbers()),
        branches: tree
            .branches()
            .into_iter()
            .map(|b| SteeredBranch {
                mv: b.mv.to_string(),
                outcome: describe(b.outcome.unwrap_or(unknown).for_mover()),
                status: status(b.status).to_string(),
                estimate: b.estimate,
                numbers: pair(b.numbers),
                line: b.line.iter().map(|m| m.to_string()).collect(),
            })
            .collect(),
        proof_positions: tree.proof_size().map(|n| n as u64),
        searched,
        expanded,
        graph: graph as u64,
        nodes,
        guide_nodes: engine.nodes_searched,
        records: store.len()?,
        ended: ended.to_string(),
        seconds: started.elapsed().as_secs_f64(),
        store_bytes: std::fs::metadata(store_path).map_or(0, |m| m.len()),
        peak_memory_bytes: shogi4_tablebase::peak_rss_bytes(),
        line: tree.most_proving_line().iter().map(|m| m.to_string()).collect(),
    };
    if json {
        super::print_json(&report);
        return Ok(());
    }
    println!("start: {} ({} player's win {})", report.start, report.attacker, report.status);
    for b in &report.branches {
        println!(
            "  {:<7} {:<8} {:<22} engine {:.2}  numbers {}/{}  {}",
            b.mv,
            b.status,
            b.outcome,
            b.estimate,
            shown(b.numbers[0].unwrap_or(INFINITE)),
            shown(b.numbers[1].unwrap_or(INFINITE)),
            b.line.join(" ")
        );
    }
    println!(
        "{searched} leaf searches ({nodes} nodes), {expanded} positions expanded, tree of {graph}; engine {} nodes; \
         store {} records, {} bytes; peak memory {} MiB; {:.0} s ({ended})",
        report.guide_nodes,
        report.records,
        report.store_bytes,
        report.peak_memory_bytes.map_or("?".to_string(), |b| (b >> 20).to_string()),
        report.seconds
    );
    if let Some(size) = report.proof_positions {
        println!("proof: {size} positions of the {} player", report.attacker);
    }
    Ok(())
}
