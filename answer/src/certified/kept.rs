//! A checked certificate's index, kept beside it (`certificates/.checked/NAME.index`) so that
//! a later load reads what the check found instead of checking again: the solution's
//! 22-million-position proof takes the checker half a minute, its index well under a second.
//!
//! An index names the certificate it was made from by the file's SHA-256: a certificate
//! changed since is checked again, and its index rewritten. An index is believed as the proof
//! store is, since whoever can write the tables directory can change what is served anyway
//! (the tables, `opening.proofs`); `shogi4 verify-proof` always checks a certificate whole. A
//! damaged index (its own SHA-256 ends it) is passed over, and the certificate checked.
//!
//! The file, all integers little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `S4CHKD1\n` |
//! | 32 | the certificate file's SHA-256 |
//! | 8 | number of positions `n` |
//! | 18 each | positions by ascending key: key (16), whether the side to move wins (bit 15) and the bound (bits 0–14) (2) |
//! | 32 | the SHA-256 of every byte before |

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The folder of indexes, inside the folder of certificates.
pub const CHECKED: &str = ".checked";

const MAGIC: &[u8; 8] = b"S4CHKD1\n";
const HEAD: usize = 8 + 32 + 8;
const RECORD: usize = 18;

/// A certificate file's SHA-256, as its index names it.
pub type FileDigest = [u8; 32];

/// One position an index holds: its key, and `wins << 15 | bound`.
pub type Indexed = (u128, u16);

/// The digest of a certificate's bytes.
pub fn digest(bytes: &[u8]) -> FileDigest {
    Sha256::digest(bytes).into()
}

/// Where the index of the certificate `file` is kept.
pub fn index_path(file: &Path) -> Option<PathBuf> {
    let name = file.file_name()?.to_str()?;
    Some(file.parent()?.join(CHECKED).join(format!("{name}.index")))
}

/// The positions of the index at `path`, if it was made from a certificate of digest `of`
/// and is whole: none if it is missing, made from another file, or damaged.
pub fn read(path: &Path, of: &FileDigest) -> Option<Vec<Indexed>> {
    let bytes = std::fs::read(path).ok()?;
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if body.len() < HEAD || &body[..8] != MAGIC || &body[8..40] != of || Sha256::digest(body).as_slice() != sum {
        return None;
    }
    let count = usize::try_from(u64::from_le_bytes(body[40..48].try_into().ok()?)).ok()?;
    if body.len() - HEAD != count.checked_mul(RECORD)? {
        return None;
    }
    let positions: Vec<Indexed> = body[HEAD..]
        .chunks_exact(RECORD)
        .map(|record| {
            let key = u128::from_le_bytes(record[..16].try_into().expect("16 bytes"));
            (key, u16::from_le_bytes([record[16], record[17]]))
        })
        .collect();
    // As written: keys ascending, each once.
    positions.windows(2).all(|pair| pair[0].0 < pair[1].0).then_some(positions)
}

/// Keeps `positions` (ascending keys, each once) as the index at `path` of a certificate of
/// digest `of`, whole or not at all: written beside it, then renamed over it.
pub fn write(path: &Path, of: &FileDigest, positions: &[Indexed]) -> std::io::Result<()> {
    let folder = path.parent().ok_or_else(|| std::io::Error::other("no folder"))?;
    std::fs::create_dir_all(folder)?;
    let mut bytes = Vec::with_capacity(HEAD + positions.len() * RECORD + 32);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(of);
    bytes.extend_from_slice(&(positions.len() as u64).to_le_bytes());
    for (key, entry) in positions {
        bytes.extend_from_slice(&key.to_le_bytes());
        bytes.extend_from_slice(&entry.to_le_bytes());
    }
    let sum = Sha256::digest(&bytes);
    bytes.extend_from_slice(&sum);
    let partial = path.with_extension(format!("index.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&partial).and_then(|mut file| {
        file.write_all(&bytes)?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&partial, path)) {
        Ok(()) => Ok(()),
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            Err(error)
        }
    }
}

/// Removes the indexes in `folder` (a folder of certificates) whose certificate is gone.
pub fn remove_orphans(folder: &Path, certificates: &[PathBuf]) {
    let Ok(entries) = std::fs::read_dir(folder.join(CHECKED)) else { return };
    let kept: Vec<PathBuf> = certificates.iter().filter_map(|file| index_path(file)).collect();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "index") && !kept.contains(&path) {
            let _ = std::fs::remove_file(path);
        }
    }
}
