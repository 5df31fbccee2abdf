//! How far the search reaches into the real game, on three fixed, seeded sets of positions
//! at game lengths 6 to 36 plies, each position searched cold within each time budget:
//!
//! - `random`: random playouts from the start (no move ever leaves the mover's royal
//!   capturable). They blunder into short forced wins, so they flatter a search.
//! - `careful`: playouts in which neither side plays a move that a short search of our own
//!   (a fixed node budget, so the set is the same on every machine) proves losing.
//! - `selfplay`: games of the search against itself (each move the best of an analysis
//!   within a fixed node budget; the first two plies drawn at random, so games differ).
//!
//! Prints, per set and budget, the share proven exactly, the share proven as a value (a win
//! or loss, exact or with distance bounds, or a draw), the median width of the bounds, and
//! nodes per second.
//!
//! The sets of 200 positions that the README's figures come from are committed under
//! `search/examples/reach-sets/` and read from there, so that every build and machine measures
//! the same positions. Any other size is generated once and kept under `target/reach-sets/`.
//! A generated careful-play or self-play set depends on the build that generates it (the
//! judge is our own search): the sets cached by earlier builds, which the figures before
//! 2026-12-05 were measured on, were not what today's source generates.
//!
//! `cargo run --release -p shogi4-search --example reach -- [POSITIONS] [BUDGET,BUDGET,...] [TABLE_MB] [SETS] [PLAN]`
//!
//! A `BUDGET` is milliseconds (`1000`), or nodes with an `n` (`8000000n`): a node budget gives
//! the same answers on every run, so two variants of the search compare without noise.
//!
//! `PLAN` is `default`, `exact` (deepening alone, the search before deep questions) or
//! `SHARE:BOUND,BOUND,…:ROUNDS:bisect|deepen|keep` (the fields of [`Plan`]; a bound `any` is a
//! question at any distance, [`Horizon::Unbounded`]).

#[path = "../tests/common/rng.rs"]
mod rng;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rng::Rng;
use shogi4_engine::Position;
use shogi4_search::{Horizon, Limits, Narrowing, Outcome, Plan, Search, MAX_DEPTH};

/// Nodes of the search that judges a careful playout's moves.
const JUDGE_NODES: u64 = 600_000;
/// Nodes of each self-play move's analysis.
const SELF_PLAY_NODES: u64 = 1_000_000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let budgets: Vec<Budget> = args
        .get(1)
        .map_or(vec![Budget::Millis(100), Budget::Millis(1000)], |a| a.split(',').map(Budget::parse).collect());
    let table_mb: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(64);
    let sets: Vec<String> = args.get(3).map_or(vec!["random".into(), "careful".into(), "selfplay".into()], |a| {
        a.split(',').map(str::to_string).collect()
    });
    let plan = match args.get(4).map(String::as_str) {
        None | Some("default") => Plan::default(),
        Some("exact") => Plan::exact_only(),
        Some(text) => {
            let fields: Vec<&str> = text.split(':').collect();
            let [share, bounds, rounds, tighten] = fields[..] else {
                panic!("PLAN is SHARE:BOUND,BOUND,...:ROUNDS:bisect|deepen|keep")
            };
            Plan {
                deepening: share.parse().expect("a share"),
                bounds: bounds
                    .split(',')
                    .map(|b| match b {
                        "any" => Horizon::Unbounded,
                        b => Horizon::Within(b.parse().expect("a bound or `any`")),
                    })
                    .collect(),
                rounds: rounds.parse().expect("rounds"),
                narrowing: match tighten {
                    "bisect" => Narrowing::Bisect,
                    "deepen" => Narrowing::Deepen,
                    _ => Narrowing::Keep,
                },
            }
        }
    };
    println!("plan {plan:?}");
    println!(
        "{count} positions a set, game lengths 6..=36 plies; table {table_mb} MiB per thread, cleared per position"
    );
    for set in &sets {
        let positions = load_or_generate(set, count);
        for &budget in &budgets {
            report(set, &positions, budget, table_mb, &plan);
        }
    }
}

/// What each search of a set may spend.
#[derive(Clone, Copy)]
enum Budget {
    /// Wall-clock time: what a user meets, on this machine.
    Millis(u64),
    /// Nodes: the same work on every machine and every run, for comparing search variants
    /// without the noise of a shared machine.
    Nodes(u64),
}

impl Budget {
    /// `1000` is milliseconds, `8000000n` nodes.
    fn parse(text: &str) -> Budget {
        match text.strip_suffix('n') {
            Some(nodes) => Budget::Nodes(nodes.parse().expect("a node count")),
            None => Budget::Millis(text.parse().expect("milliseconds")),
        }
    }

    fn limits(self) -> Limits {
        match self {
            Budget::Millis(ms) => {
                Limits { max_depth: MAX_DEPTH, max_nodes: u64::MAX, time: Some(Duration::from_millis(ms)) }
            }
            Budget::Nodes(nodes) => Limits::nodes(nodes),
        }
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Millis(ms) => write!(f, "{ms:>5} ms"),
            Budget::Nodes(nodes) => write!(f, "{nodes} nodes"),
        }
    }
}

fn report(set: &str, positions: &[Position], budget: Budget, table_mb: usize, plan: &Plan) {
    let limits = budget.limits();
    let started = Instant::now();
    let results: Vec<(Outcome, u64, f64)> = positions
        .par_iter()
        .map_init(
            || Search::new(table_mb << 20).with_plan(plan.clone()),
            |search, position| {
                search.clear();
                let report = search.prove(position, &limits);
                (report.outcome, report.nodes, report.elapsed.as_secs_f64())
            },
        )
        .collect();
    let count = positions.len();
    let exact = results.iter().filter(|r| matches!(r.0, Outcome::Proven(_))).count();
    let valued = results.iter().filter(|r| r.0.is_settled()).count();
    let mut widths: Vec<u32> = results
        .iter()
        .filter_map(|r| match r.0 {
            Outcome::Bounded { at_least, at_most, .. } => Some(at_most - at_least),
            _ => None,
        })
        .collect();
    widths.sort_unstable();
    let mut exact_dtws: Vec<u32> = results.iter().filter_map(|r| r.0.distance_bounds()).map(|b| b.0).collect();
    exact_dtws.sort_unstable();
    let mut unknown_depths: Vec<u32> = results
        .iter()
        .filter_map(|r| match r.0 {
            Outcome::Unknown { no_result_within } => Some(no_result_within),
            _ => None,
        })
        .collect();
    unknown_depths.sort_unstable();
    let nodes: u64 = results.iter().map(|r| r.1).sum();
    let busy: f64 = results.iter().map(|r| r.2).sum();
    let share = |n: usize| 100.0 * n as f64 / count as f64;
    println!(
        "{set:>8} {budget}: exact {exact:>4} ({:.1}%), value {valued:>4}/{count} ({:.1}%), median bound width {}; \
         unknown: median depth {}; {:.2} M nodes/s per thread; wall {:.1} s",
        share(exact),
        share(valued),
        median(&widths),
        median(&unknown_depths),
        nodes as f64 / busy / 1e6,
        started.elapsed().as_secs_f64()
    );
}

fn median(sorted: &[u32]) -> String {
    sorted.get(sorted.len() / 2).map_or("-".to_string(), |m| m.to_string())
}

/// A set from its committed file or its cache file, or generated (and cached) when neither
/// holds it whole.
fn load_or_generate(set: &str, count: usize) -> Vec<Position> {
    let name = format!("{set}-{count}.sfen");
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/reach-sets").join(&name);
    let path = cache_dir().join(&name);
    for file in [&committed, &path] {
        if let Ok(text) = std::fs::read_to_string(file) {
            let positions: Vec<Position> = text.lines().filter_map(|l| Position::parse(l).ok()).collect();
            if positions.len() == count {
                return positions;
            }
        }
    }
    let started = Instant::now();
    let positions = match set {
        "random" => random_playouts(count, 0x5EED_5409),
        "careful" => games(count, 0xCA4E_F011, careful_move),
        "selfplay" => games(count, 0x5E1F_B1A7, self_play_move),
        other => panic!("unknown set {other}: random, careful or selfplay"),
    };
    println!("{set}: {count} positions generated in {:.0} s", started.elapsed().as_secs_f64());
    std::fs::create_dir_all(cache_dir()).expect("target/ is writable");
    let text: String = positions.iter().map(|p| p.to_sfen() + "\n").collect();
    std::fs::write(&path, text).expect("target/ is writable");
    positions
}

fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/reach-sets")
}

/// The plan of the searches that judge careful moves and play the self-play games: fixed here,
/// so that the sets do not change with the search's default.
fn generating_plan() -> Plan {
    Plan::exact_only()
}

/// One of `items`, drawn by `rng`.
fn pick<T: Copy>(rng: &mut Rng, items: &[T]) -> T {
    items[(rng.next() % items.len() as u64) as usize]
}

/// How a game chooses its next move among the safe ones: `None` ends the game.
type Chooser = fn(&mut Search, &Position, u32, &mut Rng) -> Option<shogi4_engine::Move>;

fn random_move(_: &mut Search, position: &Position, _: u32, rng: &mut Rng) -> Option<shogi4_engine::Move> {
    let safe = safe_moves(position);
    (!safe.is_empty()).then(|| pick(rng, &safe))
}

/// A random safe move that the judge does not prove losing (none left: the game ends).
fn careful_move(search: &mut Search, position: &Position, _: u32, rng: &mut Rng) -> Option<shogi4_engine::Move> {
    let mut safe = safe_moves(position);
    while !safe.is_empty() {
        let i = (rng.next() % safe.len() as u64) as usize;
        let mv = safe.swap_remove(i);
        search.clear();
        let after = search.prove(&position.play_unchecked(mv), &Limits::nodes(JUDGE_NODES)).outcome;
        if after.proven_win() != Some(true) {
            return Some(mv);
        }
    }
    None
}

/// The best move of an analysis; the first two plies at random.
fn self_play_move(search: &mut Search, position: &Position, ply: u32, rng: &mut Rng) -> Option<shogi4_engine::Move> {
    if ply <= 2 {
        return random_move(search, position, ply, rng);
    }
    search.clear();
    let analysis = search.analyse(position, &Limits::nodes(SELF_PLAY_NODES));
    let best = analysis.moves.first()?;
    // A game that reaches a royal capture is over.
    best.result.map(|_| best.mv)
}

fn safe_moves(position: &Position) -> Vec<shogi4_engine::Move> {
    position.legal_moves().iter().copied().filter(|&mv| !position.exposes_royal(mv)).collect()
}

/// `count` positions: game `g` of the set, played by `choose` from the start with its own seed,
/// gives the position after 6, 8, …, 36 plies (as far as it lasts), in turn over the games until
/// there are enough. Games run in parallel, each deterministic.
fn games(count: usize, seed: u64, choose: Chooser) -> Vec<Position> {
    let per_game = 16;
    let mut positions = Vec::with_capacity(count);
    let mut first = 0u64;
    while positions.len() < count {
        let batch: Vec<Vec<Position>> = (first..first + 32)
            .into_par_iter()
            .map_init(
                || Search::new(8 << 20).with_plan(generating_plan()),
                |search, g| {
                    let mut rng = Rng(seed ^ (g + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let mut position = Position::start();
                    let mut kept = Vec::with_capacity(per_game);
                    for ply in 1..=36 {
                        let Some(mv) = choose(search, &position, ply, &mut rng) else { break };
                        position = position.play_unchecked(mv);
                        if ply >= 6 && ply % 2 == 0 {
                            kept.push(position);
                        }
                    }
                    kept
                },
            )
            .collect();
        first += 32;
        positions.extend(batch.into_iter().flatten());
    }
    positions.truncate(count);
    positions
}

/// `count` positions of random playouts of 6, 8, …, 36 plies from the start in turn, each
/// move drawn from those that do not leave the mover's royal capturable (the set this script
/// has always measured).
fn random_playouts(count: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng(seed);
    let mut positions = Vec::with_capacity(count);
    while positions.len() < count {
        let plies = 6 + 2 * (positions.len() % 16);
        let mut position = Position::start();
        let mut complete = true;
        for _ in 0..plies {
            let safe = safe_moves(&position);
            if safe.is_empty() {
                complete = false;
                break;
            }
            position = position.play_unchecked(pick(&mut rng, &safe));
        }
        if complete {
            positions.push(position);
        }
    }
    positions
}
