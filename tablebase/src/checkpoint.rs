//! Checkpoints of a solve in progress, so that a crash or `kill -9` costs minutes, not the
//! whole solve.
//!
//! A checkpoint is the solver's whole state after a completed level `n`: the state bytes
//! (values of decided slots, undecided-move counters of the others), the marks (each slot's
//! decided and frontier bits), and the overflow list. A resumed solve loads them, continues
//! with level `n + 1`, and writes the same bytes as a solve that never stopped.
//!
//! The file, `.KKCF.s4tb.checkpoint` next to the table, is written to a temporary name,
//! synced and renamed, so a crash while writing leaves the previous checkpoint. It starts
//! with what it belongs to (game, table format, and a fingerprint of this build's index), and
//! a checkpoint of anything else is refused rather than resumed from; a trailing checksum
//! covers every byte.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shogi4_engine::{Material, MaterialIndex};
use xxhash_rust::xxh3::Xxh3;

use crate::format::{material_field, material_in_field, EXTENSION, VERSION};

/// The last byte is the checkpoint layout: 1 held values only (counters rebuilt on resume), 2
/// the state bytes and decided bits, 3 the state bytes and marks (two bits a slot); a file of
/// another layout is refused.
const MAGIC: &[u8; 8] = b"S4CKPT\0\x03";

/// Where each header field lies, little-endian; the body ([`body`]) follows.
mod layout {
    use std::ops::Range;
    pub const MAGIC: Range<usize> = 0..8;
    pub const FORMAT: Range<usize> = 8..12;
    pub const SLOTS: Range<usize> = 12..20;
    pub const FINGERPRINT: Range<usize> = 20..28;
    pub const LEVEL: Range<usize> = 28..32;
    pub const OVERFLOW_ENTRIES: Range<usize> = 32..40;
    pub const MATERIAL: Range<usize> = 40..56;
    pub const HEADER: usize = 56;
}

/// The body both solvers' checkpoints share after their own headers (`S4CKPT` here, a share
/// of the distributed solve `S4SHARE`): the state bytes, the bit words (little-endian), the
/// overflow list (slot `u64` and distance `u32`, 12 bytes an entry), and an XXH3 checksum of
/// the header and all of them. Only the headers differ.
pub mod body {
    use std::fs::File;
    use std::io::Read;
    use std::path::Path;

    use xxhash_rust::xxh3::Xxh3;

    use crate::durable::write_atomically;

    /// Why a checkpoint's bytes cannot be read back.
    #[derive(Debug)]
    pub enum BodyError {
        /// The file could not be read.
        Io(std::io::Error),
        /// It is cut short, or its checksum does not match.
        Damaged(&'static str),
    }

    /// Writes `head` and the body atomically.
    pub fn write(
        path: &Path,
        head: &[u8],
        state: &[u8],
        words: &[u64],
        overflow: &[(u64, u32)],
    ) -> std::io::Result<()> {
        let mut tail = Vec::with_capacity(12 * overflow.len());
        for &(slot, dtw) in overflow {
            tail.extend_from_slice(&slot.to_le_bytes());
            tail.extend_from_slice(&dtw.to_le_bytes());
        }
        let bits: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut hasher = Xxh3::new();
        for part in [head, state, &bits, &tail] {
            hasher.update(part);
        }
        let checksum = hasher.digest().to_le_bytes();
        write_atomically(path, &[head, state, &bits, &tail, &checksum])
    }

    /// A checkpoint whose header has been read, for its caller to check before the body.
    pub struct Reader {
        file: File,
        hasher: Xxh3,
    }

    /// Opens the checkpoint at `path` and reads its header into `head`; `None` if there is
    /// no such file.
    pub fn open(path: &Path, head: &mut [u8]) -> Result<Option<Reader>, BodyError> {
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(BodyError::Io(e)),
        };
        file.read_exact(head).map_err(|_| BodyError::Damaged("shorter than its header"))?;
        let mut hasher = Xxh3::new();
        hasher.update(head);
        Ok(Some(Reader { file, hasher }))
    }

    impl Reader {
        /// Reads the body into `state` and `words` (sized as written), with `entries`
        /// overflow entries, and checks the checksum and that nothing follows.
        pub fn body(mut self, state: &mut [u8], words: &mut [u64], entries: u64) -> Result<Vec<(u64, u32)>, BodyError> {
            self.file.read_exact(state).map_err(|_| BodyError::Damaged("cut short in the values"))?;
            self.hasher.update(state);
            let mut bits = vec![0u8; 8 * words.len()];
            self.file.read_exact(&mut bits).map_err(|_| BodyError::Damaged("cut short in the marks"))?;
            self.hasher.update(&bits);
            for (word, bytes) in words.iter_mut().zip(bits.chunks_exact(8)) {
                *word = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
            }
            let length = usize::try_from(entries).ok().and_then(|n| n.checked_mul(12));
            let mut tail = vec![0u8; length.ok_or(BodyError::Damaged("an impossible overflow count"))?];
            self.file.read_exact(&mut tail).map_err(|_| BodyError::Damaged("cut short in the overflow list"))?;
            self.hasher.update(&tail);
            let mut checksum = [0u8; 8];
            self.file.read_exact(&mut checksum).map_err(|_| BodyError::Damaged("no checksum"))?;
            let trailing = self.file.read(&mut [0u8; 1]).map_err(BodyError::Io)?;
            if u64::from_le_bytes(checksum) != self.hasher.digest() || trailing != 0 {
                return Err(BodyError::Damaged("checksum mismatch"));
            }
            Ok(tail
                .chunks_exact(12)
                .map(|e| {
                    let slot = u64::from_le_bytes(e[..8].try_into().expect("8 bytes"));
                    (slot, u32::from_le_bytes(e[8..].try_into().expect("4 bytes")))
                })
                .collect())
        }
    }
}

/// When to checkpoint a solve, and where.
#[derive(Clone, Debug)]
pub struct Checkpoints {
    /// The checkpoint file.
    pub path: PathBuf,
    /// Least time between two checkpoints; each is taken at the end of a level, and never
    /// sooner than 20 times the previous one took to write (so a big game's checkpoints cost
    /// at most about a twentieth of its solve).
    pub every: Duration,
}

impl Checkpoints {
    /// The checkpoint file of `material`'s solve in `dir`, next to where its table goes.
    pub fn in_dir(dir: &Path, material: Material, every: Duration) -> Checkpoints {
        Checkpoints { path: dir.join(format!(".{material}.{EXTENSION}.checkpoint")), every }
    }
}

/// Why a checkpoint cannot be resumed from.
#[derive(Debug)]
pub enum CheckpointError {
    /// It could not be read or written.
    Io(PathBuf, std::io::Error),
    /// It belongs to another solve: another game, table format or index.
    Stale(PathBuf, String),
    /// Its bytes do not match its checksum, or it is cut short.
    Damaged(PathBuf, &'static str),
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Io(path, e) => write!(f, "checkpoint {}: {e}", path.display()),
            CheckpointError::Stale(path, why) => {
                write!(f, "checkpoint {} is not this solve's ({why}); delete it to start afresh", path.display())
            }
            CheckpointError::Damaged(path, why) => {
                write!(f, "checkpoint {} is damaged ({why}); delete it to start afresh", path.display())
            }
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::Io(_, e) => Some(e),
            _ => None,
        }
    }
}

/// What a checkpoint restores besides the value bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Restored {
    /// The last completed level.
    pub level: u32,
    /// Distances above a byte decided so far, by slot.
    pub overflow: Vec<(u64, u32)>,
}

/// A fingerprint of the index layout: the positions of 64 slots spread over the game. A build
/// whose index numbers positions differently has another fingerprint, so checkpoints that
/// store slots (this module's, the distributed solve's) refuse another build's.
pub fn fingerprint(index: &MaterialIndex) -> u64 {
    let mut hasher = Xxh3::new();
    hasher.update(&index.slots().to_le_bytes());
    for i in 0..64 {
        let slot = index.slots() / 64 * i;
        hasher.update(index.position_at(slot).to_sfen().as_bytes());
    }
    hasher.digest()
}

fn header(index: &MaterialIndex, level: u32, overflow_entries: u64) -> [u8; layout::HEADER] {
    let mut head = [0u8; layout::HEADER];
    head[layout::MAGIC].copy_from_slice(MAGIC);
    head[layout::FORMAT].copy_from_slice(&VERSION.to_le_bytes());
    head[layout::SLOTS].copy_from_slice(&index.slots().to_le_bytes());
    head[layout::FINGERPRINT].copy_from_slice(&fingerprint(index).to_le_bytes());
    head[layout::LEVEL].copy_from_slice(&level.to_le_bytes());
    head[layout::OVERFLOW_ENTRIES].copy_from_slice(&overflow_entries.to_le_bytes());
    head[layout::MATERIAL].copy_from_slice(&material_field(index.material()));
    head
}

/// Writes a checkpoint after `level`, atomically: the state bytes, the marks (two bits per
/// slot, in words) and the overflow list.
pub(crate) fn write(
    path: &Path,
    index: &MaterialIndex,
    level: u32,
    values: &[u8],
    marks: &[u64],
    overflow: &[(u64, u32)],
) -> Result<(), CheckpointError> {
    let head = header(index, level, overflow.len() as u64);
    body::write(path, &head, values, marks, overflow).map_err(|e| CheckpointError::Io(path.to_path_buf(), e))
}

/// Reads the checkpoint at `path` into `values` and `marks` (sized for the index's slots),
/// or `None` when there is none.
pub(crate) fn read(
    path: &Path,
    index: &MaterialIndex,
    values: &mut [u8],
    marks: &mut [u64],
) -> Result<Option<Restored>, CheckpointError> {
    let refused = |e| match e {
        body::BodyError::Io(e) => CheckpointError::Io(path.to_path_buf(), e),
        body::BodyError::Damaged(why) => CheckpointError::Damaged(path.to_path_buf(), why),
    };
    let stale = |why: String| CheckpointError::Stale(path.to_path_buf(), why);
    let mut head = [0u8; layout::HEADER];
    let Some(reader) = body::open(path, &mut head).map_err(refused)? else { return Ok(None) };
    if head[layout::MAGIC] != MAGIC[..] {
        return Err(stale("not a checkpoint of this solver".into()));
    }
    let u32_in = |at: std::ops::Range<usize>| u32::from_le_bytes(head[at].try_into().expect("4 bytes"));
    let u64_in = |at: std::ops::Range<usize>| u64::from_le_bytes(head[at].try_into().expect("8 bytes"));
    let material = material_in_field(&head[layout::MATERIAL]);
    if material != index.material().to_string() {
        return Err(stale(format!("it is {material}'s, not {}'s", index.material())));
    }
    let format = u32_in(layout::FORMAT);
    if format != VERSION {
        return Err(stale(format!("table format {format}, this build writes {VERSION}")));
    }
    if u64_in(layout::SLOTS) != index.slots() || u64_in(layout::FINGERPRINT) != fingerprint(index) {
        return Err(stale("another build's index numbers the positions differently".into()));
    }
    let (level, entries) = (u32_in(layout::LEVEL), u64_in(layout::OVERFLOW_ENTRIES));
    let overflow = reader.body(values, marks, entries).map_err(refused)?;
    Ok(Some(Restored { level, overflow }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_checkpoints_read_back_and_others_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let index = MaterialIndex::new("KKC".parse().unwrap());
        let values: Vec<u8> = (0..index.slots()).map(|s| (s % 7) as u8).collect();
        let marks: Vec<u64> = (0..crate::solver::mark_words(index.slots()) as u64).map(|w| w * 0x9E37_79B9).collect();
        let path = dir.path().join("c");
        write(&path, &index, 5, &values, &marks, &[(3, 300)]).unwrap();
        let mut read_back = vec![0u8; values.len()];
        let mut bits_back = vec![0u64; marks.len()];
        let restored = read(&path, &index, &mut read_back, &mut bits_back).unwrap().unwrap();
        assert_eq!(
            (restored, read_back == values, bits_back == marks),
            (Restored { level: 5, overflow: vec![(3, 300)] }, true, true)
        );

        let other = MaterialIndex::new("KKF".parse().unwrap());
        let refused = read(&path, &other, &mut read_back, &mut bits_back).unwrap_err();
        assert!(matches!(refused, CheckpointError::Stale(..)), "{refused}");
        assert!(refused.to_string().contains("KKC's, not KKF's"), "{refused}");

        let mut bytes = std::fs::read(&path).unwrap();
        bytes[layout::HEADER + 10] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(read(&path, &index, &mut read_back, &mut bits_back), Err(CheckpointError::Damaged(..))));
        std::fs::write(&path, &bytes[..100]).unwrap();
        assert!(matches!(read(&path, &index, &mut read_back, &mut bits_back), Err(CheckpointError::Damaged(..))));
        assert!(read(&dir.path().join("none"), &index, &mut read_back, &mut bits_back).unwrap().is_none());
    }
}
