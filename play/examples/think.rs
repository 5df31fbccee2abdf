//! Searches one position and prints each iteration: a quick look at depth, speed and lines.
//!
//! `cargo run --release -p shogi4-play --example think -- [POSITION] [MS] [THREADS]`

use std::time::Duration;

use shogi4_engine::Position;
use shogi4_play::{Engine, Limits};
use shogi4_search::Cancel;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let position = Position::parse(args.first().map_or("trfk/3c/C3/KFRT b - 1", |s| s)).expect("a position");
    let ms: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let threads: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let engine = Engine::new(64);
    let limits = Limits { time: Some(Duration::from_millis(ms)), threads, ..Limits::default() };
    let analysis = engine.search(&position, &[], &limits, &(), &Cancel::default(), |p| {
        let line: Vec<String> = p.lines[0].moves.iter().map(|m| m.to_string()).collect();
        println!(
            "depth {:2} seldepth {:2} score {:6} nodes {:9} nps {:8.0} pv {}",
            p.depth,
            p.seldepth,
            p.lines[0].score,
            p.nodes,
            p.nodes as f64 / p.elapsed.as_secs_f64().max(1e-9),
            line.join(" ")
        );
    });
    println!(
        "best {} score {:?} depth {} nodes {} in {:?}",
        analysis.best_move().map_or("none".into(), |m| m.to_string()),
        analysis.score(),
        analysis.depth,
        analysis.nodes,
        analysis.elapsed
    );
}
