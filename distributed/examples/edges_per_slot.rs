//! Samples slots of closed games and prints their average moves and un-moves per slot: the
//! edge counts that `docs/scale-out.md` projects a distributed solve's time and network
//! volume from, for games too big to solve here.
//!
//! `cargo run --release -p shogi4-distributed --example edges_per_slot -- [SAMPLES] [GAME ...]`

use shogi4_engine::{Material, MaterialIndex};

fn main() {
    let mut args = std::env::args().skip(1);
    let samples: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let mut games: Vec<String> = args.collect();
    if games.is_empty() {
        games = ["KKCFR", "KKCFRT", "KKCCFFR", "KKCCFRT", "KKCCFFRT", "KKCCFFRRTT"].map(String::from).to_vec();
    }
    println!("{:<12}{:>20}{:>14}{:>16}", "game", "slots", "moves/slot", "un-moves/slot");
    for game in games {
        let material: Material = game.parse().expect("a closed game");
        let index = MaterialIndex::new(material);
        let (mut moves, mut unmoves) = (0u64, 0u64);
        // A fixed stride through the slots (odd multiplier, so every sample is distinct).
        let mut slot = 0u64;
        for _ in 0..samples {
            slot = (slot + 0x9E37_79B9_7F4A_7C15 % index.slots()) % index.slots();
            let position = index.position_at(slot);
            moves += position.legal_moves().len() as u64;
            position.unmoves(|_| unmoves += 1);
        }
        println!(
            "{game:<12}{:>20}{:>14.2}{:>16.2}",
            index.slots(),
            moves as f64 / samples as f64,
            unmoves as f64 / samples as f64
        );
    }
}
