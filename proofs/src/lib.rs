//! The proof store: what searches established about positions, kept on disk in an embedded
//! database so that no proof is computed twice, across requests and restarts.
//!
//! Keys are exact position keys (`Position::key`). A record is one `u64`: a tag (proven, or
//! no result within a depth), the distance or depth, and a checksum over key and record, so a
//! damaged record is detected and ignored rather than believed. What is recorded is merged
//! with what is held ([`Outcome::merge`]): an exact value replaces anything else, two ranges of
//! a proven value narrow each other, a deeper unknown replaces a shallower one.
//!
//! ```
//! use shogi4_proofs::ProofStore;
//! use shogi4_search::Outcome;
//! use shogi4_tablebase::Value;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let (store, _) = ProofStore::open(&dir.path().join("proofs.redb")).unwrap();
//! store.record(&[(42, Outcome::Proven(Value::Win(7)))]).unwrap();
//! assert_eq!(store.get(42).unwrap(), Some(Outcome::Proven(Value::Win(7))));
//! ```

mod export;
mod queue;

pub use export::Imported;
pub use queue::Queued;

use std::fmt;
use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use shogi4_search::Outcome;
use shogi4_tablebase::Value;

const FACTS: TableDefinition<u128, u64> = TableDefinition::new("facts_v1");

const TAG_PROVEN: u64 = 1;
const TAG_UNKNOWN: u64 = 2;
const TAG_BOUNDED_WIN: u64 = 3;
const TAG_BOUNDED_LOSS: u64 = 4;

/// Why the store failed.
#[derive(Debug)]
pub enum StoreError {
    /// The database could not be opened, read or written.
    Database(PathBuf, String),
    /// A file could not be read or written, or a damaged database moved aside.
    Io(PathBuf, std::io::Error),
    /// A file to import is not an intact export.
    Export(PathBuf, String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Database(path, e) => write!(f, "proof store {}: {e}", path.display()),
            StoreError::Io(path, e) => write!(f, "proof store {}: {e}", path.display()),
            StoreError::Export(path, why) => write!(f, "proof export {}: {why}", path.display()),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Io(_, e) => Some(e),
            StoreError::Database(..) | StoreError::Export(..) => None,
        }
    }
}

/// What opening found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opened {
    /// An existing store, or a new empty one.
    Fine,
    /// The file was damaged: it was moved to this path and a new store begun.
    Rebuilt(PathBuf),
}

/// A store of established outcomes, by position key.
pub struct ProofStore {
    db: Database,
    path: PathBuf,
}

impl ProofStore {
    /// Opens the store at `path`, creating it if missing. A file that is not a readable
    /// store is moved aside (`PATH.damaged-N`) and a new store begun: it is never trusted.
    pub fn open(path: &Path) -> Result<(ProofStore, Opened), StoreError> {
        let error = |e: &dyn fmt::Display| StoreError::Database(path.to_path_buf(), e.to_string());
        let opened = guarded(path, || Database::create(path).map_err(|e| error(&e)).and_then(|db| check(db, path)));
        let (db, opened) = match opened {
            Ok(db) => (db, Opened::Fine),
            Err(_) => {
                let aside = (0..)
                    .map(|n| path.with_extension(format!("damaged-{n}")))
                    .find(|p| !p.exists())
                    .expect("some free name");
                std::fs::rename(path, &aside).map_err(|e| StoreError::Io(path.to_path_buf(), e))?;
                let db = Database::create(path).map_err(|e| error(&e))?;
                (db, Opened::Rebuilt(aside))
            }
        };
        let store = ProofStore { db, path: path.to_path_buf() };
        // Make sure the tables exist, so that readers never see "no such table".
        store.record(&[])?;
        store.create_queue()?;
        Ok((store, opened))
    }

    fn error(&self, e: impl fmt::Display) -> StoreError {
        StoreError::Database(self.path.clone(), e.to_string())
    }

    /// What is known of the position with this key; a record failing its checksum counts as
    /// nothing known.
    pub fn get(&self, key: u128) -> Result<Option<Outcome>, StoreError> {
        Ok(self.get_many(&[key])?[0])
    }

    /// What is known of each key, in one read transaction.
    pub fn get_many(&self, keys: &[u128]) -> Result<Vec<Option<Outcome>>, StoreError> {
        guarded(&self.path, || self.read_many(keys))
    }

    fn read_many(&self, keys: &[u128]) -> Result<Vec<Option<Outcome>>, StoreError> {
        let read = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = read.open_table(FACTS).map_err(|e| self.error(e))?;
        keys.iter()
            .map(|&key| Ok(table.get(key).map_err(|e| self.error(e))?.and_then(|record| decode(key, record.value()))))
            .collect()
    }

    /// Records outcomes in one atomic commit, keeping for each key the better knowledge.
    /// Returns how many records changed.
    pub fn record(&self, facts: &[(u128, Outcome)]) -> Result<usize, StoreError> {
        guarded(&self.path, || self.write(facts))
    }

    fn write(&self, facts: &[(u128, Outcome)]) -> Result<usize, StoreError> {
        let write = self.db.begin_write().map_err(|e| self.error(e))?;
        let mut changed = 0;
        {
            let mut table = write.open_table(FACTS).map_err(|e| self.error(e))?;
            for &(key, outcome) in facts {
                let Some(record) = encode(key, outcome) else { continue };
                let known = table.get(key).map_err(|e| self.error(e))?.and_then(|r| decode(key, r.value()));
                // What the two say together (a range narrowed, an unknown deepened); nothing
                // is written when that is what the store holds already.
                let merged = known.map_or(outcome, |known| known.merge(outcome));
                if Some(merged) != known {
                    let record = if merged == outcome { record } else { encode(key, merged).unwrap_or(record) };
                    table.insert(key, record).map_err(|e| self.error(e))?;
                    changed += 1;
                }
            }
        }
        write.commit().map_err(|e| self.error(e))?;
        Ok(changed)
    }

    /// Records held (damaged ones included).
    pub fn len(&self) -> Result<u64, StoreError> {
        let read = self.db.begin_read().map_err(|e| self.error(e))?;
        read.open_table(FACTS).map_err(|e| self.error(e))?.len().map_err(|e| self.error(e))
    }

    /// Whether the store holds no record.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// Every record that passes its checksum, and how many failed it.
    pub fn verify(&self) -> Result<(u64, u64), StoreError> {
        let read = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = read.open_table(FACTS).map_err(|e| self.error(e))?;
        let (mut good, mut bad) = (0, 0);
        for entry in table.iter().map_err(|e| self.error(e))? {
            let (key, record) = entry.map_err(|e| self.error(e))?;
            if decode(key.value(), record.value()).is_some() {
                good += 1;
            } else {
                bad += 1;
            }
        }
        Ok((good, bad))
    }
}

/// Runs a database operation, turning a panic inside the database (some damage is met with
/// one, not an error) into an error: damage must never take the service down.
fn guarded<T>(path: &Path, operation: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(operation)).unwrap_or_else(|_| {
        Err(StoreError::Database(path.to_path_buf(), "the database failed on damaged data".to_string()))
    })
}

/// Opens the table once and walks it, so that a damaged file fails here, not mid-service.
fn check(db: Database, path: &Path) -> Result<Database, StoreError> {
    let error = |e: &dyn fmt::Display| StoreError::Database(path.to_path_buf(), e.to_string());
    {
        let read = db.begin_read().map_err(|e| error(&e))?;
        match read.open_table(FACTS) {
            Ok(table) => {
                for entry in table.iter().map_err(|e| error(&e))? {
                    entry.map_err(|e| error(&e))?;
                }
            }
            Err(redb::TableError::TableDoesNotExist(_)) => {}
            Err(e) => return Err(error(&e)),
        }
    }
    Ok(db)
}

fn checksum(key: u128, payload: u64) -> u64 {
    let mut bytes = [0u8; 24];
    bytes[..16].copy_from_slice(&key.to_le_bytes());
    bytes[16..].copy_from_slice(&payload.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes) >> 32
}

/// `checksum (32 bits) | tag (8) | distance or depth (24)`, a bounded value's two bounds in
/// 12 bits each (lower, upper); draws are never stored (a search never proves one).
fn encode(key: u128, outcome: Outcome) -> Option<u64> {
    let payload = match outcome {
        Outcome::Proven(value) => (TAG_PROVEN << 24) | u64::from(value.dtw()?),
        Outcome::Bounded { win, at_least, at_most } => {
            if at_most >= 1 << 12 {
                return None;
            }
            let tag = if win { TAG_BOUNDED_WIN } else { TAG_BOUNDED_LOSS };
            (tag << 24) | u64::from(at_least) << 12 | u64::from(at_most)
        }
        Outcome::Unknown { no_result_within } => (TAG_UNKNOWN << 24) | u64::from(no_result_within),
    };
    Some(checksum(key, payload) << 32 | payload)
}

fn decode(key: u128, record: u64) -> Option<Outcome> {
    let payload = record & 0xFFFF_FFFF;
    if record >> 32 != checksum(key, payload) {
        return None;
    }
    let depth = (payload & 0xFF_FFFF) as u32;
    match payload >> 24 {
        TAG_PROVEN => Some(Outcome::Proven(Value::from_dtw(depth))),
        TAG_UNKNOWN => Some(Outcome::Unknown { no_result_within: depth }),
        tag @ (TAG_BOUNDED_WIN | TAG_BOUNDED_LOSS) => {
            let (at_least, at_most) = (depth >> 12, depth & 0xFFF);
            let win = tag == TAG_BOUNDED_WIN;
            // Only well-formed ranges were ever written: anything else is damage.
            let parity = u32::from(win);
            (at_least < at_most && at_least % 2 == parity && at_most % 2 == parity).then_some(Outcome::Bounded {
                win,
                at_least,
                at_most,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_detected() {
        for outcome in [
            Outcome::Proven(Value::Win(13)),
            Outcome::Proven(Value::Loss(0)),
            Outcome::Unknown { no_result_within: 17 },
            Outcome::Bounded { win: true, at_least: 21, at_most: 61 },
            Outcome::Bounded { win: false, at_least: 0, at_most: 120 },
        ] {
            let record = encode(99, outcome).unwrap();
            assert_eq!(decode(99, record), Some(outcome));
            assert_eq!(decode(98, record), None, "a record is bound to its key");
            for bit in 0..64 {
                assert_eq!(decode(99, record ^ (1 << bit)), None, "bit {bit}");
            }
        }
        assert_eq!(encode(1, Outcome::Proven(Value::Draw)), None);
    }
}
