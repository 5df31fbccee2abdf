//! The engine's accuracy on proven positions that the proof search does not prove quickly:
//! how often its move keeps a proven win, and how often its score has the right sign on a
//! proven loss, at two time budgets. Prints the figures.
//!
//! `cargo run --release -p shogi4-play --example accuracy -- EXPORT [POSITIONS] [FAST_MS] [SLOW_MS]`
//!
//! Positions are the proof export's proven wins and losses (the opening prover's store:
//! `tables/opening.proofs`), drawn in an order from their keys' hash; a win is kept only if
//! the proof search does not prove it within `FAST_MS` (default 100), so that the engine is
//! measured where the proofs do not reach at once. The engine searches each without any oracle
//! (it must not be told the answer), for `FAST_MS` and `SLOW_MS` (default 1000). Its move keeps
//! the win when it captures the royal, or its position is a proven loss in the export, or the
//! proof search proves it one within 2 s; it throws the win away when that position is proven
//! a win or draw for the opponent; otherwise it is counted as unverified.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use shogi4_engine::{Played, Position};
use shogi4_play::score::{verdict, Verdict};
use shogi4_play::{Engine, Limits};
use shogi4_search::{Cancel, Limits as ProofLimits, Outcome, Search, MAX_DEPTH};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(export) = args.first() else {
        eprintln!("usage: accuracy EXPORT [POSITIONS] [FAST_MS] [SLOW_MS]");
        std::process::exit(2);
    };
    let wanted: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let fast = Duration::from_millis(args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100));
    let slow = Duration::from_millis(args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1000));
    let outcomes: HashMap<u128, Outcome> = shogi4_proofs::read_export(Path::new(export))
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        })
        .into_iter()
        .collect();
    let mut proven: Vec<(u128, bool)> =
        outcomes.iter().filter_map(|(&key, outcome)| Some((key, outcome.proven_win()?))).collect();
    proven.sort_by_cached_key(|&(key, _)| xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes()));
    let mut search = Search::new(64 << 20);
    let proof = |search: &mut Search, position: &Position, time: Duration| {
        search.prove(position, &ProofLimits { max_depth: MAX_DEPTH, max_nodes: u64::MAX, time: Some(time) }).outcome
    };
    let engine = Engine::new(64);
    let think = |position: &Position, time: Duration| {
        engine.clear();
        let limits = Limits { time: Some(time), ..Limits::default() };
        engine.search(position, &[], &limits, &(), &Cancel::default(), |_| {})
    };
    // [kept, thrown away, unverified] by budget; right sign on losses by budget.
    let mut wins = [[0usize; 3]; 2];
    let mut losses = [[0usize; 2]; 2];
    let (mut win_count, mut loss_count, mut skipped) = (0, 0, 0);
    for &(key, win) in &proven {
        if win_count >= wanted && loss_count >= wanted {
            break;
        }
        let Some(position) = Position::from_key(key) else { continue };
        if position.can_capture_royal() {
            continue;
        }
        if win {
            if win_count >= wanted {
                continue;
            }
            if proof(&mut search, &position, fast).proven_win() == Some(true) {
                skipped += 1;
                continue;
            }
            win_count += 1;
            for (budget, time) in [fast, slow].into_iter().enumerate() {
                let Some(mv) = think(&position, time).best_move() else { continue };
                let judged = match position.play(mv).expect("a legal move") {
                    Played::RoyalCaptured => 0,
                    Played::Position(next) => {
                        let known = outcomes.get(&next.key()).copied().filter(|o| o.is_settled());
                        let outcome = known.unwrap_or_else(|| proof(&mut search, &next, Duration::from_secs(2)));
                        match outcome.proven_win() {
                            Some(false) => 0,
                            Some(true) => 1,
                            None if outcome.is_settled() => 1,
                            None => 2,
                        }
                    }
                };
                wins[budget][judged] += 1;
            }
        } else {
            if loss_count >= wanted {
                continue;
            }
            loss_count += 1;
            for (budget, time) in [fast, slow].into_iter().enumerate() {
                let score = think(&position, time).score().unwrap_or(0);
                let right = match verdict(score) {
                    Verdict::Loss(_) => true,
                    Verdict::Win(_) => false,
                    Verdict::Centipawns(cp) => cp < 0,
                };
                losses[budget][usize::from(right)] += 1;
            }
        }
    }
    let percent = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "{win_count} proven wins beyond {} ms of proof search ({skipped} proven within it were left out), \
         {loss_count} proven losses",
        fast.as_millis()
    );
    for (budget, time) in [fast, slow].into_iter().enumerate() {
        let [kept, lost, unverified] = wins[budget];
        let right = losses[budget][1];
        println!(
            "engine at {:>5} ms: keeps the win {kept}/{win_count} ({:.1}%), throws it away {lost}, unverified {unverified}; \
             right sign on losses {right}/{loss_count} ({:.1}%)",
            time.as_millis(),
            percent(kept, win_count),
            percent(right, loss_count)
        );
    }
}
