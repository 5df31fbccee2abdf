//! The certificates published in `tables/certificates/` hold: each proves the value of the
//! position after a line from the start, checked here by the rules alone.

use shogi4_certificate::{proven_positions, verify, Certificate};
use shogi4_engine::Position;

/// The winning first move the solution must prove: the position after it is among its proven
/// losses.
const SOLUTION_FIRST_MOVE: &str = "c1b2";

fn published_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/certificates")
}

#[test]
fn every_published_certificate_proves_the_value_its_line_claims() {
    let start = Position::start();
    let mut checked = 0;
    for entry in std::fs::read_dir(published_dir()).expect("tables/certificates exists") {
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
        // One check gives both the verdict and the positions proven (the solution's 25 million
        // positions take half a minute).
        let mut proven = proven_positions(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let verdict = proven.verdict().clone();
        assert_eq!(verdict.root, after, "{name}");
        // After each published line the player to move wins: the second player after a losing
        // first move, the first player after a reply to c1b2, and the first player at the start
        // (the empty line: the weak solution).
        assert!(verdict.root_wins, "{name}");
        assert_eq!(verdict.unused_entries, 0, "{name}");
        if name == "start" {
            let first = start.play_unchecked(start.parse_move(SOLUTION_FIRST_MOVE).unwrap());
            assert!(proven.any(|p| p.position == first && !p.wins), "{SOLUTION_FIRST_MOVE} is the winning move");
        }
        checked += 1;
    }
    assert!(checked >= 12, "{checked} certificates");
}

/// The weak solution, damaged where a checker meets it first (its header, its first moves) or
/// cut short or lengthened, is refused; within milliseconds, since the damage is met early.
/// (Damage anywhere is tried on a smaller certificate, below.)
#[test]
fn the_solution_damaged_is_refused() {
    let bytes = std::fs::read(published_dir().join("start.s4cert")).unwrap();
    let sfen_length = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let (flag, count, body) = (10 + sfen_length, 11 + sfen_length, 19 + sfen_length);
    let changed = |at: usize, mask: u8| {
        let mut damaged = bytes.clone();
        damaged[at] ^= mask;
        damaged
    };
    let mut longer = bytes.clone();
    longer.push(0);
    let variants = [
        ("the root's side said to lose", changed(flag, 1)),
        ("one more entry declared", changed(count, 1)),
        ("the root's first piece changed", changed(10, 0x20)),
        ("the first move changed", changed(body, 1)),
        ("the thousandth move changed", changed(body + 1000, 2)),
        ("cut to a third", bytes[..bytes.len() / 3].to_vec()),
        ("a byte short", bytes[..bytes.len() - 1].to_vec()),
        ("a byte over", longer),
    ];
    for (what, damaged) in variants {
        assert!(verify(&damaged).is_err(), "{what}: accepted");
    }
}

#[test]
fn damaged_certificates_are_refused_or_still_prove_the_same_value_never_a_panic() {
    // Any byte of a published certificate flipped, in either form: the checker either refuses
    // the file or, where the damage happens to leave a valid proof (a looser bound, an unused
    // entry, another winning move), still proves the same position's same value. It never
    // panics.
    let path = published_dir().join("a1b2.s4cert");
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
