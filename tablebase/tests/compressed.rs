//! Compressed tables (format version 4) against the plain tables they come from: every slot,
//! every probe, the audit, overflow distances, and damage that must never become a wrong
//! answer, and the block-by-block read the compressor checks its output with.

use shogi4_engine::{Material, MaterialIndex};
use shogi4_tablebase::compressed::{encode, Decoder};
use shogi4_tablebase::{
    audit, solve, Damage, FormatError, Silent, Statistics, Table, Value, OVERFLOW_CODE, VERSION_COMPRESSED,
};

fn plain(name: &str) -> Table<Vec<u8>> {
    Table::new(solve(name.parse().unwrap(), &Silent).table.to_bytes()).unwrap()
}

fn compressed(table: &Table<Vec<u8>>) -> Table<Vec<u8>> {
    let compressed = Table::new(table.to_compressed(&Silent).unwrap()).unwrap();
    assert!(compressed.is_compressed());
    assert_eq!(compressed.header().version(), VERSION_COMPRESSED);
    compressed
}

/// Every slot's value, every position's value and every probe (each move's value) agree.
fn assert_same(plain: &Table<Vec<u8>>, compressed: &Table<Vec<u8>>) {
    let name = plain.header().material;
    compressed.verify_checksum().unwrap();
    assert_eq!(compressed.header().statistics, plain.header().statistics);
    let values = compressed.decompressed_values().unwrap();
    assert!(values[..] == plain.values().unwrap()[..], "{name}: decompressed bytes differ");
    let index = plain.index();
    index.for_each_position(0..plain.header().slots, |slot, position| {
        assert_eq!(compressed.value(slot), plain.value(slot), "{name} slot {slot}");
        assert_eq!(compressed.value_of(position), plain.value_of(position), "{name} slot {slot}");
        if slot % 7 == 0 {
            assert_eq!(compressed.probe(position).unwrap(), plain.probe(position).unwrap(), "{name} slot {slot}");
        }
    });
    assert_eq!(compressed.longest_win(), plain.longest_win(), "{name}");
}

#[test]
fn every_slot_and_probe_matches_the_plain_table() {
    for name in ["KK", "KKC", "KKF", "KKR", "KKT", "KKCC", "KKCF", "KKFR", "KKRT"] {
        let plain = plain(name);
        let compressed = compressed(&plain);
        assert_same(&plain, &compressed);
        assert!(compressed.size() < plain.size() || plain.size() < 10_000, "{name} did not shrink");
        // Compressing a compressed table gives the same bytes: the format is deterministic.
        assert!(compressed.to_compressed(&Silent).unwrap() == compressed.file_bytes(), "{name}");
    }
}

/// Any number of parts per block reads back the same values, and so do runs long enough that
/// a part's start no longer fits its field (the block then ends early).
#[test]
fn every_part_count_reads_the_same_values() {
    let plain = plain("KKCF");
    for parts in [1, 2, 3, 5, 16] {
        let compressed = Table::new(plain.to_compressed_in_parts(parts, &Silent).unwrap()).unwrap();
        assert_same(&plain, &compressed);
    }
    // The same game with one value wherever the rules do not decide: long runs.
    let material: Material = "KKCF".parse().unwrap();
    let mut table = solve(material, &Silent).table;
    let index = MaterialIndex::new(material);
    for slot in 0..index.slots() {
        if !index.position_at(slot).can_capture_royal() {
            table.values[slot as usize] = Value::Loss(2).encode();
        }
    }
    table.statistics = Statistics::of_values(&table.values, &table.overflow);
    let runs = Table::new(table.to_bytes()).unwrap();
    for parts in [1, 16] {
        let compressed = Table::new(runs.to_compressed_in_parts(parts, &Silent).unwrap()).unwrap();
        assert_same(&runs, &compressed);
    }
}

/// Long runs of a few values, so that a part's slots outgrow its 12-bit start and blocks end
/// early: every byte still reads back, by slot and whole.
#[test]
fn runs_past_a_part_start_field_read_back() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut values = Vec::new();
    while values.len() < 3_000_000 {
        let (value, run) = (2 + 2 * next(20) as u8, 1_000 + next(4_000) as usize);
        values.extend(std::iter::repeat_n(value, run));
    }
    for parts in [2, 16] {
        let section = encode(&values, |_| false, None, parts, &Silent);
        let decoder = Decoder::parse(&section, values.len() as u64).unwrap();
        assert!(decoder.decode_all(&section).unwrap() == values, "{parts} parts");
        // Block by block (the compressor's read-back): every slot once, where it belongs.
        let blocks = std::sync::Mutex::new(Vec::new());
        decoder.for_each_block(&section, |first, bytes| blocks.lock().unwrap().push((first, bytes.to_vec()))).unwrap();
        let mut blocks = blocks.into_inner().unwrap();
        assert!(blocks.len() > 1, "{parts} parts: one block");
        blocks.sort_unstable();
        let (mut joined, mut next) = (Vec::new(), 0);
        for (first, bytes) in blocks {
            assert_eq!(first, next, "{parts} parts: a block not where the one before ends");
            next += bytes.len() as u64;
            joined.extend(bytes);
        }
        assert!(joined == values, "{parts} parts: the blocks' values differ");
        for slot in (0..values.len()).step_by(997) {
            assert_eq!(decoder.byte(&section, slot as u64), Ok(values[slot]), "{parts} parts, slot {slot}");
        }
    }
}

#[test]
fn overflow_distances_survive_compression() {
    // A synthetic KKC table with distances past a byte on three slots the rules do not decide:
    // the compressed format must carry them, exactly.
    let material: Material = "KKC".parse().unwrap();
    let mut table = solve(material, &Silent).table;
    let index = MaterialIndex::new(material);
    let free: Vec<u64> = (0..index.slots()).filter(|&s| !index.position_at(s).can_capture_royal()).take(300).collect();
    table.overflow = vec![(free[10], 254), (free[100], 301), (free[299], 100_000)];
    for &(slot, _) in &table.overflow {
        table.values[slot as usize] = OVERFLOW_CODE;
    }
    table.statistics = Statistics::of_values(&table.values, &table.overflow);
    let plain = Table::new(table.to_bytes()).unwrap();
    plain.verify_checksum().unwrap();
    let compressed = compressed(&plain);
    assert_eq!(compressed.header().overflow_entries, 3);
    assert_eq!(compressed.value(free[299]), Ok(Value::Loss(100_000)));
    assert_eq!(compressed.longest_win().map(|(d, _)| d), Some(301));
    assert_same(&plain, &compressed);
}

/// A source whose slot the rules decide holds anything but the win in 1 is refused: the
/// compressed copy would read the rules' answer there, so it would differ from its source.
#[test]
fn a_source_that_contradicts_the_rules_is_not_compressed() {
    let material: Material = "KKC".parse().unwrap();
    let mut table = solve(material, &Silent).table;
    let index = MaterialIndex::new(material);
    let decided = (0..index.slots()).find(|&s| index.position_at(s).can_capture_royal()).unwrap();
    table.values[decided as usize] = Value::Loss(2).encode();
    table.statistics = Statistics::of_values(&table.values, &table.overflow);
    let contradicting = Table::new(table.to_bytes()).unwrap();
    contradicting.verify_checksum().unwrap();
    assert!(matches!(contradicting.to_compressed(&Silent), Err(FormatError::InconsistentHeader(_))));
}

#[test]
fn the_audit_checks_a_compressed_table_as_a_plain_one() {
    let plain = plain("KKCF");
    let compressed = compressed(&plain);
    let (a, b) = (audit(&plain, &Silent), audit(&compressed, &Silent));
    assert_eq!((b.violations, b.slots, b.edges), (0, a.slots, a.edges));
}

/// Bytes flipped in several blocks: the file fails its checksum, and every read either
/// answers what the plain table says or reports damage; no read answers anything else.
#[test]
fn damaged_blocks_are_errors_never_wrong_answers() {
    let plain = plain("KKCF");
    let mut bytes = plain.to_compressed(&Silent).unwrap();
    let header = Table::new(bytes.clone()).unwrap().header().clone();
    let section_end = (header.values_offset + header.compressed_bytes.unwrap()) as usize;
    for k in [1usize, 3, 10, 40] {
        bytes[section_end - 128 * k - 17] ^= 0x5a;
    }
    let damaged = Table::new(bytes).unwrap();
    assert!(matches!(damaged.verify_checksum(), Err(FormatError::Checksum { .. })));
    let (mut errors, mut right) = (0, 0);
    let slots = MaterialIndex::new(header.material).slots();
    plain.index().for_each_position(0..slots, |slot, position| match damaged.value_of(position) {
        Ok(value) => {
            assert_eq!(Ok(value), plain.value_of(position), "slot {slot} answered wrongly");
            right += 1;
        }
        Err(e) => {
            assert!(matches!(e.damage, Damage::Block(_)), "{e}");
            errors += 1;
        }
    });
    assert!(errors > 0 && right > 0, "{errors} errors, {right} right answers");
    // A probe that touches a damaged block is an error, not an answer.
    let failing = (0..slots).map(|s| plain.index().position_at(s)).find(|p| damaged.value_of(p).is_err()).unwrap();
    assert!(damaged.probe(&failing).is_err());
}

/// Any single byte of a compressed file changed, anywhere: opening it, verifying it and
/// reading every slot never panics, and no read answers other than the plain table.
#[test]
fn any_changed_byte_is_refused_or_read_truly() {
    let plain = plain("KKC");
    let good = plain.to_compressed(&Silent).unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        seed >> 17
    };
    for _ in 0..1500 {
        let mut bytes = good.clone();
        let at = next() as usize % bytes.len();
        bytes[at] ^= 1 + (next() % 255) as u8;
        let Ok(table) = Table::new(bytes) else { continue };
        assert!(table.verify_checksum().is_err(), "byte {at} changed, yet the file verifies");
        for slot in 0..table.header().slots.min(plain.header().slots) {
            if let Ok(value) = table.value(slot) {
                // Header fields outside the values (statistics) may change; values may not.
                assert_eq!(Ok(value), plain.value(slot), "byte {at} changed: slot {slot} reads wrongly");
            }
        }
    }
}
