//! How big an engine-steered proof is, by its distance from a game's end: plays self-play
//! games, takes each won game's positions 20, 30, … plies before the winner's royal capture
//! (the winner to move), and proves each with the steered prover (`shogi4_search::steered`,
//! the engine as its guide, a record in memory), printing one line a position and a summary a
//! distance: how many were proven, the proof's size (the winner's positions), the tree, the
//! time.
//!
//! ```text
//! cargo run --release -p shogi4-play --example steered_distance -- \
//!     GAMES MOVE_NODES DISTANCES SECONDS LEAF_NODES GUIDE_NODES
//! cargo run --release -p shogi4-play --example steered_distance -- 6 20000 20,30,40,50,60 120 200000 20000
//! ```
//!
//! Games: the first four plies at random (from the game's number), then the engine at
//! MOVE_NODES a move; a game that repeats a position three times or runs to 200 plies is
//! dropped. Each proof gets SECONDS at most, one thread.

use std::time::{Duration, Instant};

use shogi4_engine::{Color, Played, Position};
use shogi4_play::{Engine, EngineGuide, Limits};
use shogi4_search::best_first::InMemory;
use shogi4_search::steered::{leaf_plan, Status, Steered, Steering};
use shogi4_search::{Cancel, Limits as ProofLimits, Search};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().expect("a number"));
    let games = number(0, 6);
    let table_mb = number(6, 64) as usize;
    let move_nodes = number(1, 20_000);
    let distances: Vec<usize> = args
        .get(2)
        .map_or("20,30,40,50,60", String::as_str)
        .split(',')
        .map(|d| d.parse().expect("a distance"))
        .collect();
    let seconds = number(3, 120);
    let steering = Steering {
        leaf_nodes: number(4, 200_000),
        leaf_time: None,
        leaf_searches: 1,
        patience: None,
        certified: false,
    };
    let guide_nodes = number(5, 20_000);
    let patience = args.get(7).and_then(|p| p.parse().ok());
    let steering = Steering { patience, ..steering };
    println!(
        "# steered proofs by distance: {games} games at {move_nodes} nodes a move, {seconds} s a proof, leaves \
         {} nodes, guide {guide_nodes} nodes",
        steering.leaf_nodes
    );
    println!("game\tplies left\tstatus\tproof\ttree\texpanded\tleaf searches\tleaf nodes\tseconds\tdf-pn alone (s)\tposition");
    // By distance: tried, proven, proof sizes and times of the proven.
    let mut summary: Vec<(usize, usize, Vec<usize>, Vec<f64>)> =
        distances.iter().map(|_| (0, 0, vec![], vec![])).collect();
    let engine = Engine::new(16);
    for game in 0..games {
        engine.clear();
        let Some((positions, winner)) = play_one(&engine, move_nodes, game) else {
            println!("{game}\t-\tdrawn or too long");
            continue;
        };
        println!("{game}\t-\tgame of {} plies, won by the {winner:?} player", positions.len());
        for (slot, &distance) in distances.iter().enumerate() {
            // The position `distance` plies before the last one (the winner's capture to play).
            let Some(index) = (positions.len() - 1).checked_sub(distance) else { continue };
            let start = positions[index];
            if start.turn() != winner {
                continue;
            }
            let record = InMemory::default();
            let mut guide = EngineGuide::new(16, guide_nodes, &());
            let mut tree = Steered::new(&record, start, winner, steering).expect("in memory");
            let mut searches = vec![Search::new(table_mb << 20).with_plan(leaf_plan())];
            let began = Instant::now();
            while began.elapsed() < Duration::from_secs(seconds)
                && tree.step(&mut guide, &mut searches).expect("in memory")
            {}
            let took = began.elapsed().as_secs_f64();
            let (tree_size, expanded, searched, leaf_nodes) = tree.counts();
            let status = tree.root_status();
            let proof = tree.proof_size();
            if status == Status::Open {
                for branch in tree.branches().iter().take(4) {
                    let line: Vec<String> = branch.line.iter().map(|m| m.to_string()).collect();
                    println!(
                        "#   {} {:?} estimate {:.2} numbers {}/{} line {}",
                        branch.mv,
                        branch.status,
                        branch.estimate,
                        branch.numbers.proof,
                        branch.numbers.disproof,
                        line.join(" ")
                    );
                }
            }
            // The proof search alone, on the same time and a table of the same size.
            let alone = Search::new(table_mb << 20).prove(
                &start,
                &ProofLimits { time: Some(Duration::from_secs(seconds)), ..ProofLimits::nodes(u64::MAX) },
            );
            let alone = if alone.outcome.proven_win() == Some(true) {
                format!("{:.1}", alone.elapsed.as_secs_f64())
            } else {
                "-".to_string()
            };
            let row = &mut summary[slot];
            row.0 += 1;
            if status == Status::Proven {
                row.1 += 1;
                row.2.push(proof.unwrap_or(0));
                row.3.push(took);
            }
            println!(
                "{game}\t{}\t{status:?}\t{}\t{tree_size}\t{expanded}\t{searched}\t{leaf_nodes}\t{took:.1}\t{alone}\t{}",
                distance + 1,
                proof.map_or("-".to_string(), |p| p.to_string()),
                start.to_sfen()
            );
        }
    }
    println!("\nplies left\tproven\tmedian proof\tlargest proof\tmedian seconds");
    for (distance, (tried, proven, mut sizes, mut times)) in distances.iter().zip(summary) {
        sizes.sort_unstable();
        times.sort_by(f64::total_cmp);
        let median = |v: &[usize]| v.get(v.len() / 2).map_or("-".to_string(), |x| x.to_string());
        println!(
            "{}\t{proven}/{tried}\t{}\t{}\t{}",
            distance + 1,
            median(&sizes),
            sizes.last().map_or("-".to_string(), |x| x.to_string()),
            times.get(times.len() / 2).map_or("-".to_string(), |t| format!("{t:.1}"))
        );
    }
}

/// One self-play game, its first four plies at random from `game`: its positions (the last
/// one the winner's, with the royal capture to play) and the winner; `None` for a game drawn
/// by repetition or longer than 200 plies.
fn play_one(engine: &Engine, nodes: u64, game: u64) -> Option<(Vec<Position>, Color)> {
    let mut random = game.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let limits = Limits { nodes: Some(nodes), ..Limits::default() };
    let mut position = Position::start();
    let mut positions: Vec<Position> = Vec::new();
    for ply in 0..200 {
        positions.push(position);
        let history: Vec<u128> = positions.iter().map(Position::key).collect();
        if history.iter().filter(|&&k| k == position.key()).count() >= 3 {
            return None;
        }
        let mv = if ply < 4 {
            let moves = position.safe_moves().0;
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            *moves.get((random % moves.len().max(1) as u64) as usize)?
        } else {
            let analysis =
                engine.search(&position, &history[..history.len() - 1], &limits, &(), &Cancel::default(), |_| {});
            analysis.best_move()?
        };
        match position.play(mv).expect("a legal move") {
            Played::Position(next) => position = next,
            Played::RoyalCaptured => return Some((positions, position.turn())),
        }
    }
    None
}
