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

/// The folder of certificates in the tables directory.
pub const CERTIFICATES: &str = "certificates";

/// Every position the certificates prove, sorted by key for a binary search: about 20 bytes
/// a position (the published ones prove a few hundred thousand).
#[derive(Default)]
pub struct Certified {
    /// File names, as `certificate` in answers gives them.
    files: Vec<String>,
    keys: Vec<u128>,
    /// Per key: the file's number (16 bits), whether the side to move wins (1), the bound (15).
    entries: Vec<u32>,
}

impl Certified {
    /// The certificates in `dir`, each checked first, with `each` called on every accepted
    /// file's proven positions, a part at a time (a proof of millions of positions is never
    /// in memory as positions whole); the files refused, with why.
    pub fn load(dir: &Path, mut each: impl FnMut(&Path, &[Proven])) -> (Certified, Vec<(PathBuf, String)>) {
        let mut refused = Vec::new();
        let mut files = Vec::new();
        let mut all: Vec<(u128, u32)> = Vec::new();
        for path in certificate_files(dir) {
            let proven = shogi4_certificate::read_file(&path)
                .map_err(|e| format!("not read: {e}"))
                .and_then(|bytes| {
                    shogi4_certificate::proven_positions(&bytes).map_err(|e| format!("refused by the checker: {e}"))
                })
                .and_then(|proven| {
                    u16::try_from(files.len()).map(|file| (proven, file)).map_err(|_| "one file too many".to_string())
                });
            // The reason travels to the log: which file, and what the checker found.
            let (mut proven, file) = match proven {
                Ok(found) => found,
                Err(why) => {
                    refused.push((path, why));
                    continue;
                }
            };
            loop {
                let part: Vec<Proven> = proven.by_ref().take(PART).collect();
                if part.is_empty() {
                    break;
                }
                each(&path, &part);
                all.extend(part.iter().filter(|p| p.within < 1 << 15).map(|p| (p.position.key(), pack(file, p))));
            }
            files.push(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        }
        // One entry a position: the smallest bound of any certificate that proves it (all of
        // them agree on the value, since each is a proof).
        all.sort_unstable_by_key(|&(key, entry)| (key, entry & 0x7FFF));
        all.dedup_by_key(|&mut (key, _)| key);
        let (keys, entries) = all.into_iter().unzip();
        (Certified { files, keys, entries }, refused)
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

/// Proven positions handed to `each` at a time by [`Certified::load`].
const PART: usize = 1 << 16;

fn pack(file: u16, proven: &Proven) -> u32 {
    (u32::from(file) << 16) | (u32::from(proven.wins) << 15) | proven.within
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
        let (certified, refused) = Certified::load(dir.path(), |_, _| {});
        assert!(certified.is_empty());
        let why: Vec<&str> = refused.iter().map(|(_, why)| why.as_str()).collect();
        assert_eq!(why.len(), 2, "{why:?}");
        assert_eq!(why[0], format!("refused by the checker: {reason}"));
        // Cut inside its header: refused on the header's read, before the checker.
        assert_eq!(why[1], "not read: the file is truncated", "{why:?}");
    }
}
