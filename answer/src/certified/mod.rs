//! The published proof certificates (`tables/certificates/*.s4cert`), checked by the rules
//! alone and indexed by position, and what a search is told before it starts: the
//! certificates over a proof store ([`Knowledge`]). An answer about a position one of them
//! covers names it as its source; the searches take its value as known.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use shogi4_certificate::Proven;
use shogi4_engine::Position;
use shogi4_proofs::certified_outcome;
use shogi4_search::{Outcome, Recall};

mod kept;

pub use kept::CHECKED;

/// The folder of certificates in the tables directory.
pub const CERTIFICATES: &str = "certificates";

/// Every position the certificates prove, sorted by key for a binary search, about 20 bytes
/// a position; except where the side to move takes the royal at once (a win in 1), which
/// every answer proves by the rules alone, and which are most of a large proof's positions
/// (the solution's: 20.4 million of 25).
#[derive(Default)]
pub struct Certified {
    /// File names, as `certificate` in answers gives them.
    files: Vec<String>,
    keys: Vec<u128>,
    /// Per key: the file's number (16 bits), whether the side to move wins (1), the bound (15).
    entries: Vec<u32>,
}

/// What became of one certificate file: what it serves and how it was checked, or why it was
/// refused.
pub type Loaded = (PathBuf, Result<Served, String>);

/// A certificate served: the positions it covers, and how they were had.
#[derive(Debug)]
pub struct Served {
    /// Positions it covers in the index (a win in 1 left out).
    pub positions: usize,
    /// How they were had.
    pub check: Check,
}

/// How a served certificate's positions were had.
#[derive(Debug, PartialEq, Eq)]
pub enum Check {
    /// Checked by the rules now, and its index kept for the next load.
    Checked,
    /// Checked by the rules now; its index could not be kept (why: a read-only folder, say).
    CheckedNotKept(String),
    /// Read from the index an earlier check of the same file (by its SHA-256) kept.
    Kept,
}

impl Certified {
    /// The certificates in `dir`, each checked by the rules, or read from the index an
    /// earlier check of the same file kept (in [`CHECKED`]); and what became of each. A proof of
    /// millions of positions is never in memory as positions whole, only as the checker's map
    /// of keys (24 bytes a winner's position) while it is checked.
    pub fn load(dir: &Path) -> (Certified, Vec<Loaded>) {
        let certificates = certificate_files(dir);
        let mut report = Vec::new();
        let mut files = Vec::new();
        let mut all: Vec<(u128, u32)> = Vec::new();
        for path in &certificates {
            let file = match u16::try_from(files.len()) {
                Ok(file) => file,
                Err(_) => {
                    report.push((path.clone(), Err("one file too many".to_string())));
                    continue;
                }
            };
            // The reason travels to the log: which file, and what the checker found.
            let (positions, check) = match positions_of(path) {
                Ok(found) => found,
                Err(why) => {
                    report.push((path.clone(), Err(why)));
                    continue;
                }
            };
            all.extend(positions.iter().map(|&(key, entry)| (key, u32::from(file) << 16 | u32::from(entry))));
            report.push((path.clone(), Ok(Served { positions: positions.len(), check })));
            files.push(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        }
        kept::remove_orphans(dir, &certificates);
        // One entry a position: the smallest bound of any certificate that proves it (all of
        // them agree on the value, since each is a proof).
        smallest_bound_each(&mut all);
        let (keys, entries) = all.into_iter().unzip();
        (Certified { files, keys, entries }, report)
    }

    /// Positions covered.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no certificate covers any position.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The certificate covering `position` under any of its four symmetric forms (the colour
    /// flip and the mirror keep the value for the side to move), and what it proves.
    pub fn find(&self, position: &Position) -> Option<(&str, Outcome)> {
        let flipped = position.flipped();
        [position.key(), position.mirrored().key(), flipped.key(), flipped.mirrored().key()].into_iter().find_map(
            |key| {
                let at = self.keys.binary_search(&key).ok()?;
                let entry = self.entries[at];
                let proven = Proven { position: *position, wins: entry & 0x8000 != 0, within: entry & 0x7FFF };
                Some((self.files[(entry >> 16) as usize].as_str(), certified_outcome(&proven)))
            },
        )
    }
}

/// The positions the certificate at `path` proves (by ascending key, each once, a win in 1
/// left out), from its kept index or else checked by the rules (and the index then kept).
fn positions_of(path: &Path) -> Result<(Vec<kept::Indexed>, Check), String> {
    let bytes = shogi4_certificate::read_file(path).map_err(|e| format!("not read: {e}"))?;
    let digest = kept::digest(&bytes);
    let index = kept::index_path(path);
    if let Some(positions) = index.as_deref().and_then(|index| kept::read(index, &digest)) {
        return Ok((positions, Check::Kept));
    }
    let proven = shogi4_certificate::proven_positions(&bytes).map_err(|e| format!("refused by the checker: {e}"))?;
    let mut positions: Vec<kept::Indexed> = proven
        .filter(|p| (2..1 << 15).contains(&p.within))
        .map(|p| (p.position.key(), u16::from(p.wins) << 15 | p.within as u16))
        .collect();
    // A loser's position two winner's moves lead to is given twice: the smaller bound is kept.
    smallest_bound_each(&mut positions);
    let check = match index.map(|index| kept::write(&index, &digest, &positions)) {
        Some(Ok(())) => Check::Checked,
        Some(Err(error)) => Check::CheckedNotKept(error.to_string()),
        None => Check::CheckedNotKept("no name for its index".to_string()),
    };
    Ok((positions, check))
}

/// Sorts `entries` (a key and an entry whose low 15 bits are the bound) by key and keeps one
/// per key, the one with the smallest bound: all agree on the value, since each is proven.
fn smallest_bound_each<E: Copy + Into<u32>>(entries: &mut Vec<(u128, E)>) {
    entries.sort_unstable_by_key(|&(key, entry)| (key, entry.into() & 0x7FFF));
    entries.dedup_by_key(|&mut (key, _)| key);
}

/// The `.s4cert` files of `dir`, in name order; none if it is missing.
pub fn certificate_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "s4cert") && path.is_file())
        .collect();
    files.sort();
    files
}

/// What is known beyond a searcher's table: the certificates, then a store (or anything else
/// that recalls), merged. A certificate, checked by the rules, outranks the store: a record
/// that contradicts it is forged or corrupt, and is passed over (and counted, see
/// [`Knowledge::conflicts`]).
pub struct Knowledge<'a> {
    certified: &'a Certified,
    store: &'a (dyn Recall + Sync),
    conflicts: AtomicU64,
}

impl<'a> Knowledge<'a> {
    /// The certificates `certified` over `store` (`&()` for none).
    pub fn new(certified: &'a Certified, store: &'a (dyn Recall + Sync)) -> Knowledge<'a> {
        Knowledge { certified, store, conflicts: AtomicU64::new(0) }
    }

    /// The certificates.
    pub fn certified(&self) -> &Certified {
        self.certified
    }

    /// Records of the store passed over so far because a certificate contradicts them.
    pub fn conflicts(&self) -> u64 {
        self.conflicts.load(Ordering::Relaxed)
    }
}

impl Recall for Knowledge<'_> {
    fn recall(&self, positions: &[Position]) -> Vec<Option<Outcome>> {
        let stored = self.store.recall(positions);
        if self.certified.is_empty() {
            return stored;
        }
        let certified = positions.iter().map(|p| self.certified.find(p).map(|(_, outcome)| outcome));
        certified
            .zip(stored)
            .map(|known| match known {
                (Some(certified), Some(stored)) if certified.conflicts(stored) => {
                    self.conflicts.fetch_add(1, Ordering::Relaxed);
                    Some(certified)
                }
                (Some(a), Some(b)) => Some(a.merge(b)),
                (a, b) => a.or(b),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused certificate is reported with the checker's own reason (the log once said
    /// only "refused by the checker, unreadable, or one file too many").
    #[test]
    fn a_refused_certificate_carries_the_checkers_reason() {
        let dir = tempfile::tempdir().unwrap();
        let published = concat!(env!("CARGO_MANIFEST_DIR"), "/../tables/certificates/a1b2.s4cert");
        let mut bytes = std::fs::read(published).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        let reason = shogi4_certificate::verify(&bytes).unwrap_err().to_string();
        std::fs::write(dir.path().join("bad.s4cert"), &bytes).unwrap();
        std::fs::write(dir.path().join("short.s4cert"), b"S4CERT1\n").unwrap();
        let (certified, report) = Certified::load(dir.path());
        assert!(certified.is_empty());
        let why: Vec<&str> = report.iter().filter_map(|(_, why)| why.as_ref().err().map(String::as_str)).collect();
        assert_eq!(why.len(), 2, "{why:?}");
        assert_eq!(why[0], format!("refused by the checker: {reason}"));
        // Cut inside its header: refused on the header's read, before the checker.
        assert_eq!(why[1], "not read: the file is truncated", "{why:?}");
    }

    fn published(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/../tables/certificates/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// Every position the certificates `names` prove, by key, and what it proves.
    fn proven(names: &[&str]) -> std::collections::BTreeMap<u128, Proven> {
        let mut proven = std::collections::BTreeMap::new();
        for name in names {
            for p in shogi4_certificate::proven_positions(&published(name)).unwrap() {
                proven.insert(p.position.key(), p);
            }
        }
        proven
    }

    /// What a load serves: for every position the certificates prove, what `find` says.
    fn served(certified: &Certified, names: &[&str]) -> Vec<Option<(String, Outcome)>> {
        let found = |p: &Proven| certified.find(&p.position).map(|(file, outcome)| (file.to_string(), outcome));
        proven(names).values().map(found).collect()
    }

    fn checks(report: &[Loaded]) -> Vec<&Check> {
        report.iter().map(|(_, loaded)| &loaded.as_ref().unwrap().check).collect()
    }

    /// A certificate checked once is served the same from the index kept beside it, which the
    /// next load reads instead of checking again; every position it proves is served but a win
    /// in 1, left to the rules.
    #[test]
    fn a_checked_certificates_index_is_kept_and_serves_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["a1b2.s4cert", "c1b2-a4a3.s4cert"];
        for name in names {
            std::fs::write(dir.path().join(name), published(name)).unwrap();
        }
        let (checked, report) = Certified::load(dir.path());
        assert_eq!(checks(&report), [&Check::Checked, &Check::Checked]);
        let (kept, report) = Certified::load(dir.path());
        assert_eq!(checks(&report), [&Check::Kept, &Check::Kept]);
        let first = served(&checked, &names);
        assert!(first == served(&kept, &names), "the kept index serves otherwise");
        // Each proven position is served unless its side to move takes the royal at once.
        let mut wins_in_one = 0;
        for (proven, found) in proven(&names).values().zip(&first) {
            let sfen = proven.position.to_sfen();
            match found {
                None if proven.within == 1 => wins_in_one += 1,
                None => panic!("{sfen}: not served"),
                Some(_) if proven.within == 1 => panic!("{sfen}: a win in 1 in the index"),
                Some((file, outcome)) => {
                    assert!(!outcome.conflicts(certified_outcome(proven)), "{sfen}: {outcome:?}");
                    assert!(names.contains(&file.as_str()), "{file}");
                }
            }
        }
        assert!(wins_in_one > 0);
        // A certificate removed: its index goes with it at the next load.
        std::fs::remove_file(dir.path().join(names[1])).unwrap();
        Certified::load(dir.path());
        assert!(!dir.path().join(CHECKED).join("c1b2-a4a3.s4cert.index").exists());
        assert!(dir.path().join(CHECKED).join("a1b2.s4cert.index").exists());
    }

    /// An index is used only whole and only for the file it was made from: a damaged one, or
    /// one beside a certificate whose bytes changed (a kept index with a forged certificate),
    /// is passed over and the certificate checked by the rules, so a damaged certificate is
    /// refused whatever its index says. Where no index can be kept, the certificate is still
    /// served.
    #[test]
    fn a_damaged_or_stale_index_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a1b2.s4cert");
        std::fs::write(&path, published("a1b2.s4cert")).unwrap();
        let (truth, _) = Certified::load(dir.path());
        let names = ["a1b2.s4cert"];
        let index = dir.path().join(CHECKED).join("a1b2.s4cert.index");
        let whole = std::fs::read(&index).unwrap();
        for at in [0, 9, 45, 100, whole.len() / 2, whole.len() - 1] {
            let mut damaged = whole.clone();
            damaged[at] ^= 0x20;
            std::fs::write(&index, &damaged).unwrap();
            let (certified, report) = Certified::load(dir.path());
            assert_eq!(checks(&report), [&Check::Checked], "byte {at}");
            assert!(served(&certified, &names) == served(&truth, &names), "byte {at}");
        }
        std::fs::write(&index, &whole[..whole.len() - 1]).unwrap();
        assert_eq!(checks(&Certified::load(dir.path()).1), [&Check::Checked]);
        // Another certificate under the same name: checked, and served as itself.
        std::fs::write(&path, published("a2a3.s4cert")).unwrap();
        let (certified, report) = Certified::load(dir.path());
        assert_eq!(checks(&report), [&Check::Checked]);
        let root = shogi4_certificate::verify(&published("a2a3.s4cert")).unwrap().root;
        assert!(certified.find(&root).is_some());
        // A damaged certificate beside the index of the good one: refused.
        let mut bytes = published("a2a3.s4cert");
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let (certified, report) = Certified::load(dir.path());
        assert!(report[0].1.is_err() && certified.is_empty());
        // No folder for the index (a file in its place): checked, served, not kept.
        std::fs::write(&path, published("a1b2.s4cert")).unwrap();
        std::fs::remove_dir_all(dir.path().join(CHECKED)).unwrap();
        std::fs::write(dir.path().join(CHECKED), b"in the way").unwrap();
        let (certified, report) = Certified::load(dir.path());
        assert!(matches!(checks(&report)[..], [Check::CheckedNotKept(_)]), "{report:?}");
        assert!(served(&certified, &names) == served(&truth, &names));
    }
}
