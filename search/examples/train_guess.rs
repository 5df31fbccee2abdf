//! Trains the guess of `src/guess.rs` (who wins a position, a logistic model over its key) on
//! the proven outcomes of a proof export, and writes its weights as the Rust source that
//! `src/guess/weights.rs` holds. Deterministic: the same file gives the same weights.
//!
//! `cargo run --release -p shogi4-search --example train_guess -- EXPORT OUT [EPOCHS]`
//!
//! A tenth of the outcomes (a seeded draw) is held out and not trained on; the log loss and
//! accuracy on both parts are printed after each pass.

#[path = "../tests/common/rng.rs"]
mod rng;

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
    let mut samples = proven(&std::fs::read(export).expect("a readable proof export"));
    let mut rng = rng::Rng(0x9E37_79B9_7F4A_7C15);
    for i in (1..samples.len()).rev() {
        samples.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
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
    let bytes = std::fs::read(export).expect("a readable proof export");
    let checksum = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
    let mut source = format!(
        "//! The guess's weights, written by `examples/train_guess.rs` from a proof export of {} proven\n\
         //! outcomes (its checksum {checksum:016x}), {epochs} passes: held out, {}.\n\n\
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

/// (key, whether the side to move wins) of every proven outcome of an export (`S4PROOF1`: a
/// header, 24-byte records of key and record, a checksum; see `shogi4-proofs`).
fn proven(bytes: &[u8]) -> Vec<(u128, bool)> {
    assert!(bytes.len() >= 24 && &bytes[..8] == b"S4PROOF1", "not a proof export");
    bytes[16..bytes.len() - 8]
        .chunks_exact(24)
        .filter_map(|chunk| {
            let key = u128::from_le_bytes(chunk[..16].try_into().expect("16 bytes"));
            let payload = u64::from_le_bytes(chunk[16..].try_into().expect("8 bytes")) & 0xFFFF_FFFF;
            // The store's tags: 1 exact (odd distances are wins), 3 a bounded win, 4 a bounded loss.
            match payload >> 24 {
                1 => Some((key, payload & 1 == 1)),
                3 => Some((key, true)),
                4 => Some((key, false)),
                _ => None,
            }
        })
        .collect()
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
