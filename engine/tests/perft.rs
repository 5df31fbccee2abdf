//! Perft figures: the published start-position counts, and a data file of further positions
//! (drops, jumps, promotions, royal captures, full hands).

use shogi4_engine::{perft, Position};

#[test]
fn start_position_matches_the_published_figures() {
    let published = [8, 64, 626, 6_304, 68_723, 769_014];
    let start = Position::start();
    for (depth, &nodes) in (1..).zip(&published) {
        assert_eq!(perft(&start, depth), nodes, "perft({depth}) from the start position");
    }
}

#[test]
fn positions_in_the_data_file() {
    let data = include_str!("data/perft.txt");
    let mut checked = 0;
    for line in data.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let (sfen, counts) = line.split_once(';').expect("line is `SFEN; n1 n2 ...`");
        let position = Position::parse(sfen.trim()).unwrap_or_else(|e| panic!("{sfen}: {e}"));
        for (depth, expected) in (1..).zip(counts.split_whitespace()) {
            let expected: u64 = expected.parse().expect("a number");
            assert_eq!(perft(&position, depth), expected, "perft({depth}) of {sfen}");
        }
        checked += 1;
    }
    assert!(checked >= 10, "the data file holds at least 10 positions");
}
