//! The dense index: a bijection over every slot of the small closed games, a random sample of
//! the large ones, and counts that match brute-force enumeration.

mod common;

use std::collections::HashSet;

use common::{sample_positions, Rng};
use shogi4_engine::{ByColor, Color, Kind, Material, MaterialIndex, Piece, Position, Setup, Square};

#[test]
fn every_slot_round_trips_up_to_two_pieces() {
    for material in Material::all_up_to(2) {
        let index = MaterialIndex::new(material);
        for slot in 0..index.slots() {
            let position = index.position_at(slot);
            assert_eq!(position.turn(), Color::First);
            assert!(position.royal(Color::First).file() < 2, "canonical royal on file a or b");
            assert_eq!(position.material(), material);
            for image in [position, position.flipped(), position.mirrored(), position.flipped().mirrored()] {
                assert_eq!(index.index_of(&image), slot, "{material} slot {slot}: {image}");
            }
        }
    }
}

#[test]
fn random_slots_round_trip_in_large_games() {
    let mut rng = Rng::new(7);
    for material in Material::all_up_to(8).into_iter().filter(|m| m.pieces() >= 3) {
        let index = MaterialIndex::new(material);
        for _ in 0..2_000 {
            let slot = rng.below(index.slots());
            let position = index.position_at(slot);
            assert_eq!(Position::try_from(position.to_setup()).unwrap(), position);
            assert_eq!(index.index_of(&position.flipped()), slot, "{material} slot {slot}");
            assert_eq!(index.index_of(&position.mirrored()), slot, "{material} slot {slot}");
        }
        // The last slot is reachable too.
        let last = index.slots() - 1;
        assert_eq!(index.index_of(&index.position_at(last)), last);
    }
}

/// Every legal position of a closed game, both sides to move, by brute force over squares.
fn enumerate(material: Material) -> HashSet<Position> {
    let mut pieces = Vec::new();
    for (kind, &count) in Kind::HAND_KINDS.iter().zip(&material.counts()) {
        pieces.extend(std::iter::repeat_n(*kind, usize::from(count)));
    }
    let mut found = HashSet::new();
    // Each piece: 2 hands or 16 squares × 2 owners × 2 promotion states = 66 places.
    let places = 66usize;
    let total = places.pow(pieces.len() as u32);
    for a in Square::all() {
        for b in Square::all().filter(|&b| b != a) {
            for code in 0..total {
                let mut setup = Setup { board: [None; 16], hands: ByColor::default(), turn: Color::First };
                setup.board[a.index()] = Some(Piece::new(Color::First, Kind::Royal, false));
                setup.board[b.index()] = Some(Piece::new(Color::Second, Kind::Royal, false));
                let mut rest = code;
                let mut clash = false;
                for &kind in &pieces {
                    let place = rest % places;
                    rest /= places;
                    match place {
                        0 => setup.hands.first.add(kind),
                        1 => setup.hands.second.add(kind),
                        _ => {
                            let p = place - 2;
                            let square = Square::from_index((p / 4) as u8);
                            let color = if p % 4 / 2 == 0 { Color::First } else { Color::Second };
                            clash |= setup.board[square.index()].is_some();
                            setup.board[square.index()] = Some(Piece::new(color, kind, p % 2 == 1));
                        }
                    }
                }
                if clash {
                    continue;
                }
                for turn in Color::BOTH {
                    setup.turn = turn;
                    if let Ok(position) = Position::try_from(setup) {
                        found.insert(position);
                    }
                }
            }
        }
    }
    found
}

#[test]
fn brute_force_counts_match_the_index() {
    for name in ["KK", "KKC", "KKF", "KKR", "KKT", "KKCC", "KKCF", "KKRT"] {
        let material: Material = name.parse().unwrap();
        let positions = enumerate(material);
        let index = MaterialIndex::new(material);
        assert_eq!(positions.len() as u64, index.positions(), "{name}");
        let slots: HashSet<u64> = positions.iter().map(|p| index.index_of(p)).collect();
        assert_eq!(slots.len() as u64, index.slots(), "{name}: every slot is hit");
    }
}

#[test]
fn counts_match_rules_md() {
    // The table "closed game | positions" of docs/rules.md, read from the file itself: every
    // game named in a row's first cell (in backticks) has the row's count.
    let rules = include_str!("../../docs/rules.md");
    let table = rules.split("| closed game | positions |").nth(1).expect("the counts table");
    let mut checked = 0;
    for row in table.lines().skip(2).take_while(|line| line.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let positions: u64 = cells[2].replace(',', "").parse().unwrap_or_else(|_| panic!("{row}"));
        for name in cells[1].split('`').skip(1).step_by(2) {
            let index = MaterialIndex::new(name.parse().unwrap());
            assert_eq!(index.positions(), positions, "{name}");
            assert_eq!(index.slots() * 4, positions, "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} games read from docs/rules.md");
}

#[test]
fn ranges_decode_like_single_slots() {
    let mut rng = Rng::new(11);
    for material in Material::all_up_to(8) {
        let index = MaterialIndex::new(material);
        // Small games whole; large ones in 20 random runs of 1,000 slots.
        let (starts, length): (Vec<u64>, u64) = if index.slots() <= 400_000 {
            (vec![0], index.slots())
        } else {
            ((0..20).map(|_| rng.below(index.slots() - 1_000)).collect(), 1_000)
        };
        for range in starts.into_iter().map(|start| start..start + length) {
            let mut visited = range.start;
            index.for_each_position(range.clone(), |slot, position| {
                assert_eq!(slot, visited, "{material}: slots in order, none skipped");
                assert_eq!(*position, index.position_at(slot), "{material} slot {slot}");
                visited += 1;
            });
            assert_eq!(visited, range.end, "{material}: every slot visited");
        }
    }
}

#[test]
fn children_are_indexed_as_if_built() {
    let mut indexes = std::collections::HashMap::new();
    for position in sample_positions(100_000, 6) {
        let index = indexes.entry(position.material()).or_insert_with(|| MaterialIndex::new(position.material()));
        let children = index.children_of(&position);
        for mv in position.legal_moves() {
            if !position.captures_royal(mv) {
                let built = index.index_of(&position.play_unchecked(mv));
                assert_eq!(children.index_after(mv), built, "{position} {mv}");
            }
        }
    }
}

#[test]
fn parents_are_indexed_as_if_built() {
    let mut indexes = std::collections::HashMap::new();
    let mut checked = 0;
    for position in sample_positions(100_000, 6) {
        let index = indexes.entry(position.material()).or_insert_with(|| MaterialIndex::new(position.material()));
        let parents = index.parents_of(&position);
        position.unmoves(|unmove| {
            let built = position.before(&unmove);
            assert_eq!(built.play_unchecked(unmove.mv), position, "{position}: {unmove:?} is not an un-move");
            assert_eq!(parents.index_before(&unmove), index.index_of(&built), "{position} {unmove:?}");
            checked += 1;
        });
    }
    assert!(checked > 1_000_000, "{checked} un-moves");
}

#[test]
fn a_cursor_decodes_like_position_at() {
    for name in ["KKC", "KKCF", "KKCFR"] {
        let index = MaterialIndex::new(name.parse().unwrap());
        let mut cursor = index.cursor();
        // Increasing slots with gaps of every size, crossing many blocks.
        let (mut slot, mut checked) = (0, 0);
        while slot < index.slots() {
            assert_eq!(cursor.position_at(slot), index.position_at(slot), "{name} slot {slot}");
            checked += 1;
            slot += 1 + checked * checked % 397;
        }
        assert!(checked >= index.slots() / 400, "{name}: {checked}");
        // Small gaps, which the cursor covers by stepping the lowest digit instead of decoding.
        let mut cursor = index.cursor();
        let (mut slot, mut gap) = (0, 1);
        while slot < index.slots().min(60_000) {
            assert_eq!(cursor.position_at(slot), index.position_at(slot), "{name} slot {slot}");
            slot += gap;
            gap = gap % 5 + 1;
        }
    }
}
