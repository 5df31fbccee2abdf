//! The certificates published in `tables/certificates/` hold: each proves the value of the
//! position after a line from the start, checked here by the rules alone.

use shogi4_certificate::{verify, Certificate};
use shogi4_engine::Position;

/// The lines after which the player to move loses (the line's last move wins), where their
/// certificates are published (`c1b2`'s is inside the solution's, `tables/solution/`); after
/// every other published line the player to move wins. `start` names the empty line.
const LINES_THAT_WIN: &[&str] = &["c1b2"];

#[test]
fn every_published_certificate_proves_the_value_its_line_claims() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/certificates");
    let start = Position::start();
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("tables/certificates exists") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "s4cert") {
            continue;
        }
        // Named after its line: `a2a3.s4cert` is the position after 1. a2a3,
        // `c1b2-a4a3.s4cert` the one after 1. c1b2 a4a3, and `start.s4cert` the start.
        let name = path.file_stem().unwrap().to_str().unwrap();
        let moves = if name == "start" { Vec::new() } else { name.split('-').collect() };
        let after = moves.iter().fold(start, |position, text| {
            let played = position.parse_move(text).unwrap_or_else(|e| panic!("{name}: {text}: {e}"));
            position.play_unchecked(played)
        });
        let verdict = verify(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(verdict.root, after, "{name}");
        assert_eq!(verdict.root_wins, !LINES_THAT_WIN.contains(&name), "{name}");
        assert_eq!(verdict.unused_entries, 0, "{name}");
        checked += 1;
    }
    assert!(checked >= 11, "{checked} certificates");
}

/// The weak solution: `tables/solution/start.s4cert` proves that the first player wins from
/// the start, by the rules alone. It is kept apart from `tables/certificates/`, which a server
/// loads at every start, for its size.
#[test]
fn the_solution_proves_that_the_first_player_wins_from_the_start() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/solution/start.s4cert");
    let bytes = std::fs::read(&path).expect("tables/solution/start.s4cert exists");
    // One check gives both the verdict and the positions proven.
    let mut proven = shogi4_certificate::proven_positions(&bytes).unwrap();
    let verdict = proven.verdict().clone();
    assert_eq!(verdict.root, Position::start());
    assert!(verdict.root_wins, "the side to move at the start, the first player, wins");
    assert_eq!(verdict.unused_entries, 0);
    // The first move it proves is c1b2: the position after it is in the proof.
    let after = Position::start().play_unchecked(Position::start().parse_move("c1b2").unwrap());
    assert!(proven.any(|p| p.position == after && !p.wins), "c1b2 is the winning move");

    // Cut short (to a third, or by its last byte), it is refused; with its last byte changed,
    // it is refused or still proves the same.
    for cut in [bytes.len() / 3, bytes.len() - 1] {
        assert!(verify(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut damaged = bytes.clone();
    *damaged.last_mut().unwrap() ^= 0x40;
    if let Ok(verdict) = verify(&damaged) {
        assert_eq!((verdict.root, verdict.root_wins), (Position::start(), true));
    }
}

#[test]
fn damaged_certificates_are_refused_or_still_prove_the_same_value_never_a_panic() {
    // Any byte of a published certificate flipped, in either form: the checker either refuses
    // the file or, where the damage happens to leave a valid proof (a looser bound, an unused
    // entry, another winning move), still proves the same position's same value. It never
    // panics.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/certificates/a1b2.s4cert");
    let keyed = std::fs::read(path).unwrap();
    let compact = Certificate::parse(&keyed).unwrap().to_compact_bytes().unwrap();
    for bytes in [keyed, compact] {
        let truth = verify(&bytes).unwrap();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let (mut refused, mut held) = (0, 0);
        for _ in 0..300 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut damaged = bytes.clone();
            let at = (state % bytes.len() as u64) as usize;
            damaged[at] ^= 1 << (state >> 60 & 7);
            match verify(&damaged) {
                Ok(verdict) => {
                    assert_eq!((verdict.root, verdict.root_wins), (truth.root, truth.root_wins), "byte {at}");
                    held += 1;
                }
                Err(_) => refused += 1,
            }
        }
        assert!(refused > 100, "{refused} refused, {held} held");
    }
}
