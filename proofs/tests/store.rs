//! The proof store keeps what it is given across reopenings, keeps the better of two facts,
//! and never believes damage: a file that is not a store is moved aside and replaced, and
//! bytes overwritten inside a store yield nothing or the truth, never a wrong outcome.

use shogi4_proofs::{Carried, Exported, Imported, Opened, Origin, ProofStore};
use shogi4_search::Outcome;
use shogi4_tablebase::Value;

fn facts() -> Vec<(u128, Outcome)> {
    (1..=2000u128)
        .map(|k| {
            let outcome = match k % 3 {
                0 => Outcome::Proven(Value::Win(2 * (k as u32 % 20) + 1)),
                1 => Outcome::Proven(Value::Loss(2 * (k as u32 % 20))),
                _ => Outcome::Unknown { no_result_within: k as u32 % 30 },
            };
            (k * 0x1_0000_0001, outcome)
        })
        .collect()
}

#[test]
fn facts_survive_reopening_and_better_knowledge_wins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    {
        let (store, opened) = ProofStore::open(&path).unwrap();
        assert_eq!(opened, Opened::Fine);
        assert_eq!(store.record(&facts(), Origin::Search).unwrap(), 2000);
        assert_eq!(store.verify().unwrap(), (2000, 0), "every record passes its checksum");
    }
    let (store, opened) = ProofStore::open(&path).unwrap();
    assert_eq!(opened, Opened::Fine);
    for (key, outcome) in facts() {
        assert_eq!(store.get(key).unwrap(), Some(outcome));
    }
    let key = 7;
    store.record(&[(key, Outcome::Unknown { no_result_within: 9 })], Origin::Search).unwrap();
    store.record(&[(key, Outcome::Unknown { no_result_within: 5 })], Origin::Search).unwrap();
    assert_eq!(store.get(key).unwrap(), Some(Outcome::Unknown { no_result_within: 9 }));
    store.record(&[(key, Outcome::Proven(Value::Win(11)))], Origin::Search).unwrap();
    store.record(&[(key, Outcome::Unknown { no_result_within: 15 })], Origin::Search).unwrap();
    assert_eq!(store.get(key).unwrap(), Some(Outcome::Proven(Value::Win(11))));
    assert_eq!(store.get(8).unwrap(), None);
}

#[test]
fn a_file_that_was_never_a_store_is_refused_and_left_as_it_is() {
    // Garbage, a line of text, a proof export: not a database at all, so most likely a wrong
    // path (`--store opening.proofs`): refused, the file untouched, nothing moved aside.
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = ProofStore::open(&dir.path().join("first.redb")).unwrap();
    store.record(&facts(), Origin::Search).unwrap();
    let export = dir.path().join("opening.proofs");
    store.export(&export, Carried::Proofs).unwrap();
    for content in [vec![0xA5u8; 70_000], b"hello\n".to_vec(), std::fs::read(&export).unwrap()] {
        let path = dir.path().join("proofs.redb");
        std::fs::write(&path, &content).unwrap();
        let Err(error) = ProofStore::open(&path) else { panic!("a file that is no database was opened as a store") };
        assert!(matches!(error, shogi4_proofs::StoreError::NotAStore(_)), "{error}");
        assert!(error.to_string().contains("left as it is"), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), content, "the file was changed");
    }
    let moved = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains("damaged"));
    assert_eq!(moved.count(), 0, "a file that was never a store was moved aside");
}

#[test]
fn a_database_damaged_past_its_first_bytes_is_moved_aside_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    ProofStore::open(&path).unwrap().0.record(&facts(), Origin::Search).unwrap();
    // The database's own first bytes kept, everything after them overwritten.
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &mut bytes[9..] {
        *b = 0xA5;
    }
    std::fs::write(&path, bytes).unwrap();
    let (store, opened) = ProofStore::open(&path).unwrap();
    let Opened::Rebuilt { aside, salvaged: 0, .. } = opened else { panic!("damage accepted as a store: {opened:?}") };
    assert!(aside.exists());
    assert!(store.is_empty().unwrap());
}

#[test]
fn overwritten_bytes_never_yield_a_wrong_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    ProofStore::open(&path).unwrap().0.record(&facts(), Origin::Search).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // Scribble over a stretch in the middle of the file (pages of the table).
    let middle = bytes.len() / 2;
    for (i, b) in bytes[middle..middle + 4096].iter_mut().enumerate() {
        *b ^= (i as u8).wrapping_mul(31) | 1;
    }
    std::fs::write(&path, bytes).unwrap();
    let (store, _) = ProofStore::open(&path).unwrap();
    for (key, outcome) in facts() {
        if let Ok(Some(found)) = store.get(key) {
            assert_eq!(found, outcome, "key {key}");
        }
    }
}

#[test]
fn ranges_of_a_proven_value_narrow_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = ProofStore::open(&dir.path().join("proofs.redb")).unwrap();
    let key = 11;
    store.record(&[(key, Outcome::Unknown { no_result_within: 18 })], Origin::Search).unwrap();
    store.record(&[(key, Outcome::Bounded { win: true, at_least: 5, at_most: 61 })], Origin::Search).unwrap();
    // The unknown's depth raises the range's lower bound: no win within 18.
    assert_eq!(store.get(key).unwrap(), Some(Outcome::Bounded { win: true, at_least: 19, at_most: 61 }));
    store.record(&[(key, Outcome::Bounded { win: true, at_least: 3, at_most: 31 })], Origin::Search).unwrap();
    assert_eq!(store.get(key).unwrap(), Some(Outcome::Bounded { win: true, at_least: 19, at_most: 31 }));
    assert_eq!(
        store.record(&[(key, Outcome::Bounded { win: true, at_least: 3, at_most: 61 })], Origin::Search).unwrap(),
        0
    );
    // Ranges that meet are the exact value.
    store.record(&[(key, Outcome::Bounded { win: true, at_least: 31, at_most: 33 })], Origin::Search).unwrap();
    assert_eq!(store.get(key).unwrap(), Some(Outcome::Proven(Value::Win(31))));
}

#[test]
fn the_queue_is_bounded_deduplicated_ordered_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    {
        let (store, _) = ProofStore::open(&path).unwrap();
        let entries: Vec<(u128, String)> = (1..=10u128).map(|k| (k, format!("position {k}"))).collect();
        let refs: Vec<(u128, &str)> = entries.iter().map(|(k, s)| (*k, s.as_str())).collect();
        assert_eq!(store.enqueue(&refs[5..], 1, 7, 8).unwrap(), 5);
        // Full at 8: three more fit; duplicates are skipped.
        assert_eq!(store.enqueue(&refs, 0, 9, 8).unwrap(), 3);
        assert_eq!(store.queue_len().unwrap(), 8);
        assert_eq!(store.enqueue(&refs, 0, 9, 100).unwrap(), 2, "only the two not queued yet");
    }
    let (store, _) = ProofStore::open(&path).unwrap();
    assert_eq!(store.queue_len().unwrap(), 10);
    // Level 0 first, in the order queued, then level 1.
    let taken: Vec<(u128, u32, u128)> =
        std::iter::from_fn(|| store.take_queued().unwrap()).map(|q| (q.key, q.level, q.owner)).collect();
    let keys: Vec<u128> = taken.iter().map(|t| t.0).collect();
    assert_eq!(keys, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert_eq!(taken[0], (1, 0, 9));
    assert_eq!(taken[9], (10, 1, 7));
    assert_eq!(store.queue_len().unwrap(), 0);
    assert_eq!(store.get(1).unwrap(), None, "queued positions are not facts");
}

#[test]
fn an_export_carries_the_proofs_to_another_store_and_damage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _) = ProofStore::open(&dir.path().join("first.redb")).unwrap();
    first.record(&facts(), Origin::Search).unwrap();
    first.record(&[(5, Outcome::Bounded { win: false, at_least: 20, at_most: 60 })], Origin::Search).unwrap();
    let file = dir.path().join("opening.proofs");
    // Unknowns stay behind: two thirds of the facts are proven, and the bounded one.
    let proven = facts().iter().filter(|(_, o)| o.proven_win().is_some()).count() as u64 + 1;
    assert_eq!(first.export(&file, Carried::Proofs).unwrap(), Exported { records: proven, unknown: 0 });
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 24 + 24 * proven);
    // Asked for, the unknowns go too, and come back as they were.
    let everything = dir.path().join("prover.proofs");
    let all = facts().len() as u64 + 1;
    assert_eq!(
        first.export(&everything, Carried::Everything).unwrap(),
        Exported { records: all, unknown: all - proven }
    );
    let (third, _) = ProofStore::open(&dir.path().join("third.redb")).unwrap();
    assert_eq!(third.import(&everything, Origin::Import).unwrap(), Imported { records: all, changed: all });
    for (key, outcome) in facts() {
        assert_eq!(third.get(key).unwrap(), Some(outcome));
    }

    let (second, _) = ProofStore::open(&dir.path().join("second.redb")).unwrap();
    let imported = second.import(&file, Origin::Import).unwrap();
    assert_eq!((imported.records, imported.changed), (proven, proven));
    for (key, outcome) in facts().into_iter().chain([(5, Outcome::Bounded { win: false, at_least: 20, at_most: 60 })]) {
        let expected = outcome.proven_win().is_some().then_some(outcome);
        assert_eq!(second.get(key).unwrap(), expected);
    }
    assert_eq!(second.import(&file, Origin::Import).unwrap().changed, 0, "importing again changes nothing");

    // A flipped byte anywhere, a truncation, another file: refused whole.
    let bytes = std::fs::read(&file).unwrap();
    let damaged = dir.path().join("damaged.proofs");
    for at in [3, 9, 30, bytes.len() / 2, bytes.len() - 1] {
        let mut copy = bytes.clone();
        copy[at] ^= 0x10;
        std::fs::write(&damaged, &copy).unwrap();
        assert!(second.import(&damaged, Origin::Import).is_err(), "a flip at {at} was accepted");
    }
    std::fs::write(&damaged, &bytes[..bytes.len() - 24]).unwrap();
    assert!(second.import(&damaged, Origin::Import).is_err(), "a truncated file was accepted");
    // Each refusal says which: a file cut inside its header is truncated, a short other file
    // is no export.
    for (content, says) in [(&bytes[..12], "truncated"), (&b"garbage\n"[..], "not a proof export")] {
        std::fs::write(&damaged, content).unwrap();
        let error = second.import(&damaged, Origin::Import).unwrap_err().to_string();
        assert!(error.contains(says), "{error}");
    }
}

/// What is not an export of the size it declares is refused before it is read whole (issue
/// #57, item 7): a device that never ends, a FIFO nobody writes to, and a sparse file that
/// claims a gigabyte each get their reason at once. On the build before, `/dev/zero` and the
/// FIFO never returned and the sparse file was read whole first.
#[test]
fn an_export_is_sized_up_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("opening.proofs");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let sparse = dir.path().join("sparse.proofs");
    let mut header = b"S4PROOF1".to_vec();
    header.extend(1u64.to_le_bytes());
    std::fs::write(&sparse, &header).unwrap();
    std::fs::OpenOptions::new().write(true).open(&sparse).unwrap().set_len(1 << 30).unwrap();
    let cases = [
        (std::path::PathBuf::from("/dev/zero"), "not a regular file"),
        (fifo, "not a regular file"),
        (sparse, "the size does not match the record count"),
    ];
    for (path, says) in cases {
        let (sender, receiver) = std::sync::mpsc::channel();
        let reading = path.clone();
        std::thread::spawn(move || {
            sender.send(shogi4_proofs::read_export(&reading).map(|_| ()).map_err(|e| e.to_string()))
        });
        let started = std::time::Instant::now();
        let answer = receiver.recv_timeout(std::time::Duration::from_secs(10));
        let error =
            answer.unwrap_or_else(|_| panic!("{} was still being read after 10 s", path.display())).unwrap_err();
        assert!(error.contains(says), "{}: {error}", path.display());
        assert!(
            started.elapsed() < std::time::Duration::from_millis(500),
            "{}: {:?}",
            path.display(),
            started.elapsed()
        );
    }
}

#[test]
fn a_second_opener_is_refused_and_the_live_store_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let (live, _) = ProofStore::open(&path).unwrap();
    live.record(&facts(), Origin::Search).unwrap();
    let Err(error) = ProofStore::open(&path) else { panic!("a second writer was let in") };
    assert!(matches!(error, shogi4_proofs::StoreError::Locked(..)), "{error}");
    assert!(error.to_string().contains("held by another process, this very process"), "{error}");
    // Nothing moved aside, and the live store still reads and writes.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["proofs.redb"], "{names:?}");
    for (key, outcome) in facts() {
        assert_eq!(live.get(key).unwrap(), Some(outcome));
    }
    live.record(&[(1, Outcome::Proven(Value::Win(3)))], Origin::Search).unwrap();
}

#[test]
fn a_read_only_store_is_served_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    ProofStore::open(&path).unwrap().0.record(&facts(), Origin::Search).unwrap();
    let before = std::fs::read(&path).unwrap();
    let store = ProofStore::open_read_only(&path).unwrap();
    assert!(store.is_read_only());
    for (key, outcome) in facts() {
        assert_eq!(store.get(key).unwrap(), Some(outcome));
    }
    let refused = store.record(&[(1, Outcome::Proven(Value::Win(3)))], Origin::Search);
    assert!(matches!(refused, Err(shogi4_proofs::StoreError::ReadOnly(_))), "{refused:?}");
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), before, "a read-only store was written");
}

/// A store at `path` with 20,000 unknowns; its records and its file's bytes.
fn a_store_of_20_000_records(path: &std::path::Path) -> (Vec<(u128, Outcome)>, Vec<u8>) {
    let many: Vec<(u128, Outcome)> =
        (1..=20_000u128).map(|k| (k * 7919, Outcome::Unknown { no_result_within: (k % 40) as u32 })).collect();
    ProofStore::open(path).unwrap().0.record(&many, Origin::Search).unwrap();
    (many, std::fs::read(path).unwrap())
}

/// `bytes` with one page scribbled over, somewhere else for each `round` (0 to 4).
fn scribbled(bytes: &[u8], round: usize) -> Vec<u8> {
    let mut damaged = bytes.to_vec();
    let at = damaged.len() * (round + 1) / 6 / 4096 * 4096;
    for b in &mut damaged[at..at + 4096] {
        *b ^= 0x5A;
    }
    damaged
}

#[test]
fn damage_keeps_what_is_readable_and_a_bounded_number_of_copies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let (many, bytes) = a_store_of_20_000_records(&path);
    let (mut salvaged_any, mut checked) = (false, 0);
    for round in 0..5 {
        std::fs::write(&path, scribbled(&bytes, round)).unwrap();
        let (store, opened) = ProofStore::open(&path).unwrap();
        if let Opened::Rebuilt { salvaged, .. } = opened {
            salvaged_any |= salvaged > 0;
            // Whatever was carried over is what was recorded, never anything else.
            let recorded: std::collections::HashMap<u128, Outcome> = many.iter().copied().collect();
            for (key, outcome) in &many {
                if let Some(found) = store.get(*key).unwrap() {
                    assert_eq!(Some(&found), recorded.get(key).filter(|o| *o == outcome));
                    checked += 1;
                }
            }
            assert!(store.len().unwrap() as usize <= many.len(), "round {round}");
        }
        drop(store);
    }
    let copies = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains("damaged"));
    assert!(copies.count() <= 3, "damaged copies pile up");
    assert!(salvaged_any, "nothing was ever carried over from a damaged store");
    eprintln!("{checked} carried-over records checked");
    // Most of each damaged store was readable and checked, not a handful.
    assert!(checked >= 20_000, "{checked} carried-over records checked");
}

/// A store opened without its walk is checked later, in place: damage found then begins the
/// store anew at the same path, with what was readable, and the same handle goes on working.
#[test]
fn a_store_opened_unchecked_is_repaired_in_place_by_its_later_walk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let (_, bytes) = a_store_of_20_000_records(&path);
    let mut repaired = 0;
    for round in 0..5 {
        std::fs::write(&path, scribbled(&bytes, round)).unwrap();
        let Ok((store, Opened::Fine)) = ProofStore::open_unchecked(&path) else { continue };
        match store.check_and_repair().unwrap() {
            Opened::Fine => {}
            Opened::Rebuilt { aside, .. } => {
                repaired += 1;
                assert!(aside.exists());
                assert_eq!(store.verify().unwrap().1, 0, "round {round}: the new store holds damage");
                store.record(&[(3, Outcome::Proven(Value::Win(7)))], Origin::Search).unwrap();
                assert_eq!(store.get(3).unwrap(), Some(Outcome::Proven(Value::Win(7))));
            }
            Opened::ReadOnly => panic!("round {round}: a writable store became read-only"),
        }
        drop(store);
        // The fresh file is a sound store.
        assert_eq!(ProofStore::open(&path).unwrap().1, Opened::Fine, "round {round}");
        std::fs::remove_file(&path).unwrap();
    }
    assert!(repaired > 0, "no round's damage was left to the walk");
}

#[test]
fn a_proof_answers_for_the_symmetric_forms_of_its_position() {
    use shogi4_engine::Position;
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = ProofStore::open(&dir.path().join("proofs.redb")).unwrap();
    let position = Position::parse("+C1fk/t3/1K2/TF1+c b 2R 1").unwrap();
    let forms = [position, position.mirrored(), position.flipped(), position.flipped().mirrored()];
    // Four distinct keys: the test would pass vacuously otherwise.
    assert_eq!(forms.iter().map(Position::key).collect::<std::collections::HashSet<_>>().len(), 4);
    assert_eq!(store.recall(&forms).unwrap(), vec![None; 4]);
    store.record(&[(position.mirrored().key(), Outcome::Proven(Value::Win(15)))], Origin::Search).unwrap();
    store.record(&[(position.flipped().key(), Outcome::Unknown { no_result_within: 9 })], Origin::Search).unwrap();
    assert_eq!(store.recall(&forms).unwrap(), vec![Some(Outcome::Proven(Value::Win(15))); 4]);
    // Another position is not answered.
    assert_eq!(store.recall(&[Position::start()]).unwrap(), vec![None]);
}

#[test]
fn a_capped_store_keeps_proofs_only_then_stops_growing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let (mut store, _) = ProofStore::open(&path).unwrap();
    let unknown = |k: u128| (k, Outcome::Unknown { no_result_within: 20 });
    store.record(&(1..=2_000).map(unknown).collect::<Vec<_>>(), Origin::Search).unwrap();
    let size = || std::fs::metadata(&path).unwrap().len();
    let cap = size();
    store.set_cap(Some(cap));
    // At the cap: unknowns are refused, proofs kept, nothing queued.
    assert_eq!(store.record(&[unknown(5_000)], Origin::Search).unwrap(), 0);
    assert_eq!(store.get(5_000).unwrap(), None);
    assert_eq!(store.record(&[(5_001, Outcome::Proven(Value::Win(9)))], Origin::Search).unwrap(), 1);
    assert_eq!(store.enqueue(&[(7, "k3/4/4/K3 b C 1")], 0, 1, 100).unwrap(), 0);
    // A flood of proofs: the file stops short of a quarter past the cap (plus one commit).
    for round in 0..200u128 {
        let proofs: Vec<_> = (0..500).map(|i| (10_000 + round * 500 + i, Outcome::Proven(Value::Win(7)))).collect();
        store.record(&proofs, Origin::Search).unwrap();
    }
    assert!(size() <= cap + cap / 4 + (1 << 20), "{} bytes against a cap of {cap}", size());
    assert!(store.len().unwrap() < 2_000 + 100_000, "the flood was not stopped");
}

/// A file system of its own, unmounted when dropped.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// ENOSPC: the store's writes fail while the disk is full, and it works again, its records
/// intact, once there is space, without a restart. Needs a small file system of its own (a
/// tmpfs, which needs root); where none can be mounted the test says so and checks nothing.
#[test]
fn a_full_disk_is_survived_and_the_store_recovers_when_space_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=3m", "tmpfs"])
        .arg(dir.path())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED: no tmpfs can be mounted here (not root?)");
        return;
    }
    let _unmount = Mounted(dir.path().to_path_buf());
    let path = dir.path().join("proofs.redb");
    let (store, _) = ProofStore::open(&path).unwrap();
    store.record(&facts(), Origin::Search).unwrap();
    // Fill what is left of the file system.
    let filler = dir.path().join("filler");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&filler).unwrap();
        while file.write_all(&[0u8; 64 << 10]).is_ok() {}
        let _ = file.sync_all();
    }
    write_until_a_write_fails(&store, 50).expect("the writes never met the full disk");
    // Still full: still failing, and nothing panics.
    assert!(store.record(&[(7, Outcome::Proven(Value::Win(5)))], Origin::Search).is_err());
    std::fs::remove_file(&filler).unwrap();
    takes_writes_again_with_its_records(&store);
}

/// Records batches of 5,000 proofs, at most `rounds`, until one fails; how many went in first.
fn write_until_a_write_fails(store: &ProofStore, rounds: u128) -> Option<u128> {
    (0..rounds).find(|&round| {
        let batch: Vec<(u128, Outcome)> =
            (0..5000u128).map(|k| ((round << 40) + k + (1 << 80), Outcome::Proven(Value::Win(3)))).collect();
        store.record(&batch, Origin::Search).is_err()
    })
}

/// Once the writes' trouble is gone: past the back-off the handle is reopened, the store takes
/// writes again, and every record of [`facts`] from before is there.
fn takes_writes_again_with_its_records(store: &ProofStore) {
    let started = std::time::Instant::now();
    while store.record(&[(7, Outcome::Proven(Value::Win(5)))], Origin::Search).is_err() {
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "the store never recovered");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(store.get(7).unwrap(), Some(Outcome::Proven(Value::Win(5))));
    for (key, outcome) in facts() {
        assert_eq!(store.get(key).unwrap(), Some(outcome), "a record from before the trouble was lost");
    }
}

/// The same without root, on every machine: the process's file size limit (`RLIMIT_FSIZE`)
/// held just above the store's size makes its writes fail (EFBIG, as a full disk fails them
/// with ENOSPC), then raised again. Run in a child process of this test binary, since the
/// limit is the whole process's.
#[test]
fn writes_past_the_file_size_limit_fail_and_the_store_recovers_without_a_restart() {
    const CHILD: &str = "SHOGI4_FILE_SIZE_LIMIT_CHILD";
    let Some(dir) = std::env::var_os(CHILD) else {
        let dir = tempfile::tempdir().unwrap();
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["writes_past_the_file_size_limit_fail_and_the_store_recovers_without_a_restart", "--exact"])
            .args(["--nocapture", "--test-threads", "1"])
            .env(CHILD, dir.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{said}");
        // The child ran the test, and its writes met the limit.
        assert!(said.contains("writes failed at the limit: "), "{said}");
        return;
    };
    // SAFETY: plain libc calls; a write past the limit then fails with EFBIG instead of
    // killing the process with SIGXFSZ.
    let set_limit = |bytes: libc::rlim_t| unsafe {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit), 0);
        limit.rlim_cur = bytes.min(limit.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    };
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let path = std::path::Path::new(&dir).join("proofs.redb");
    let (store, _) = ProofStore::open(&path).unwrap();
    store.record(&facts(), Origin::Search).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    set_limit(size + (1 << 20));
    let failed_after = write_until_a_write_fails(&store, 200).expect("the writes never met the limit");
    println!("writes failed at the limit: after {failed_after} batches");
    // Still at the limit: still failing, and nothing panics.
    assert!(store.record(&[(7, Outcome::Proven(Value::Win(5)))], Origin::Search).is_err());
    set_limit(libc::RLIM_INFINITY);
    takes_writes_again_with_its_records(&store);
}

#[test]
fn a_certificate_is_merged_as_proven_outcomes_and_a_refused_one_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = ProofStore::open(&dir.path().join("store.redb")).unwrap();
    let published = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/certificates/a1b2.s4cert");
    let imported = store.import_certificate(&published).unwrap();
    // A loser's position reached from two winners' moves is one record.
    assert!(imported.changed > 10_000 && imported.changed <= imported.records, "{imported:?}");
    // The root: the second player, to move after 1. a1b2, wins within 25 plies (the
    // certificate's bound); it cannot win in fewer than 1.
    let root = shogi4_engine::Position::parse("trfk/3c/CK2/1FRT w - 1").unwrap();
    assert_eq!(store.recall(&[root]).unwrap()[0], Some(Outcome::Bounded { win: true, at_least: 1, at_most: 25 }));
    assert_eq!(store.import_certificate(&published).unwrap().changed, 0, "importing again changes nothing");
    // A damaged certificate is refused whole.
    let mut bytes = std::fs::read(&published).unwrap();
    bytes.truncate(bytes.len() - 19);
    let damaged = dir.path().join("damaged.s4cert");
    std::fs::write(&damaged, &bytes).unwrap();
    let before = store.len().unwrap();
    assert!(store.import_certificate(&damaged).is_err());
    assert_eq!(store.len().unwrap(), before);
}

/// Asking an empty queue writes nothing: an idle server asks several times a second, and a
/// commit is a write and a sync of the file each time.
#[test]
fn asking_an_empty_queue_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let (store, _) = ProofStore::open(&path).unwrap();
    store.record(&facts(), Origin::Search).unwrap();
    let before = std::fs::read(&path).unwrap();
    for _ in 0..5 {
        assert!(store.take_queued().unwrap().is_none());
    }
    assert!(std::fs::read(&path).unwrap() == before, "an empty take changed the file");
    // A queued position is still taken, and the take is kept.
    assert_eq!(store.enqueue(&[(7, "k3/4/4/K3 b C 1")], 0, 1, 10).unwrap(), 1);
    assert_eq!(store.take_queued().unwrap().map(|q| q.key), Some(7));
    drop(store);
    let (store, _) = ProofStore::open(&path).unwrap();
    assert!(store.take_queued().unwrap().is_none());
}

/// An import is held to the cap (issue #57, item 7): the published export (hundreds of
/// thousands of records) into a store capped at 4 MiB stops before the file passes a quarter
/// past the cap, where one commit of all of it went far past (the figures:
/// `docs/measurements.md`).
#[test]
fn an_import_stops_at_the_cap_within_one_commits_growth() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let (mut store, _) = ProofStore::open(&path).unwrap();
    let cap = 4u64 << 20;
    store.set_cap(Some(cap));
    let published = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tables/opening.proofs");
    let imported = store.import(&published, Origin::Import).unwrap();
    assert!(imported.records > 100_000, "{} records", imported.records);
    let size = std::fs::metadata(&path).unwrap().len();
    eprintln!("{size} bytes after importing {} records ({} changed)", imported.records, imported.changed);
    assert!(size <= cap + cap / 4, "{size} bytes against a cap of {cap}");
    assert!(imported.changed < imported.records, "everything was imported past the cap");
    // What was taken in before the cap is there: the store is not empty.
    assert!(store.len().unwrap() > 10_000);
}

/// Salvage walks past damage (issue #57, item 2): with one page scribbled over somewhere in
/// the file, the records on the other pages are carried over, and the rebuilt store says how
/// many were lost. On the build before, the walk stopped at the first damaged page.
#[test]
fn salvage_walks_past_a_damaged_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let (many, bytes) = a_store_of_20_000_records(&path);
    let (mut worst, mut rebuilt) = (u64::MAX, 0);
    for round in 0..5 {
        std::fs::write(&path, scribbled(&bytes, round)).unwrap();
        let (store, opened) = ProofStore::open(&path).unwrap();
        if let Opened::Rebuilt { salvaged, lost, .. } = opened {
            eprintln!("round {round}: {salvaged} salvaged, {lost:?} lost");
            assert_eq!(store.len().unwrap(), salvaged, "round {round}");
            if let Some(lost) = lost {
                assert_eq!(salvaged + lost, many.len() as u64, "round {round}");
            }
            worst = worst.min(salvaged);
            rebuilt += 1;
        }
        drop(store);
        std::fs::remove_file(&path).unwrap();
    }
    // A page holds a few hundred records: wherever the damage, all but a few pages' worth are
    // carried over (a walk that stops at the damage carries over less the earlier it lies).
    assert!(rebuilt >= 4, "{rebuilt} rounds damaged the store");
    assert!(worst >= 19_000, "{worst} of 20,000 at worst");
}

/// Salvage prints nothing of the panics it expects from the damaged pages (the database meets
/// some damage with a panic): before, each of up to 128 reads per damaged stretch printed its
/// panic to standard error (65 for this store). Run in a child process, whose standard error
/// is read whole.
#[test]
fn salvage_prints_no_panic() {
    const CHILD: &str = "SHOGI4_QUIET_SALVAGE_CHILD";
    if let Some(path) = std::env::var_os(CHILD) {
        let path = std::path::Path::new(&path);
        let (_, bytes) = a_store_of_20_000_records(path);
        let mut rebuilt = 0;
        for round in 0..5 {
            std::fs::write(path, scribbled(&bytes, round)).unwrap();
            let (store, opened) = ProofStore::open(path).unwrap();
            rebuilt += u32::from(matches!(opened, Opened::Rebuilt { .. }));
            drop(store);
            std::fs::remove_file(path).unwrap();
        }
        println!("rebuilt {rebuilt}");
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["salvage_prints_no_panic", "--exact", "--test-threads", "1", "--nocapture"])
        .env(CHILD, dir.path().join("proofs.redb"))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("rebuilt 4") || stdout.contains("rebuilt 5"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{} panics printed:\n{stderr}", stderr.matches("panicked").count());
}

/// Two proven facts that disagree are a conflict (issue #57, item 3): the record held stays,
/// the contradicting fact is counted, and nothing merges them into a statement neither made.
/// On the build before, a bounded win and a bounded loss of one position merged into a win
/// whose range came from both.
#[test]
fn contradicting_facts_are_counted_and_the_record_held_stays() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = ProofStore::open(&dir.path().join("proofs.redb")).unwrap();
    let win = |at_least, at_most| Outcome::won(true, at_least, at_most);
    let loss = |at_least, at_most| Outcome::won(false, at_least, at_most);
    store.record(&[(1, Outcome::Proven(Value::Win(5))), (2, win(9, 41)), (3, win(9, 41))], Origin::Search).unwrap();
    assert_eq!(store.conflicts(), 0);
    let changed = store
        .record(&[(1, Outcome::Proven(Value::Loss(4))), (2, loss(10, 30)), (3, win(13, 21))], Origin::Search)
        .unwrap();
    assert_eq!(store.conflicts(), 2, "a loss against a win, twice");
    assert_eq!(changed, 1, "only the agreeing range narrows its record");
    assert_eq!(store.get(1).unwrap(), Some(Outcome::Proven(Value::Win(5))));
    assert_eq!(store.get(2).unwrap(), Some(win(9, 41)));
    assert_eq!(store.get(3).unwrap(), Some(win(13, 21)));
}

/// Of two contradicting facts, the one from the better-founded origin is kept (issue #57,
/// item 3): a search overrules an import, an import does not overrule a search, a tie keeps
/// the record held; a statement merged from two sources is only as good as the lesser; and
/// a record from before origins were kept gives way to any source.
#[test]
fn a_conflict_goes_to_the_better_founded_origin() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = ProofStore::open(&dir.path().join("proofs.redb")).unwrap();
    let win = |at_least, at_most| Outcome::won(true, at_least, at_most);
    let forged = Outcome::Proven(Value::Loss(4));
    store.record(&[(1, forged), (2, win(1, 21)), (3, forged)], Origin::Import).unwrap();
    store.record(&[(4, forged)], Origin::Unrecorded).unwrap();
    assert_eq!(store.get_with_origin(1).unwrap(), Some((forged, Origin::Import)));

    // A search meets the forged loss: the search's win replaces it.
    assert_eq!(store.record(&[(1, Outcome::Proven(Value::Win(3)))], Origin::Search).unwrap(), 1);
    assert_eq!((store.conflicts(), store.overruled()), (1, 1));
    assert_eq!(store.get_with_origin(1).unwrap(), Some((Outcome::Proven(Value::Win(3)), Origin::Search)));
    // The forged loss imported again changes nothing, and is counted.
    assert_eq!(store.record(&[(1, forged)], Origin::Import).unwrap(), 0);
    assert_eq!((store.conflicts(), store.overruled()), (2, 1));
    assert_eq!(store.get(1).unwrap(), Some(Outcome::Proven(Value::Win(3))));
    // Between equals, the record held stays.
    assert_eq!(store.record(&[(3, Outcome::Proven(Value::Win(7)))], Origin::Import).unwrap(), 0);
    assert_eq!(store.get_with_origin(3).unwrap(), Some((forged, Origin::Import)));
    // Two ranges that agree narrow each other; the narrowed range rests on both.
    store.record(&[(2, win(5, 41))], Origin::Search).unwrap();
    assert_eq!(store.get_with_origin(2).unwrap(), Some((win(5, 21), Origin::Import)));
    // An exact value needs only its own source.
    store.record(&[(2, Outcome::Proven(Value::Win(9)))], Origin::Search).unwrap();
    assert_eq!(store.get_with_origin(2).unwrap(), Some((Outcome::Proven(Value::Win(9)), Origin::Search)));
    // A record of unknown origin gives way even to an import.
    store.record(&[(4, Outcome::Proven(Value::Win(11)))], Origin::Import).unwrap();
    assert_eq!(store.get_with_origin(4).unwrap(), Some((Outcome::Proven(Value::Win(11)), Origin::Import)));
    // A certificate's fact overrules the search itself.
    store.record(&[(1, Outcome::Proven(Value::Loss(6)))], Origin::Certificate).unwrap();
    assert_eq!(store.get_with_origin(1).unwrap(), Some((Outcome::Proven(Value::Loss(6)), Origin::Certificate)));
    assert_eq!((store.conflicts(), store.overruled()), (5, 3));
}

/// An export says nothing of its records' origins: the same facts from other origins give the
/// same bytes (those of a store written before origins were kept).
#[test]
fn exports_carry_no_origin() {
    let dir = tempfile::tempdir().unwrap();
    let mut exports = Vec::new();
    for origin in Origin::ALL {
        let (store, _) = ProofStore::open(&dir.path().join(format!("{}.redb", origin.name()))).unwrap();
        store.record(&facts(), origin).unwrap();
        let file = dir.path().join(format!("{}.proofs", origin.name()));
        store.export(&file, Carried::Everything).unwrap();
        exports.push(std::fs::read(&file).unwrap());
    }
    assert!(exports.windows(2).all(|pair| pair[0] == pair[1]));
}

/// A store left as after a crash opens read-only (issue #57, item 2): the repair a reader may
/// not make is made on a private copy, the file itself is not written, and the records are
/// there. On the build before: "Database repair aborted."
#[test]
fn a_store_left_unclosed_opens_read_only_without_being_written() {
    const CHILD: &str = "SHOGI4_UNCLOSED_STORE_CHILD";
    if let Some(path) = std::env::var_os(CHILD) {
        // The child: records, then ends without closing the store, as a crash would.
        let (store, _) = ProofStore::open(std::path::Path::new(&path)).unwrap();
        store.record(&facts(), Origin::Search).unwrap();
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["a_store_left_unclosed_opens_read_only_without_being_written", "--exact", "--test-threads", "1"])
        .env(CHILD, &path)
        .status()
        .unwrap();
    assert!(status.success());
    let before = std::fs::read(&path).unwrap();
    let store = ProofStore::open_read_only(&path).unwrap();
    for (key, outcome) in facts() {
        assert_eq!(store.get(key).unwrap(), Some(outcome));
    }
    assert!(
        store.record(&[(7, Outcome::Proven(Value::Win(5)))], Origin::Search).is_err(),
        "a read-only store took a write"
    );
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file was written");
}
