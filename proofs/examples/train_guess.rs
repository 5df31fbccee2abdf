//! Trains the search's guess (`shogi4_search::guess`: who wins a position, a logistic model
//! over its key) on the proven outcomes of a proof export, and writes its weights as the Rust
//! source that `search/src/guess/weights.rs` holds. Deterministic: the same file gives the
//! same weights.
//!
//! `cargo run --release -p shogi4-proofs --example train_guess -- EXPORT OUT [EPOCHS]`
//!
//! The outcomes are taken in an order drawn from their keys' hashes (the export is sorted by
//! key, an order that follows the board and would bias each pass's last steps), and the
//! first tenth of that order is held out and not trained on; the log loss and accuracy on
//! both parts are printed after each pass.

use std::path::Path;

use shogi4_search::guess::{features, FEATURES};

/// Passes over the training part.
const EPOCHS: usize = 8;
/// The first pass's learning rate; pass `e` uses `RATE / (1 + e)`.
const RATE: f32 = 0.05;
/// Weight decay.
const L2: f32 = 1e-6;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [export, out, ..] = &args[..] else {
        eprintln!("usage: train_guess EXPORT OUT [EPOCHS]");
        std::process::exit(2);
    };
    let epochs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(EPOCHS);
    let outcomes = shogi4_proofs::read_export(Path::new(export)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let mut samples: Vec<(u128, bool)> =
        outcomes.into_iter().filter_map(|(key, outcome)| Some((key, outcome.proven_win()?))).collect();
    samples.sort_by_cached_key(|&(key, _)| xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes()));
    let wins = samples.iter().filter(|&&(_, win)| win).count();
    eprintln!("{} proven outcomes, {wins} of them wins for the side to move", samples.len());
    let (held, train) = samples.split_at(samples.len() / 10);
    let mut weights = vec![0f32; FEATURES];
    for epoch in 0..epochs {
        let rate = RATE / (1.0 + epoch as f32);
        for &(key, win) in train {
            let gradient = probability(&weights, key) - f32::from(u8::from(win));
            for feature in features(key) {
                weights[feature] -= rate * (gradient + L2 * weights[feature]);
            }
        }
        eprintln!("pass {epoch}: training {}, held out {}", fit(&weights, train), fit(&weights, held));
    }
    let file_hash = xxhash_rust::xxh3::xxh3_64(&std::fs::read(export).expect("read once already"));
    let mut source = format!(
        "//! The guess's weights, written by `proofs/examples/train_guess.rs` from a proof export of\n\
         //! {} proven outcomes (the file's xxh3-64 {file_hash:016x}), {epochs} passes: held out, {}.\n\n\
         /// One per input of `guess::features`.\n#[rustfmt::skip]\npub(super) const WEIGHTS: [f32; super::FEATURES] = [\n",
        samples.len(),
        fit(&weights, held),
    );
    for row in weights.chunks(8) {
        let row: Vec<String> = row.iter().map(|w| format!("{w:?}")).collect();
        source.push_str(&format!("    {},\n", row.join(", ")));
    }
    source.push_str("];\n");
    std::fs::write(out, source).expect("a writable output");
}

fn probability(weights: &[f32], key: u128) -> f32 {
    let log_odds: f32 = features(key).map(|f| weights[f]).sum();
    1.0 / (1.0 + (-log_odds).exp())
}

/// Log loss and accuracy.
fn fit(weights: &[f32], samples: &[(u128, bool)]) -> String {
    let (mut loss, mut right) = (0f64, 0usize);
    for &(key, win) in samples {
        let p = probability(weights, key);
        loss -= f64::from(if win { p } else { 1.0 - p }.max(1e-7).ln());
        right += usize::from((p > 0.5) == win);
    }
    format!("log loss {:.4}, accuracy {:.4}", loss / samples.len() as f64, right as f64 / samples.len() as f64)
}
