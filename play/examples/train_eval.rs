//! Trains the engine's evaluation (`shogi4_play::eval`, a logistic model over its features)
//! and writes the weights as the Rust source that `play/src/eval/weights.rs` holds.
//!
//! `cargo run --release -p shogi4-play --example train_eval -- EXPORT OUT [GAMES] [NODES] [CERTIFICATE…]`
//!
//! Sources, each a position and the result for its side to move (1 win, 0 loss, ½ draw):
//! - the proven outcomes of a proof export, weighted so that wins and losses count alike (the
//!   opening prover's store holds some thirty wins for each loss);
//! - the positions the certificates given prove (each checked first), but those where the
//!   side to move takes the royal at once, at the export's weight a position;
//! - `GAMES` self-play games of the engine as it stands (`NODES` a move, the first four plies
//!   drawn at random from the game's number, so the games differ; a game that repeats a
//!   position three times, or runs 200 plies, is a draw), every position after the fourth
//!   ply labelled with the game's result.
//!
//! Training starts from the committed weights. Samples are taken in an order drawn from a hash,
//! and the first tenth of that order is held out; the log loss and accuracy on both parts are
//! printed after each pass. Deterministic for a given thread count of one; the games are
//! played on every core.

use std::path::Path;

use shogi4_engine::{Played, Position};
use shogi4_play::eval::{self, features, FEATURES};
use shogi4_play::{Engine, Limits};
use shogi4_search::Cancel;

/// Passes over the training part.
const EPOCHS: usize = 6;
/// The first pass's learning rate; pass `e` uses `RATE / (1 + e)`.
const RATE: f32 = 0.01;
/// Weight decay, toward the starting weights.
const L2: f32 = 1e-5;
/// Self-play games by default, and nodes a move in them.
const GAMES: u64 = 2_000;
const NODES: u64 = 20_000;
/// How much a proven outcome counts against a self-play position.
const PROVEN_WEIGHT: f32 = 0.02;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [export, out, ..] = &args[..] else {
        eprintln!("usage: train_eval EXPORT OUT [GAMES] [NODES] [CERTIFICATE…]");
        std::process::exit(2);
    };
    let games: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(GAMES);
    let nodes: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(NODES);
    let epochs = EPOCHS;
    let outcomes = shogi4_proofs::read_export(Path::new(export)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let proven: Vec<(u128, Position, f32)> = outcomes
        .into_iter()
        .filter_map(|(key, outcome)| Some((key, Position::from_key(key)?, f32::from(u8::from(outcome.proven_win()?)))))
        .collect();
    let wins = proven.iter().filter(|s| s.2 > 0.5).count();
    let losses = proven.len() - wins;
    eprintln!("{} proven outcomes, {wins} of them wins for the side to move", proven.len());
    let loss_weight = wins as f32 / losses.max(1) as f32;
    let mut samples: Vec<Sample> = proven
        .into_iter()
        .map(|(key, position, result)| Sample {
            key,
            position,
            result,
            weight: PROVEN_WEIGHT * if result > 0.5 { 1.0 } else { loss_weight },
        })
        .collect();
    let mut certified = 0;
    for path in args.iter().skip(4) {
        let before = samples.len();
        let bytes = shogi4_certificate::read_file(Path::new(path)).expect("a readable certificate");
        let proven = shogi4_certificate::proven_positions(&bytes).expect("a certificate its checker accepts");
        samples.extend(proven.filter(|p| p.within > 1).map(|p| Sample {
            key: p.position.key(),
            position: p.position,
            result: f32::from(u8::from(p.wins)),
            weight: PROVEN_WEIGHT,
        }));
        let added = samples.len() - before;
        eprintln!("{path}: {added} positions");
        certified += added;
    }
    let played = self_play(games, nodes);
    eprintln!("{games} self-play games at {nodes} nodes a move: {} positions", played.len());
    samples.extend(played);
    samples.sort_by_cached_key(|s| {
        xxhash_rust::xxh3::xxh3_64(&[s.key.to_le_bytes(), (s.result.to_bits() as u128).to_le_bytes()].concat())
    });
    let (held, train) = samples.split_at(samples.len() / 10);
    let start = eval::weights().to_vec();
    let mut weights = start.clone();
    eprintln!("start: training {}, held out {}", fit(&weights, train), fit(&weights, held));
    for epoch in 0..epochs {
        let rate = RATE / (1.0 + epoch as f32);
        for sample in train {
            let gradient = sample.weight * (probability(&weights, &sample.position) - sample.result);
            features(&sample.position, |feature, value| {
                weights[feature] -= rate * (gradient * value + L2 * (weights[feature] - start[feature]));
            });
        }
        eprintln!("pass {epoch}: training {}, held out {}", fit(&weights, train), fit(&weights, held));
    }
    let file_hash = xxhash_rust::xxh3::xxh3_64(&std::fs::read(export).expect("read once already"));
    let mut source = format!(
        "//! The evaluation's weights, written by `play/examples/train_eval.rs` from {} samples: a proof\n\
         //! export (the file's xxh3-64 {file_hash:016x}), {certified} positions of certificates and\n\
         //! {games} self-play games at {nodes} nodes a move; {epochs} passes, held out: {}.\n\n\
         /// One per feature of `eval::features`.\n#[rustfmt::skip]\npub(super) const WEIGHTS: [f32; super::FEATURES] = [\n",
        samples.len(),
        fit(&weights, held),
    );
    assert_eq!(weights.len(), FEATURES);
    for row in weights.chunks(8) {
        let row: Vec<String> = row.iter().map(|w| format!("{w:?}")).collect();
        source.push_str(&format!("    {},\n", row.join(", ")));
    }
    source.push_str("];\n");
    std::fs::write(out, source).expect("a writable output");
}

fn probability(weights: &[f32], position: &Position) -> f32 {
    1.0 / (1.0 + (-eval::log_odds(position, weights)).exp())
}

/// Weighted log loss, and accuracy over the decided samples.
fn fit(weights: &[f32], samples: &[Sample]) -> String {
    let (mut loss, mut total, mut right, mut decided) = (0f64, 0f64, 0usize, 0usize);
    for sample in samples {
        let p = f64::from(probability(weights, &sample.position)).clamp(1e-7, 1.0 - 1e-7);
        let y = f64::from(sample.result);
        loss -= f64::from(sample.weight) * (y * p.ln() + (1.0 - y) * (1.0 - p).ln());
        total += f64::from(sample.weight);
        if y != 0.5 {
            decided += 1;
            right += usize::from((p > 0.5) == (y > 0.5));
        }
    }
    format!("log loss {:.4}, accuracy {:.2}%", loss / total.max(1e-9), 100.0 * right as f64 / decided.max(1) as f64)
}

/// A position, the result for its side to move, and how much it counts.
struct Sample {
    key: u128,
    position: Position,
    result: f32,
    weight: f32,
}

/// Plays `games` games of the engine against itself and labels their positions.
fn self_play(games: u64, nodes: u64) -> Vec<Sample> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let mut samples: Vec<Sample> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let engine = Engine::new(16);
                    let limits = Limits { nodes: Some(nodes), ..Limits::default() };
                    let mut out = Vec::new();
                    for game in (t..games).step_by(threads as usize) {
                        engine.clear();
                        out.extend(play_one(&engine, &limits, game));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a self-play thread")).collect()
    });
    samples.sort_by_key(|s| (s.key, s.result.to_bits()));
    samples
}

/// One self-play game, its first four plies drawn at random from `game`.
fn play_one(engine: &Engine, limits: &Limits, game: u64) -> Vec<Sample> {
    let mut random = game.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut position = Position::start();
    let mut history: Vec<u128> = Vec::new();
    let mut seen: Vec<Position> = Vec::new();
    // The winner's colour, or `None` for a draw.
    let mut winner = None;
    for ply in 0..200 {
        history.push(position.key());
        if history.iter().filter(|&&k| k == position.key()).count() >= 3 {
            break;
        }
        let mv = if ply < 4 {
            let moves = position.safe_moves().0;
            if moves.is_empty() {
                winner = Some(!position.turn());
                break;
            }
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            moves[(random % moves.len() as u64) as usize]
        } else {
            seen.push(position);
            let analysis =
                engine.search(&position, &history[..history.len() - 1], limits, &(), &Cancel::default(), |_| {});
            match analysis.best_move() {
                Some(mv) => mv,
                None => {
                    winner = Some(!position.turn());
                    break;
                }
            }
        };
        match position.play(mv).expect("a legal move") {
            Played::Position(next) => position = next,
            Played::RoyalCaptured => {
                winner = Some(position.turn());
                break;
            }
        }
    }
    seen.into_iter()
        .filter(|p| !p.can_capture_royal())
        .map(|p| Sample {
            key: p.key(),
            result: match winner {
                None => 0.5,
                Some(color) if color == p.turn() => 1.0,
                Some(_) => 0.0,
            },
            position: p,
            weight: 1.0,
        })
        .collect()
}
