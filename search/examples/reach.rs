//! How far the search reaches into the real game: a fixed, seeded set of positions reached by
//! random playouts from the start (no move ever leaves the mover's royal capturable), at game
//! lengths 6 to 36 plies, each searched cold within each time budget. Prints, per budget, the
//! share proven, the median and longest proven distance, and nodes per second.
//!
//! `cargo run --release -p shogi4-search --example reach -- [POSITIONS] [MS,MS,...] [TABLE_MB]`

use std::time::{Duration, Instant};

use rayon::prelude::*;
use shogi4_engine::Position;
use shogi4_search::{Limits, Outcome, Search, MAX_DEPTH};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let budgets: Vec<u64> =
        args.get(1).map_or(vec![100, 1000], |a| a.split(',').map(|ms| ms.parse().expect("milliseconds")).collect());
    let table_mb: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(64);
    let positions = real_positions(count, 0x5EED_5409);
    println!(
        "{count} positions from seeded playouts of 6..=36 plies; table {table_mb} MiB per thread, cleared per position"
    );
    for ms in budgets {
        let limits = Limits { max_depth: MAX_DEPTH, max_nodes: u64::MAX, time: Some(Duration::from_millis(ms)) };
        let started = Instant::now();
        let results: Vec<(Outcome, u64, f64)> = positions
            .par_iter()
            .map_init(
                || Search::new(table_mb << 20),
                |search, position| {
                    search.clear();
                    let report = search.prove(position, &limits);
                    (report.outcome, report.nodes, report.elapsed.as_secs_f64())
                },
            )
            .collect();
        let mut proven: Vec<u32> = results
            .iter()
            .filter_map(|r| match r.0 {
                Outcome::Proven(value) => value.dtw(),
                Outcome::Unknown { .. } => None,
            })
            .collect();
        proven.sort_unstable();
        let mut unknown_depths: Vec<u32> = results
            .iter()
            .filter_map(|r| match r.0 {
                Outcome::Unknown { no_result_within } => Some(no_result_within),
                Outcome::Proven(_) => None,
            })
            .collect();
        unknown_depths.sort_unstable();
        let nodes: u64 = results.iter().map(|r| r.1).sum();
        let busy: f64 = results.iter().map(|r| r.2).sum();
        println!(
            "{ms:>5} ms: proven {:>4}/{count} ({:.1}%), median proven dtw {}, longest {}; unknown: median depth reached {}; {:.2} M nodes/s per thread; wall {:.1} s",
            proven.len(),
            100.0 * proven.len() as f64 / count as f64,
            proven.get(proven.len() / 2).copied().unwrap_or(0),
            proven.last().copied().unwrap_or(0),
            unknown_depths.get(unknown_depths.len() / 2).copied().unwrap_or(0),
            nodes as f64 / busy / 1e6,
            started.elapsed().as_secs_f64()
        );
    }
}

/// `count` positions of the real game: playouts of 6, 8, …, 36 plies from the start in turn,
/// each move drawn from those that do not leave the mover's royal capturable.
fn real_positions(count: usize, seed: u64) -> Vec<Position> {
    let mut state = seed;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut positions = Vec::with_capacity(count);
    while positions.len() < count {
        let plies = 6 + 2 * (positions.len() % 16);
        let mut position = Position::start();
        let mut complete = true;
        for _ in 0..plies {
            let safe: Vec<_> =
                position.legal_moves().iter().copied().filter(|&mv| !position.exposes_royal(mv)).collect();
            if safe.is_empty() {
                complete = false;
                break;
            }
            position = position.play_unchecked(safe[(next() % safe.len() as u64) as usize]);
        }
        if complete {
            positions.push(position);
        }
    }
    positions
}
