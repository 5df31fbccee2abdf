//! The compact form (`S4CERT2`, one byte a winner's position) proves what the keyed form
//! proves: every published keyed certificate rewritten compactly is accepted with the same root,
//! value, tree and longest line, its bounds no looser, and the same positions proven; a file a
//! byte short or over is refused, and so is a line that comes back to itself.

use std::collections::HashMap;

use shogi4_certificate::{proven_positions, read_file, verify, Certificate, CertificateError, COMPACT_MAGIC};
use shogi4_engine::Position;

fn published() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/certificates");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "s4cert"))
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn every_published_certificate_rewritten_compactly_proves_the_same() {
    let files = published();
    assert!(files.len() >= 11);
    for (name, bytes) in files {
        if bytes.starts_with(COMPACT_MAGIC) {
            // Published compactly already: the solution, 22.7 MB, checked by `published.rs`
            // (read back and rewritten here, it would be held three times over, some 2.5 GB).
            // The compact form read back and rewritten is tried below on every keyed one.
            continue;
        }
        let keyed = bytes;
        let certificate = Certificate::parse(&keyed).unwrap();
        let compact = certificate.to_compact_bytes().unwrap();
        assert!(compact.starts_with(COMPACT_MAGIC), "{name}");
        let (was, is) = (verify(&keyed).unwrap(), verify(&compact).unwrap());
        assert_eq!(
            (was.root, was.root_wins, was.winner_positions, was.loser_positions, was.longest_line),
            (is.root, is.root_wins, is.winner_positions, is.loser_positions, is.longest_line),
            "{name}"
        );
        assert!(is.bound <= was.bound && is.bound >= is.longest_line, "{name}: {} against {}", is.bound, was.bound);
        assert_eq!(is.unused_entries, 0, "{name}");
        // One byte an entry against 19: the same header, and 18 bytes fewer a winner's position.
        assert_eq!(compact.len() as u64 + 18 * is.winner_positions, keyed.len() as u64, "{name}");
        // The same positions proven, each no looser than before.
        let proven = |bytes: &[u8]| -> HashMap<u128, (bool, u32)> {
            proven_positions(bytes).unwrap().map(|p| (p.position.key(), (p.wins, p.within))).collect()
        };
        let (before, after) = (proven(&keyed), proven(&compact));
        assert_eq!(before.len(), after.len(), "{name}");
        for (key, (wins, within)) in &before {
            let (wins_now, within_now) = after[key];
            assert!(wins_now == *wins && within_now <= *within, "{name}");
        }
        // Read back, it writes the same bytes again; and a file of it is read whole.
        assert_eq!(Certificate::parse(&compact).unwrap().to_compact_bytes().unwrap(), compact, "{name}");
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("compact-{name}"));
        std::fs::write(&path, &compact).unwrap();
        assert_eq!(read_file(&path).unwrap(), compact, "{name}");
    }
}

#[test]
fn a_compact_certificate_a_byte_short_or_over_is_refused() {
    // Flipped bytes are tried with the keyed form's (`tests/published.rs`).
    let keyed =
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/certificates/a1b2.s4cert"))
            .unwrap();
    let bytes = Certificate::parse(&keyed).unwrap().to_compact_bytes().unwrap();
    assert!(verify(&bytes).is_ok());
    assert_eq!(verify(&bytes[..bytes.len() - 1]), Err(CertificateError::Truncated));
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(verify(&longer), Err(CertificateError::TrailingBytes));
}

#[test]
fn a_line_that_comes_back_to_an_open_position_is_refused() {
    // Two royals alone: the first player's moves are chosen never to be lost at once, the
    // second player answers with its first reply, until a position comes back.
    let root = Position::parse("k3/4/4/3K b - 1").unwrap();
    let (mut position, mut moves, mut seen) = (root, Vec::new(), std::collections::HashSet::new());
    while seen.insert(position.key()) {
        let legal = position.legal_moves();
        let safe = legal
            .iter()
            .position(|&mv| {
                if position.captures_royal(mv) {
                    return false;
                }
                let loser = position.play_unchecked(mv);
                !loser.legal_moves().is_empty() && loser.legal_moves().iter().all(|&reply| !loser.captures_royal(reply))
            })
            .expect("a quiet move");
        moves.push(safe as u8);
        let loser = position.play_unchecked(legal[safe]);
        position = loser.play_unchecked(loser.legal_moves()[0]);
        assert!(moves.len() < 1000);
    }
    let sfen = root.to_sfen();
    let mut bytes = COMPACT_MAGIC.to_vec();
    bytes.extend_from_slice(&(sfen.len() as u16).to_le_bytes());
    bytes.extend_from_slice(sfen.as_bytes());
    bytes.push(1);
    bytes.extend_from_slice(&(moves.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&moves);
    assert!(matches!(verify(&bytes), Err(CertificateError::Cycle(_))), "{:?}", verify(&bytes));
}
