//! The `.s4tb` format: round trips, atomic writes, exact distances past one byte, and a typed
//! refusal for every kind of damaged file.

use shogi4_engine::{Material, MaterialIndex};
use shogi4_tablebase::{
    layout, open_table, solve, CorruptValue, FormatError, Silent, SolvedTable, Statistics, Table, TableDir, TableError,
    TableStatus, Value, OVERFLOW_CODE,
};

fn kkc() -> SolvedTable {
    solve("KKC".parse().unwrap(), &Silent).table
}

fn refused(bytes: Vec<u8>) -> FormatError {
    match Table::new(bytes) {
        Ok(_) => panic!("a damaged table was accepted"),
        Err(e) => e,
    }
}

fn put_u32(bytes: &mut [u8], at: std::ops::Range<usize>, value: u32) {
    bytes[at].copy_from_slice(&value.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], at: std::ops::Range<usize>, value: u64) {
    bytes[at].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn written_tables_read_back() {
    let solved = kkc();
    let dir = tempfile::tempdir().unwrap();
    let path = solved.write_to_dir(dir.path()).unwrap();
    assert_eq!(path.file_name().unwrap(), "KKC.s4tb");
    // Nothing but the table is left behind: the temporary file was renamed.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["KKC.s4tb"]);
    let table = open_table(&path).unwrap();
    table.verify_checksum().unwrap();
    assert_eq!(table.header().material, "KKC".parse::<Material>().unwrap());
    assert_eq!(table.header().statistics, solved.statistics);
    assert_eq!(table.header().values_offset % layout::VALUES_ALIGN, 0);
    for slot in 0..table.header().slots {
        assert_eq!(table.value(slot), solved.value(slot));
    }
    // Writing again replaces the table in place.
    solved.write_to_dir(dir.path()).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn distances_past_a_byte_are_exact() {
    // A synthetic KK table whose first slots have long distances: the format must carry them.
    let material: Material = "KK".parse().unwrap();
    let slots = MaterialIndex::new(material).slots() as usize;
    let mut values = vec![0u8; slots];
    let overflow = vec![(3u64, 254u32), (7, 301), (100, 100_000)];
    for &(slot, _) in &overflow {
        values[slot as usize] = OVERFLOW_CODE;
    }
    values[5] = Value::Win(253).encode();
    let statistics = Statistics::of_values(&values, &overflow);
    let table = SolvedTable { material, values, overflow, statistics };
    let read = Table::new(table.to_bytes()).unwrap();
    read.verify_checksum().unwrap();
    assert_eq!(read.value(3), Ok(Value::Loss(254)));
    assert_eq!(read.value(7), Ok(Value::Win(301)));
    assert_eq!(read.value(100), Ok(Value::Loss(100_000)));
    assert_eq!(read.value(5), Ok(Value::Win(253)));
    assert_eq!(read.value(6), Ok(Value::Draw));
    assert_eq!(read.header().statistics.max_dtw, 100_000);
    assert_eq!(read.header().statistics.histogram[301], 4);
    // The longest win lives in the overflow table; the loss of 100,000 is not a win.
    let position_7 = MaterialIndex::new(material).position_at(7);
    assert_eq!(read.longest_win(), Some((301, position_7)));
}

#[test]
fn damaged_files_are_refused_with_the_reason() {
    let good = kkc().to_bytes();
    let header = Table::new(good.clone()).unwrap().header().clone();

    assert!(matches!(refused(good[..50].to_vec()), FormatError::Truncated { .. }));
    assert!(matches!(refused(good[..good.len() - 1].to_vec()), FormatError::Truncated { .. }));
    let mut longer = good.clone();
    longer.push(0);
    assert!(matches!(refused(longer), FormatError::TrailingBytes { .. }));

    let mut bad = good.clone();
    bad[layout::MAGIC.start] = b'X';
    assert!(matches!(refused(bad), FormatError::BadMagic));
    // Shorter than a header: something else is not a table; a table's first bytes are truncated.
    assert!(matches!(refused(b"garbage\n".to_vec()), FormatError::BadMagic));
    assert!(matches!(refused(good[..5].to_vec()), FormatError::Truncated { .. }));
    assert!(matches!(refused(Vec::new()), FormatError::Truncated { .. }));

    let mut bad = good.clone();
    put_u32(&mut bad, layout::VERSION, 5);
    assert!(matches!(refused(bad), FormatError::UnsupportedVersion(5)));
    // Versions 2 and 3, the earlier compressed layouts, are no longer read.
    for old in [2, 3] {
        let mut bad = good.clone();
        put_u32(&mut bad, layout::VERSION, old);
        assert!(matches!(refused(bad), FormatError::UnsupportedVersion(v) if v == old));
    }
    // A plain file labelled compressed: its values do not parse as a compressed section.
    let mut bad = good.clone();
    put_u32(&mut bad, layout::VERSION, 3);
    let _ = refused(bad);

    let mut bad = good.clone();
    put_u32(&mut bad, layout::ENCODING, 9);
    assert!(matches!(refused(bad), FormatError::UnsupportedEncoding(9)));

    let mut bad = good.clone();
    bad[layout::MATERIAL.start + 2] = b'X';
    assert!(matches!(refused(bad), FormatError::BadMaterial(_)));

    // A table that claims to be another closed game.
    let mut bad = good.clone();
    bad[layout::MATERIAL].copy_from_slice(b"KKF\0\0\0\0\0\0\0\0\0\0\0\0\0");
    let relabelled = Table::new(bad).expect("same slot count: the header checks alone cannot tell KKC from KKF");
    assert!(
        matches!(relabelled.verify_checksum(), Err(FormatError::Checksum { .. })),
        "the checksum covers the header"
    );
    let mut bad = good.clone();
    bad[layout::MATERIAL].copy_from_slice(b"KKCC\0\0\0\0\0\0\0\0\0\0\0\0");
    assert!(matches!(refused(bad), FormatError::SlotCount { .. }));

    let mut bad = good.clone();
    put_u64(&mut bad, layout::WINS, header.statistics.wins + 4);
    assert!(matches!(refused(bad), FormatError::InconsistentHeader(_)));

    let mut bad = good.clone();
    put_u32(&mut bad, layout::VALUES_OFFSET, 65);
    assert!(matches!(refused(bad), FormatError::InconsistentHeader(_)));

    // A flipped value byte passes the header checks but not the checksum.
    let mut bad = good.clone();
    bad[header.values_offset as usize + 10] ^= 2;
    let table = Table::new(bad).unwrap();
    assert!(matches!(table.verify_checksum(), Err(FormatError::Checksum { .. })));

    let message = refused(good[..50].to_vec()).to_string();
    assert!(message.contains("truncated"), "{message}");
}

#[test]
fn missing_files_name_the_path() {
    let error = open_table(std::path::Path::new("/nonexistent/KKC.s4tb")).err().unwrap();
    assert!(error.to_string().contains("/nonexistent/KKC.s4tb"), "{error}");
}

#[test]
fn a_damaged_table_breaks_the_mainline_with_an_error_not_a_panic() {
    use shogi4_engine::Position;
    use shogi4_tablebase::{ProbeError, Tablebase};
    let solved = kkc();
    let position = Position::parse("k3/4/4/K3 b C 1").unwrap();
    let clean = Tablebase::from_tables([Table::new(solved.to_bytes()).unwrap()]);
    let line = clean.mainline(&position).unwrap();
    assert_eq!(line.steps.len() as u32, line.value.dtw().unwrap());
    // Turn the best move's result into a draw: the root still claims a win in 9.
    let best = clean.probe(&position).unwrap().moves[0].result.unwrap();
    let index = MaterialIndex::new("KKC".parse().unwrap());
    let mut damaged = solved.clone();
    damaged.values[index.index_of(&best) as usize] = 0;
    let damaged = Tablebase::from_tables([Table::new(damaged.to_bytes()).unwrap()]);
    assert!(matches!(damaged.mainline(&position), Err(ProbeError::Inconsistent { .. })));
}

#[test]
fn a_stray_overflow_byte_is_an_error_not_a_panic() {
    let solved = kkc();
    let position = shogi4_engine::Position::parse("k3/4/4/K3 b C 1").unwrap();
    let slot = MaterialIndex::new(solved.material).index_of(&position);
    let mut damaged = solved.clone();
    damaged.values[slot as usize] = OVERFLOW_CODE;
    assert_eq!(damaged.value(slot), Err(CorruptValue::missing_overflow(slot)));
    let table = Table::new(damaged.to_bytes()).unwrap();
    assert_eq!(table.value(slot), Err(CorruptValue::missing_overflow(slot)));
    assert!(matches!(table.verify_checksum(), Err(FormatError::BadOverflow(_))));
    let error = table.probe(&position).unwrap_err();
    assert!(error.to_string().contains(&format!("slot {slot}")), "{error}");
}

#[test]
fn the_table_directory_tells_present_missing_damaged_and_misnamed() {
    let dir = tempfile::tempdir().unwrap();
    let store = TableDir::new(dir.path());
    let c: Material = "KKC".parse().unwrap();
    let f: Material = "KKF".parse().unwrap();
    assert!(matches!(store.status(c, true), TableStatus::Missing));
    let path = kkc().write_to_dir(dir.path()).unwrap();
    assert_eq!(path, store.path_of(c));
    assert!(matches!(store.status(c, true), TableStatus::Present));
    // The KKC table under KKF's name: refused, so it can neither hide nor replace KKF.
    std::fs::copy(&path, store.path_of(f)).unwrap();
    assert!(matches!(store.status(f, false), TableStatus::Damaged(TableError::NameMismatch { .. })));
    let loaded = store.load(true).unwrap();
    assert_eq!(loaded.tables.keys().copied().collect::<Vec<_>>(), [c]);
    assert_eq!(loaded.rejected.len(), 1);
    // A damaged value byte: present without the checksum, damaged with it.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = Table::new(bytes.clone()).unwrap().header().values_offset as usize;
    bytes[at] ^= 2;
    std::fs::write(&path, bytes).unwrap();
    assert!(matches!(store.status(c, false), TableStatus::Present));
    assert!(matches!(store.status(c, true), TableStatus::Damaged(TableError::Format(FormatError::Checksum { .. }))));
}
