//! The fast engine against a deliberately simple reference, on 100,000 sampled positions:
//! move lists and their results, un-moves as the exact inverse of moves, and notation.

mod common;

use std::collections::{BTreeMap, HashSet};

use common::{sample_positions, RefOutcome, RefPosition};
use shogi4_engine::{Color, Move, Position, Setup, Square};

const SAMPLES: usize = 100_000;

#[test]
fn move_generation_matches_the_reference() {
    let mut mismatches = 0;
    for position in sample_positions(SAMPLES, 1) {
        let reference: BTreeMap<String, RefOutcome> = RefPosition::from_engine(&position).moves().into_iter().collect();
        let fast: BTreeMap<String, RefOutcome> = position
            .legal_moves()
            .iter()
            .map(|&mv| {
                let outcome = if position.captures_royal(mv) {
                    RefOutcome::RoyalCaptured
                } else {
                    RefOutcome::Next(RefPosition::from_engine(&position.play_unchecked(mv)))
                };
                (mv.to_string(), outcome)
            })
            .collect();
        if reference != fast {
            mismatches += 1;
            if mismatches < 5 {
                eprintln!("mismatch in {}:\n reference {:?}\n fast      {:?}", position, reference.keys(), fast.keys());
            }
        }
    }
    assert_eq!(mismatches, 0);
}

#[test]
fn unmoves_are_the_exact_inverse_of_moves() {
    for position in sample_positions(SAMPLES, 2) {
        // Every predecessor really leads here by its move.
        let mut predecessors = HashSet::new();
        position.for_each_unmove(|pred, mv| {
            let legal = pred.legal_moves();
            assert!(legal.contains(&mv), "{mv} is not legal in predecessor {pred} of {position}");
            assert_eq!(pred.play_unchecked(mv), position, "{pred} + {mv}");
            assert!(Position::try_from(pred.to_setup()).is_ok());
            assert!(predecessors.insert((*pred, mv)), "duplicate un-move {pred} {mv}");
        });
        // Every move from here is found again among the un-moves of its result.
        for mv in position.legal_moves() {
            if position.captures_royal(mv) {
                continue;
            }
            let next = position.play_unchecked(mv);
            let mut found = false;
            next.for_each_unmove(|pred, m| found |= *pred == position && m == mv);
            assert!(found, "({position}, {mv}) missing from the un-moves of {next}");
        }
    }
}

#[test]
fn a_predecessors_royal_capture_is_seen_without_building_it() {
    let (mut wins, mut total) = (0, 0);
    for position in sample_positions(SAMPLES, 3) {
        position.unmoves(|unmove| {
            let built = position.before(&unmove).can_capture_royal();
            assert_eq!(position.before_can_capture_royal(&unmove), built, "{position}: {unmove:?}");
            wins += u32::from(built);
            total += 1;
        });
    }
    // Both answers occur, so the comparison means something.
    assert!(0 < wins && wins < total, "{wins} of {total}");
}

#[test]
fn safe_moves_are_the_legal_moves_that_do_not_expose_the_royal() {
    let (mut exposing, mut total, mut threatened) = (0, 0, 0);
    for position in sample_positions(SAMPLES, 3) {
        threatened += u32::from(position.threatens_royal());
        let legal = position.legal_moves();
        let filtered: Vec<Move> = legal.iter().copied().filter(|&mv| !position.exposes_royal(mv)).collect();
        let counts = position.move_counts();
        assert_eq!((counts.legal, counts.safe), (legal.len(), filtered.len()), "{position}");
        let (safe, some_unsafe) = position.safe_moves();
        assert_eq!(safe.iter().copied().collect::<Vec<Move>>(), filtered, "{position}: the same moves, in order");
        assert_eq!(some_unsafe, filtered.len() < legal.len(), "{position}");
        assert_eq!(position.has_safe_move(), !filtered.is_empty(), "{position}");
        exposing += legal.len() - filtered.len();
        total += legal.len();
    }
    // Both kinds of move occur, and positions whose royal is threatened (every kind of move
    // tested in full), so the comparison means something.
    assert!(0 < exposing && exposing < total, "{exposing} of {total}");
    assert!(threatened > 0);
}

#[test]
fn the_opponents_mobility_counts_every_childs_moves() {
    let (mut shortcut, mut total) = (0, 0);
    for position in sample_positions(SAMPLES, 3) {
        if position.can_capture_royal() {
            continue;
        }
        let mobility = position.opponent_mobility();
        for mv in position.legal_moves() {
            let child = position.play_unchecked(mv);
            assert_eq!(mobility.counts_in(&child), child.move_counts(), "{position}: {mv}");
            // The counts the shortcut gives (nothing captured, the child's royal not threatened)
            // are among those compared.
            shortcut += u32::from(!position.is_capture(mv) && !child.threatens_royal());
            total += 1;
        }
    }
    assert!(0 < shortcut && shortcut < total, "{shortcut} of {total}");
}

#[test]
fn notation_round_trips_and_both_forms_agree() {
    for position in sample_positions(SAMPLES / 4, 3) {
        let sfen = position.to_sfen();
        let fen = position.to_fen();
        assert_eq!(Position::parse(&sfen).unwrap(), position, "{sfen}");
        assert_eq!(Position::parse(&fen).unwrap(), position, "{fen}");
        assert_eq!(Position::parse(&sfen.replace(' ', "_")).unwrap(), position);
        assert_eq!(Position::try_from(Setup::parse(&fen).unwrap()).unwrap(), position);
        for mv in position.legal_moves() {
            let parsed = position.parse_move(&mv.to_string()).unwrap();
            assert_eq!(parsed, mv);
            if let Move::Board { from, to, .. } = mv {
                assert_eq!(position.parse_move(&format!("{from}{to}")).unwrap(), mv, "the '+' is optional");
            }
        }
    }
}

#[test]
fn symmetries_preserve_the_move_tree() {
    for position in sample_positions(20_000, 4) {
        for image in [position.flipped(), position.mirrored()] {
            assert_eq!(image.legal_moves().len(), position.legal_moves().len(), "{position}");
            assert_eq!(shogi4_engine::perft(&image, 2), shogi4_engine::perft(&position, 2));
        }
        assert_eq!(position.flipped().flipped(), position);
        assert_eq!(position.mirrored().mirrored(), position);
    }
}

#[test]
fn perft_data_file_agrees_with_the_reference() {
    for line in include_str!("data/perft.txt").lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let (sfen, counts) = line.split_once(';').unwrap();
        let position = Position::parse(sfen.trim()).unwrap();
        let reference = RefPosition::from_engine(&position);
        for (depth, expected) in (1..=3).zip(counts.split_whitespace()) {
            assert_eq!(reference.perft(depth), expected.parse::<u64>().unwrap(), "reference perft({depth}) of {sfen}");
        }
    }
}

#[test]
fn royal_capture_test_agrees_with_move_generation() {
    for position in sample_positions(SAMPLES, 5) {
        let by_moves = position.legal_moves().iter().any(|&mv| position.captures_royal(mv));
        assert_eq!(position.can_capture_royal(), by_moves, "{position}");
        assert_eq!(position.has_no_legal_move(), position.legal_moves().is_empty());
        for mv in position.legal_moves() {
            if !position.captures_royal(mv) {
                let child = position.play_unchecked(mv);
                assert_eq!(position.exposes_royal(mv), child.can_capture_royal(), "{position} {mv}");
            }
        }
    }
}

/// The layout of `Position::key` is stored on disk (proof stores), so the fast packing must
/// keep it: 5 bits a square from a1 on (empty 0, then 1 + 9 × owner + kind code), 2 bits a hand
/// count (first player's, then second's), the side to move last.
#[test]
fn keys_keep_their_stored_layout() {
    let mut distinct = HashSet::new();
    for position in sample_positions(SAMPLES / 4, 4) {
        let setup = position.to_setup();
        let mut key = 0u128;
        for square in setup.board {
            let code = square.map_or(0, |piece| {
                let kind = match (piece.kind.hand_index(), piece.promoted) {
                    (None, _) => 0,
                    (Some(i), false) => 1 + i as u128,
                    (Some(i), true) => 5 + i as u128,
                };
                1 + 9 * (piece.color as u128) + kind
            });
            key = key << 5 | code;
        }
        for hand in [setup.hands.first, setup.hands.second] {
            for count in hand.0 {
                key = key << 2 | u128::from(count);
            }
        }
        key = key << 1 | setup.turn as u128;
        assert_eq!(position.key(), key, "{position}");
        distinct.insert(key);
    }
    // Many positions, so the comparison covers every square's code.
    assert!(distinct.len() > SAMPLES / 8, "{}", distinct.len());
}

/// The key of every move's result, updated from the key before it, equals the key built
/// from scratch: every field a move touches (both squares, promotion, a captured piece's hand
/// count, a drop's) is rewritten.
#[test]
fn keys_after_a_move_match_keys_built_afresh() {
    let mut checked = 0;
    for position in sample_positions(SAMPLES / 4, 5) {
        let key = position.key();
        for &mv in position.legal_moves().iter().filter(|&&mv| !position.captures_royal(mv)) {
            assert_eq!(position.key_after(key, mv), position.play_unchecked(mv).key(), "{position} {mv}");
            checked += 1;
        }
    }
    assert!(checked > SAMPLES, "{checked}");
}

/// What a move leaves the opponent, read off the position before it, equals what the
/// position after it says: a threat to the opponent's royal, and a drop for the opponent.
#[test]
fn threats_and_drops_after_a_move_match_the_position_after_it() {
    let (mut threats, mut without_drop) = (0, 0);
    for position in sample_positions(SAMPLES / 4, 6) {
        for &mv in position.legal_moves().iter().filter(|&&mv| !position.captures_royal(mv)) {
            let after = position.play_unchecked(mv);
            assert_eq!(position.threatens_after(mv), after.threatens_royal(), "{position} {mv}");
            let has_drop = after.legal_moves().iter().any(|mv| matches!(mv, Move::Drop { .. }));
            assert_eq!(position.opponent_can_drop_after(mv), has_drop, "{position} {mv}");
            threats += usize::from(after.threatens_royal());
            without_drop += usize::from(!has_drop);
        }
    }
    // Both answers occur often, or the comparison says little.
    assert!(threats > SAMPLES / 10 && without_drop > SAMPLES / 10, "{threats} {without_drop}");
}

/// A key read back field by field (each square's code, both hands, the side to move) gives
/// the position's own board, hands and side to move.
#[test]
fn keys_read_back_to_their_positions() {
    for position in sample_positions(SAMPLES / 4, 6) {
        let key = position.key();
        let codes = Position::square_codes_in_key(key);
        for square in Square::all() {
            let piece = Position::piece_of_key_code(codes[square.index()]);
            assert_eq!(piece, position.piece_at(square), "{position} {square:?}");
        }
        for color in Color::BOTH {
            assert_eq!(Position::hand_in_key(key, color), position.hand(color), "{position}");
        }
        assert_eq!(Position::turn_in_key(key), position.turn(), "{position}");
    }
    assert_eq!(Position::piece_of_key_code(0), None);
    assert_eq!(Position::piece_of_key_code(19), None);
}
