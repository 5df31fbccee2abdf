//! Prints random positions of a closed game, one SFEN a line, from a seed: uniform over the
//! dense index's slots, each flipped to the second player's move half of the time. Used by
//! `scripts/loadtest.sh` to probe a large table at random.
//!
//! `cargo run --release -p shogi4-engine --example sample_positions -- KKCFRT 10000 [SEED]`

use shogi4_engine::{Material, MaterialIndex};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let material: Material = args.first().map_or("KKCFRT", String::as_str).parse().expect("a closed game, e.g. KKCFRT");
    let count: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let mut state: u64 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(0x5EED);
    let index = MaterialIndex::new(material);
    for _ in 0..count {
        // xorshift64*: reproducible from the seed.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let random = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let position = index.position_at(random % index.slots());
        let position = if random >> 63 == 1 { position.flipped() } else { position };
        println!("{}", position.to_sfen());
    }
}
