//! The store as one compact, checksummed file, so that a replica or a fresh quick start can
//! begin with the proofs another store holds (never by opening the same database file).
//!
//! Layout, little-endian: the magic `S4PROOF1`, the record count (u64), then per record the
//! position key (u128) and the record as the store keeps it (u64: its own checksum, tag and
//! distances), less its origin (an export says nothing about where its records came from:
//! whoever imports it names that), and last an xxh3-64 of everything before it. Unknown outcomes are left out
//! unless asked for ([`Carried`]): they are cheap to find again and make most of a served
//! store, but in a prover's store each marks a position analysed. Importing merges each
//! outcome into the store as a search's would be ([`shogi4_search::Outcome::merge`]).

use std::path::Path;

use redb::ReadableTable;

use shogi4_search::Outcome;

use crate::{decode, encode, Origin, ProofStore, StoreError, FACTS};

/// The first bytes of every export.
pub const MAGIC: &[u8; 8] = b"S4PROOF1";
const RECORD: usize = 24;

/// Which outcomes an export carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carried {
    /// Proven wins, losses and draws only: what a replica or a server builds on.
    Proofs,
    /// Unknown outcomes too. `shogi4 prove` takes a record as "analysed", so a store seeded
    /// from such a file resumes where the exported one stopped instead of searching every
    /// unproven position of its explored graph again.
    Everything,
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exported {
    /// Records in the file.
    pub records: u64,
    /// Of them, unknown outcomes.
    pub unknown: u64,
}

/// What an import did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Imported {
    /// Records in the file.
    pub records: u64,
    /// Records of the store that changed (new, or narrowed).
    pub changed: u64,
}

impl ProofStore {
    /// Writes every proven outcome to `path` (atomically: a complete file or none), and the
    /// unknown ones too if `carried` says so.
    /// A file at `path` that is not an export (the store itself, any database, a device node)
    /// is refused, not replaced.
    pub fn export(&self, path: &Path, carried: Carried) -> Result<Exported, StoreError> {
        shogi4_tablebase::replaceable(path, MAGIC).map_err(|e| StoreError::Io(path.to_path_buf(), e))?;
        let read = self.reader()?;
        let table = read.open_table(FACTS).map_err(|e| self.error(e))?;
        let mut body = Vec::new();
        let (mut count, mut unknown) = (0u64, 0u64);
        for entry in table.iter().map_err(|e| self.error(e))? {
            let (key, record) = entry.map_err(|e| self.error(e))?;
            let (key, record) = (key.value(), record.value());
            let Some(outcome) = decode(key, record) else { continue };
            let proven = outcome.is_settled();
            if proven || carried == Carried::Everything {
                // The record less its origin: what was decoded, encoded again.
                let Some(record) = encode(key, outcome, Origin::Unrecorded) else { continue };
                body.extend_from_slice(&key.to_le_bytes());
                body.extend_from_slice(&record.to_le_bytes());
                count += 1;
                unknown += u64::from(!proven);
            }
        }
        let mut bytes = Vec::with_capacity(16 + body.len() + 8);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes.extend_from_slice(&body);
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        shogi4_tablebase::write_atomically(path, &[&bytes]).map_err(|e| StoreError::Io(path.to_path_buf(), e))?;
        Ok(Exported { records: count, unknown })
    }

    /// Merges the outcomes of an exported file into the store as from `origin` (see
    /// [`ProofStore::import_facts`]). A file that is not a complete, intact export is refused
    /// whole.
    pub fn import(&self, path: &Path, origin: Origin) -> Result<Imported, StoreError> {
        self.import_facts(&read_export(path)?, origin)
    }

    /// Merges outcomes read from an export ([`read_export`]) into the store, for a caller that
    /// checks the file before it opens the store: in commits of [`IMPORT_CHUNK`] records. With a
    /// cap ([`ProofStore::set_cap`]), a chunk is committed only while the file is at most half
    /// the bound past which nothing is recorded (redb grows its file by doubling), so that an
    /// import never carries the file past that bound; what is left is not imported (`changed`
    /// says how much was).
    pub fn import_facts(&self, facts: &[(u128, Outcome)], origin: Origin) -> Result<Imported, StoreError> {
        let mut changed = 0;
        for chunk in facts.chunks(IMPORT_CHUNK) {
            if !self.has_room_for_import() {
                break;
            }
            changed += self.record(chunk, origin)? as u64;
        }
        Ok(Imported { records: facts.len() as u64, changed })
    }

    /// Merges what a proof certificate (`.s4cert`, see `shogi4-certificate`) proves, once its
    /// checker accepts it: each of its positions a win or a loss within its bound (at least 1
    /// ply for a win, 2 for a loss with a move to make), narrowed with what the store holds.
    pub fn import_certificate(&self, path: &Path) -> Result<Imported, StoreError> {
        self.import_facts(&read_certificate(path)?, Origin::Certificate)
    }
}

/// Records per commit of an import: the cap is checked before each, so that the file passes
/// it by at most one commit's growth.
pub const IMPORT_CHUNK: usize = 10_000;

/// What a proof certificate proves, as outcomes by position key, once its checker accepts it,
/// without a store: what [`ProofStore::import_certificate`] merges.
pub fn read_certificate(path: &Path) -> Result<Vec<(u128, Outcome)>, StoreError> {
    let bytes = shogi4_certificate::read_file(path).map_err(|e| StoreError::Io(path.to_path_buf(), e))?;
    let proven = shogi4_certificate::proven_positions(&bytes)
        .map_err(|e| StoreError::Export(path.to_path_buf(), format!("certificate refused: {e}")))?;
    Ok(proven_facts(proven))
}

/// A checked certificate's positions as outcomes by position key.
fn proven_facts(proven: impl IntoIterator<Item = shogi4_certificate::Proven>) -> Vec<(u128, Outcome)> {
    proven.into_iter().map(|p| (p.position.key(), certified_outcome(&p))).collect()
}

/// Whether the file at `path` begins as a proof certificate does (`S4CERT1` or `S4CERT2`).
pub fn is_certificate(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    let read = std::fs::File::open(path).and_then(|mut file| file.read_exact(&mut head));
    read.is_ok() && shogi4_certificate::is_certificate(&head)
}

/// The outcomes an exported file holds, in its order (by key), without a store: what
/// [`ProofStore::import`] merges, and what a reader that learns from proofs reads. A file
/// that is not a complete, intact export is refused whole.
pub fn read_export(path: &Path) -> Result<Vec<(u128, Outcome)>, StoreError> {
    let bytes = read_declared(path)?;
    let refuse = |why: &str| StoreError::Export(path.to_path_buf(), why.to_string());
    // The magic first, as far as the file goes: a short file of something else is not an
    // export, where an export cut short is truncated.
    if !MAGIC.starts_with(&bytes[..bytes.len().min(MAGIC.len())]) {
        return Err(refuse("not a proof export (no S4PROOF1 header)"));
    }
    if bytes.len() < 24 {
        return Err(refuse("truncated: shorter than the 24 bytes of an empty export"));
    }
    let count = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let expected = count.checked_mul(RECORD as u64).and_then(|n| n.checked_add(24));
    if expected != Some(bytes.len() as u64) {
        return Err(refuse("truncated or padded: the size does not match the record count"));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 8);
    if xxhash_rust::xxh3::xxh3_64(content) != u64::from_le_bytes(trailer.try_into().expect("8 bytes")) {
        return Err(refuse("checksum mismatch: the file is damaged"));
    }
    content[16..]
        .chunks_exact(RECORD)
        .map(|chunk| {
            let key = u128::from_le_bytes(chunk[..16].try_into().expect("16 bytes"));
            let record = u64::from_le_bytes(chunk[16..].try_into().expect("8 bytes"));
            let outcome = decode(key, record).ok_or_else(|| refuse("a record fails its own checksum"))?;
            Ok((key, outcome))
        })
        .collect()
}

/// The file's bytes, read whole only once it shows itself an export of the size its header
/// declares: a regular file (a device, a FIFO or a directory is refused before it is opened),
/// its magic, and its size matching its record count. Anything else costs a few bytes' read,
/// not its size in memory (a sparse file that claims a gigabyte, `/dev/zero`). What is read
/// is checked again, whole, by [`read_export`].
fn read_declared(path: &Path) -> Result<Vec<u8>, StoreError> {
    use std::io::Read;
    let io = |e| StoreError::Io(path.to_path_buf(), e);
    let refuse = |why: &str| StoreError::Export(path.to_path_buf(), why.to_string());
    if !std::fs::metadata(path).map_err(io)?.is_file() {
        return Err(refuse("not a regular file"));
    }
    let mut file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut head = Vec::with_capacity(16);
    (&mut file).take(16).read_to_end(&mut head).map_err(io)?;
    if !MAGIC.starts_with(&head[..head.len().min(MAGIC.len())]) {
        return Err(refuse("not a proof export (no S4PROOF1 header)"));
    }
    if head.len() < 16 || size < 24 {
        return Err(refuse("truncated: shorter than the 24 bytes of an empty export"));
    }
    let count = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
    let expected = count.checked_mul(RECORD as u64).and_then(|n| n.checked_add(24));
    if expected != Some(size) {
        return Err(refuse("truncated or padded: the size does not match the record count"));
    }
    let mut bytes = head;
    bytes.reserve_exact(usize::try_from(size).map_err(|_| refuse("too large for this machine"))? - 16);
    file.take(size - 16).read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// What a certificate proves of one position, as an outcome: a win or a loss within its bound
/// (at least 1 ply for a win, 2 for a loss with a move to make).
pub fn certified_outcome(proven: &shogi4_certificate::Proven) -> Outcome {
    let at_least = if proven.wins { 1 } else { 2.min(proven.within) };
    Outcome::won(proven.wins, at_least, proven.within)
}
