//! Invalid position strings and their exact errors, and a property test that no input makes
//! the parsers panic.

use proptest::prelude::*;
use shogi4_engine::{Material, Position};

#[test]
fn invalid_strings_give_their_errors() {
    let data = include_str!("data/invalid_positions.txt");
    let mut checked = 0;
    for line in data.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (input, expected) = line.split_once(" => ").expect("line is `input => error`");
        let error = Position::parse(input).expect_err(input).to_string();
        assert!(error.contains(expected), "{input:?}\n  gave     {error}\n  expected {expected}");
        checked += 1;
    }
    assert!(checked >= 25);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn parsers_never_panic_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = Position::parse(&text);
        let _ = text.parse::<Material>();
        let _ = Position::start().parse_move(&text);
    }

    #[test]
    fn parsers_never_panic_on_near_misses(text in "[kKcCfFrRtT+1-5/ _\\[\\]\\-bw0-9]{0,30}") {
        if let Ok(position) = Position::parse(&text) {
            prop_assert_eq!(Position::parse(&position.to_sfen()).unwrap(), position);
        }
    }
}
