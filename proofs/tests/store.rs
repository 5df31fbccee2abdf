//! The proof store keeps what it is given across reopenings, keeps the better of two facts,
//! and never believes damage: a file that is not a store is moved aside and replaced, and
//! bytes overwritten inside a store yield nothing or the truth, never a wrong outcome.

use shogi4_proofs::{Opened, ProofStore};
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
        assert_eq!(store.record(&facts()).unwrap(), 2000);
        assert_eq!(store.verify().unwrap(), (2000, 0), "every record passes its checksum");
    }
    let (store, opened) = ProofStore::open(&path).unwrap();
    assert_eq!(opened, Opened::Fine);
    for (key, outcome) in facts() {
        assert_eq!(store.get(key).unwrap(), Some(outcome));
    }
    let key = 7;
    store.record(&[(key, Outcome::Unknown { no_result_within: 9 })]).unwrap();
    store.record(&[(key, Outcome::Unknown { no_result_within: 5 })]).unwrap();
    assert_eq!(store.get(key).unwrap(), Some(Outcome::Unknown { no_result_within: 9 }));
    store.record(&[(key, Outcome::Proven(Value::Win(11)))]).unwrap();
    store.record(&[(key, Outcome::Unknown { no_result_within: 15 })]).unwrap();
    assert_eq!(store.get(key).unwrap(), Some(Outcome::Proven(Value::Win(11))));
    assert_eq!(store.get(8).unwrap(), None);
}

#[test]
fn a_file_that_is_not_a_store_is_moved_aside_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    std::fs::write(&path, vec![0xA5u8; 70_000]).unwrap();
    let (store, opened) = ProofStore::open(&path).unwrap();
    let Opened::Rebuilt(aside) = opened else { panic!("garbage accepted as a store") };
    assert!(aside.exists());
    assert!(store.is_empty().unwrap());
}

#[test]
fn overwritten_bytes_never_yield_a_wrong_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    ProofStore::open(&path).unwrap().0.record(&facts()).unwrap();
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
