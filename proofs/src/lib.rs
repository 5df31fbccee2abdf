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
//! use shogi4_proofs::{Origin, ProofStore};
//! use shogi4_search::Outcome;
//! use shogi4_tablebase::Value;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let (store, _) = ProofStore::open(&dir.path().join("proofs.redb")).unwrap();
//! store.record(&[(42, Outcome::Proven(Value::Win(7)))], Origin::Search).unwrap();
//! assert_eq!(store.get(42).unwrap(), Some(Outcome::Proven(Value::Win(7))));
//! ```

mod export;
mod queue;

pub use export::{
    certified_outcome, is_certificate, read_certificate, read_export, Carried, Exported, Imported, IMPORT_CHUNK,
    MAGIC as EXPORT_MAGIC,
};
pub use queue::Queued;

use std::fmt;
use std::path::{Path, PathBuf};

use redb::{Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use shogi4_engine::Position;
use shogi4_search::Outcome;
use shogi4_tablebase::Value;

const FACTS: TableDefinition<u128, u64> = TableDefinition::new("facts_v1");

const TAG_PROVEN: u64 = 1;
const TAG_UNKNOWN: u64 = 2;
const TAG_BOUNDED_WIN: u64 = 3;
const TAG_BOUNDED_LOSS: u64 = 4;
const TAG_DRAW: u64 = 5;
/// The tag's low bits; its top three hold the record's [`Origin`].
const TAG_BITS: u64 = 0x1F;

/// Where a record came from, in the order of trust: of two proven facts that contradict each
/// other (one is forged or corrupt), the store keeps the one from the higher origin, and on a
/// tie the one it holds. A record written before origins were kept reads as
/// [`Origin::Unrecorded`], the lowest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// Written before the store kept origins.
    Unrecorded = 0,
    /// Merged from an export by hand (`shogi4 proofs import`): only as good as the file.
    Import = 1,
    /// The published export beside the tables (`opening.proofs`), merged at start-up.
    Published = 2,
    /// Established by this program's own search.
    Search = 3,
    /// Proven by a certificate that the rules-only checker accepted.
    Certificate = 4,
}

impl Origin {
    /// Every origin, lowest trust first.
    pub const ALL: [Origin; 5] =
        [Origin::Unrecorded, Origin::Import, Origin::Published, Origin::Search, Origin::Certificate];

    /// Its name, as logs and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Unrecorded => "unrecorded",
            Origin::Import => "import",
            Origin::Published => "published",
            Origin::Search => "search",
            Origin::Certificate => "certificate",
        }
    }

    fn from_bits(bits: u64) -> Option<Origin> {
        Origin::ALL.get(usize::try_from(bits).ok()?).copied()
    }
}

/// Why the store failed.
#[derive(Debug)]
pub enum StoreError {
    /// The database could not be opened, read or written.
    Database(PathBuf, String),
    /// A file could not be read or written, or a damaged database moved aside.
    Io(PathBuf, std::io::Error),
    /// A file to import is not an intact export.
    Export(PathBuf, String),
    /// Another process (or another handle of this one) has the store open: one writer per
    /// store, so it is refused, never taken over. The holder, where the system says
    /// (`pid 1234 (shogi4-server)`).
    Locked(PathBuf, Option<String>),
    /// The store was opened read-only: nothing is written.
    ReadOnly(PathBuf),
    /// The disk failed a write (full, failing): the store is reopened after a back-off.
    Lost(PathBuf),
    /// The file begins as no database does (a text file, an export, a table): most likely a
    /// wrong path, so it is left as it is rather than moved aside as a damaged store would be.
    NotAStore(PathBuf),
}

/// The store as a search's memory (see [`ProofStore::recall`]); a read that fails counts as
/// nothing known, and the caller that must report it calls the inherent `recall` itself.
impl shogi4_search::Recall for ProofStore {
    fn recall(&self, positions: &[Position]) -> Vec<Option<Outcome>> {
        ProofStore::recall(self, positions).unwrap_or_else(|_| vec![None; positions.len()])
    }
}

/// The store is where `shogi4 prove`'s best-first prover keeps what it settles.
impl shogi4_search::best_first::ProofRecord for ProofStore {
    type Error = StoreError;
    fn stored(&self, positions: &[Position]) -> Result<Vec<Option<Outcome>>, StoreError> {
        ProofStore::recall(self, positions)
    }
    fn keep(&self, facts: &[(u128, Outcome)]) -> Result<(), StoreError> {
        self.record(facts, Origin::Search).map(drop)
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Database(path, e) => write!(f, "proof store {}: {e}", path.display()),
            StoreError::Io(path, e) => write!(f, "proof store {}: {e}", path.display()),
            StoreError::Export(path, why) => write!(f, "proof export {}: {why}", path.display()),
            StoreError::Locked(path, holder) => write!(
                f,
                "proof store {} is held by another process{} (one writer per store: give each replica \
                 its own store, or copy or import another's)",
                path.display(),
                holder.as_ref().map(|h| format!(", {h}")).unwrap_or_default()
            ),
            StoreError::ReadOnly(path) => write!(f, "proof store {} is open read-only", path.display()),
            StoreError::Lost(path) => write!(
                f,
                "proof store {}: the disk failed a write (full?); it is reopened after a back-off",
                path.display()
            ),
            StoreError::NotAStore(path) => write!(
                f,
                "{} is not a proof store (it does not begin as a redb database does) and was left as it \
                 is: give the path of a store, or of a file to create (an export is loaded with \
                 `shogi4 proofs import`)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Io(_, e) => Some(e),
            StoreError::Database(..)
            | StoreError::Export(..)
            | StoreError::Locked(..)
            | StoreError::ReadOnly(_)
            | StoreError::Lost(_)
            | StoreError::NotAStore(_) => None,
        }
    }
}

/// What opening found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opened {
    /// An existing store, or a new empty one.
    Fine,
    /// The file was damaged: it was moved to `aside` and a new store begun with the records
    /// that could still be read from it and passed their checksums.
    Rebuilt {
        /// Where the damaged file went.
        aside: PathBuf,
        /// Records carried over into the new store.
        salvaged: u64,
        /// Records of the damaged file that could not be carried over, when it still says how
        /// many it held.
        lost: Option<u64>,
    },
    /// The file may not be written (permissions, a read-only file system): it is served
    /// read-only.
    ReadOnly,
}

/// How much room the cap leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fullness {
    Room,
    ProofsOnly,
    Full,
}

/// The database's page cache (redb's default is 1 GiB): the store's share of the memory
/// bound the hosting guide states.
pub const CACHE_BYTES: usize = 64 << 20;

/// Reads `table`'s records from `start` on into `facts` until the end (`None`) or damage: then
/// the key to go on from, past the damaged stretch (`None` when nothing past it reads).
fn salvage_from(
    table: &redb::ReadOnlyTable<u128, u64>,
    start: u128,
    facts: &mut Vec<(u128, Outcome, Origin)>,
) -> Option<u128> {
    let mut next = start;
    let walked = quietly(|| -> Result<(), ()> {
        for entry in table.range(start..).map_err(|_| ())? {
            let (key, record) = entry.map_err(|_| ())?;
            let key = key.value();
            facts.extend(decode_record(key, record.value()).map(|(outcome, origin)| (key, outcome, origin)));
            next = key.checked_add(1).ok_or(())?;
        }
        next = u128::MAX;
        Ok(())
    });
    match walked {
        Ok(Ok(())) => None,
        _ if next == u128::MAX => None,
        _ => readable_after(table, next),
    }
}

/// The smallest key from `from` on at which `table` reads again: the first record from there
/// (or the end) comes without an error. Damage covers a stretch of keys (a page's, or a
/// branch's), so the keys from which reading fails form one run from `from`: bisection finds
/// its end in at most 128 reads.
fn readable_after(table: &redb::ReadOnlyTable<u128, u64>, from: u128) -> Option<u128> {
    let reads = |start: u128| {
        quietly(|| match table.range(start..) {
            Ok(mut range) => range.next().is_none_or(|first| first.is_ok()),
            Err(_) => false,
        })
        .unwrap_or(false)
    };
    if reads(from) {
        return Some(from);
    }
    if !reads(u128::MAX) {
        return None;
    }
    // `from` fails, `u128::MAX` reads.
    let (mut failing, mut reading) = (from, u128::MAX);
    while reading - failing > 1 {
        let middle = failing + (reading - failing) / 2;
        if reads(middle) {
            reading = middle;
        } else {
            failing = middle;
        }
    }
    Some(reading)
}

/// A private copy of the store at `path`, repaired by opening it writable, then opened for
/// reading and unlinked: what [`ProofStore::open_read_only`] reads when the file needs the
/// repair a reader may not make.
fn repaired_copy(path: &Path) -> Result<ReadOnlyDatabase, redb::Error> {
    static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let copy = std::env::temp_dir().join(format!(".shogi4-store-{}-{n}.redb", std::process::id()));
    let opened = (|| {
        std::fs::copy(path, &copy).map_err(redb::StorageError::from)?;
        drop(create(&copy)?);
        Ok(ReadOnlyDatabase::open(&copy)?)
    })();
    let _ = std::fs::remove_file(&copy);
    opened
}

fn create(path: &Path) -> Result<Database, redb::DatabaseError> {
    Database::builder().set_cache_size(CACHE_BYTES).create(path)
}

/// The first bytes of every redb database file (redb keeps the constant to itself; every
/// test that reopens a store would fail if it changed).
const REDB_MAGIC: [u8; 9] = [b'r', b'e', b'd', b'b', 0x1A, 0x0A, 0xA9, 0x0D, 0x0A];

/// Refuses a file that begins as no database does: neither redb's magic (or the start of it,
/// in a file cut short) nor zeros (a file whose creation stopped before its header was
/// written). Such a file was never a store, so it is not treated as a damaged one, which is
/// moved aside. A missing file is a new store.
fn refuse_foreign(path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let mut head = [0u8; REDB_MAGIC.len()];
    let read = match std::fs::File::open(path) {
        Ok(file) => file.take(head.len() as u64).read(&mut head),
        // Missing: a new store. A directory, a file that may not be read: redb's own error
        // says which.
        Err(_) => return Ok(()),
    }
    .map_err(|e| StoreError::Io(path.to_path_buf(), e))?;
    let head = &head[..read];
    if REDB_MAGIC.starts_with(head) || head.iter().all(|&b| b == 0) {
        Ok(())
    } else {
        Err(StoreError::NotAStore(path.to_path_buf()))
    }
}

/// Damaged stores kept beside the live one at most; older ones are deleted.
const DAMAGED_COPIES_KEPT: usize = 3;

/// The database, writable or not; or lost to an I/O error and not reopened yet.
enum Db {
    Writable(Database),
    ReadOnly(ReadOnlyDatabase),
    /// A write failed for the disk's sake (full, failing): the handle was dropped, since
    /// redb refuses every later operation on it, and it is reopened at `retry`.
    Lost {
        retry: std::time::Instant,
        backoff: std::time::Duration,
    },
}

/// The first wait before a lost store is reopened; each failed reopening doubles it, up to
/// [`LONGEST_BACKOFF`].
const FIRST_BACKOFF: std::time::Duration = std::time::Duration::from_millis(500);
const LONGEST_BACKOFF: std::time::Duration = std::time::Duration::from_secs(60);

/// The word that, given where a store's path is asked for (the server's `--proof-store`, the
/// CLI's `--store`), means no store at all rather than a file of that name.
pub const NO_STORE: &str = "none";

/// The store a path option names: `path` itself, or nothing for the word [`NO_STORE`].
///
/// ```
/// use std::path::Path;
/// use shogi4_proofs::named_store;
///
/// assert_eq!(named_store(Path::new("none")), None);
/// assert_eq!(named_store(Path::new("tables/proofs.redb")), Some(Path::new("tables/proofs.redb")));
/// assert_eq!(named_store(Path::new("./none")), Some(Path::new("./none")), "a file so named");
/// ```
pub fn named_store(path: &Path) -> Option<&Path> {
    (path.as_os_str() != NO_STORE).then_some(path)
}

/// A store of established outcomes, by position key.
pub struct ProofStore {
    db: std::sync::RwLock<Db>,
    path: PathBuf,
    /// The file size past which only proven outcomes are recorded ([`ProofStore::set_cap`]).
    cap: Option<u64>,
    /// Facts that contradict the record held ([`ProofStore::conflicts`]).
    conflicts: std::sync::atomic::AtomicU64,
    /// Of those, the ones that replaced it, being better founded ([`ProofStore::overruled`]).
    overruled: std::sync::atomic::AtomicU64,
}

/// Why a database would not open, as far as what to do about it goes.
enum Refusal {
    /// Damage: the file is moved aside.
    Damaged,
    /// Writing is not allowed: open read-only.
    NoWrite,
    /// Anything else (held by another process, a transient I/O error): refused, untouched.
    Refused(StoreError),
}

impl Refusal {
    fn of(path: &Path, error: redb::DatabaseError) -> Refusal {
        use redb::{DatabaseError, StorageError};
        use std::io::ErrorKind;
        match error {
            DatabaseError::DatabaseAlreadyOpen | DatabaseError::LockProtocolMismatch => {
                Refusal::Refused(StoreError::Locked(path.to_path_buf(), holder_of(path)))
            }
            DatabaseError::Storage(StorageError::Corrupted(_)) | DatabaseError::RepairAborted => Refusal::Damaged,
            DatabaseError::Storage(StorageError::Io(e)) => match e.kind() {
                ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Refusal::NoWrite,
                ErrorKind::UnexpectedEof | ErrorKind::InvalidData => Refusal::Damaged,
                _ => Refusal::Refused(StoreError::Io(path.to_path_buf(), e)),
            },
            other => Refusal::Refused(StoreError::Database(path.to_path_buf(), other.to_string())),
        }
    }
}

impl ProofStore {
    /// Opens the store at `path`, creating it if missing, and walks it
    /// ([`ProofStore::check_and_repair`]). Only damage moves a file aside (`PATH.damaged-N`,
    /// the last few kept), and then the records that can still be read and pass their
    /// checksums are carried into the new store: damage is never trusted, and nothing
    /// readable is lost. A store held by another process is refused ([`StoreError::Locked`]),
    /// never taken over; one that may not be written is opened read-only; a file that never
    /// was a database ([`StoreError::NotAStore`]) and other I/O errors are refused and leave
    /// the file as it is.
    pub fn open(path: &Path) -> Result<(ProofStore, Opened), StoreError> {
        let (store, opened) = ProofStore::open_unchecked(path)?;
        if opened != Opened::Fine {
            return Ok((store, opened));
        }
        let checked = store.check_and_repair()?;
        Ok((store, checked))
    }

    /// [`ProofStore::open`] without the walk of the whole file, which takes time in
    /// proportion to its size: for a server that listens at once and walks it meanwhile,
    /// with [`ProofStore::check_and_repair`]. Damage that the database meets on opening is
    /// handled as `open` does.
    pub fn open_unchecked(path: &Path) -> Result<(ProofStore, Opened), StoreError> {
        refuse_foreign(path)?;
        let attempt = std::panic::catch_unwind(|| create(path))
            .unwrap_or_else(|_| Err(redb::DatabaseError::Storage(redb::StorageError::Corrupted("panic".into()))));
        match attempt.map_err(|error| Refusal::of(path, error)) {
            Ok(db) => Ok((ProofStore::writable(db, path)?, Opened::Fine)),
            Err(Refusal::Refused(error)) => Err(error),
            Err(Refusal::NoWrite) => Ok((ProofStore::open_read_only(path)?, Opened::ReadOnly)),
            Err(Refusal::Damaged) => {
                let (db, aside) = begin_anew(path)?;
                let store = ProofStore::writable(db, path)?;
                let (salvaged, lost) = store.salvage(&aside);
                Ok((store, Opened::Rebuilt { aside, salvaged, lost }))
            }
        }
    }

    /// Walks every record of a writable store. If the walk meets damage, the file is moved
    /// aside and the store begins anew in place, with the readable records salvaged
    /// ([`Opened::Rebuilt`]); searches and writes meanwhile go on, on the old file until then
    /// (their errors on damaged pages are errors, never wrong outcomes: every record carries
    /// its checksum).
    pub fn check_and_repair(&self) -> Result<Opened, StoreError> {
        let snapshot = match &*self.db.read().expect("not poisoned") {
            Db::Writable(db) => guarded(&self.path, || db.begin_read().map_err(|e| self.error(e)))?,
            Db::ReadOnly(_) | Db::Lost { .. } => return Ok(Opened::Fine),
        };
        if guarded(&self.path, || check(snapshot, &self.path)).is_ok() {
            return Ok(Opened::Fine);
        }
        let aside = {
            let mut db = self.db.write().expect("not poisoned");
            // The damaged file is closed before it is moved; if beginning anew fails, the
            // store stays lost and is reopened after the back-off, as after an I/O error.
            *db = Db::Lost { retry: std::time::Instant::now() + FIRST_BACKOFF, backoff: FIRST_BACKOFF };
            let (fresh, aside) = begin_anew(&self.path)?;
            *db = Db::Writable(fresh);
            aside
        };
        self.record(&[], Origin::Search)?;
        self.create_queue()?;
        let (salvaged, lost) = self.salvage(&aside);
        Ok(Opened::Rebuilt { aside, salvaged, lost })
    }

    /// Opens the store at `path` for reading only (a copy of another replica's store, say):
    /// lookups are served, writes are refused with [`StoreError::ReadOnly`]. A file left as
    /// after a crash (not closed, so redb would repair it, which a reader may not) is repaired
    /// on a private copy in the system's temporary folder, which is read instead: the file
    /// itself is never written. The copy takes the file's size on that disk while it is open,
    /// and no name there (it is unlinked once opened).
    pub fn open_read_only(path: &Path) -> Result<ProofStore, StoreError> {
        let error = |e: &dyn fmt::Display| StoreError::Database(path.to_path_buf(), e.to_string());
        let db = guarded(path, || match ReadOnlyDatabase::open(path) {
            Err(redb::DatabaseError::RepairAborted) => repaired_copy(path).map_err(|e| error(&e)),
            opened => opened.map_err(|e| error(&e)),
        })?;
        guarded(path, || check(db.begin_read().map_err(|e| error(&e))?, path))?;
        Ok(ProofStore {
            db: std::sync::RwLock::new(Db::ReadOnly(db)),
            path: path.to_path_buf(),
            cap: None,
            conflicts: Default::default(),
            overruled: Default::default(),
        })
    }

    fn writable(db: Database, path: &Path) -> Result<ProofStore, StoreError> {
        let store = ProofStore {
            db: std::sync::RwLock::new(Db::Writable(db)),
            path: path.to_path_buf(),
            cap: None,
            conflicts: Default::default(),
            overruled: Default::default(),
        };
        // Make sure the tables exist, so that readers never see "no such table".
        store.record(&[], Origin::Search)?;
        store.create_queue()?;
        Ok(store)
    }

    /// Bounds the file: past `bytes`, only proven outcomes are recorded (and nothing is
    /// queued); past a quarter more, nothing at all. `None`: no bound.
    pub fn set_cap(&mut self, bytes: Option<u64>) {
        self.cap = bytes;
    }

    /// How full the file is against the cap.
    fn fullness(&self) -> Fullness {
        let Some(cap) = self.cap else { return Fullness::Room };
        match std::fs::metadata(&self.path).map_or(0, |m| m.len()) {
            size if size >= cap + cap / 4 => Fullness::Full,
            size if size >= cap => Fullness::ProofsOnly,
            _ => Fullness::Room,
        }
    }

    /// Whether an import may commit another chunk: with a cap, only while the file is at most
    /// half the bound past which nothing is recorded (the cap and a quarter more), since redb
    /// grows its file by doubling and one commit may double it.
    pub(crate) fn has_room_for_import(&self) -> bool {
        let Some(cap) = self.cap else { return true };
        let size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        size.saturating_mul(2) <= cap + cap / 4
    }

    /// Whether writes are refused.
    pub fn is_read_only(&self) -> bool {
        matches!(*self.db.read().expect("not poisoned"), Db::ReadOnly(_))
    }

    /// Carries the readable, intact records of the damaged store at `aside` into this one;
    /// returns how many, and how many it held that were not (when it still says how many it
    /// held). Whatever fails to read is skipped: this is a rescue, not a check. The walk goes
    /// on past damage: it starts again at the smallest key past the damaged stretch from which
    /// the file reads again (found by bisection over the keys), so that one damaged page costs
    /// its own records, not every record after it.
    fn salvage(&self, aside: &Path) -> (u64, Option<u64>) {
        // Filled as it reads, so that what came before a failure (or a panic of the
        // database on the damage) is kept.
        let mut facts = Vec::new();
        let mut held = None;
        let mut read = || -> Result<(), redb::Error> {
            let db = ReadOnlyDatabase::open(aside)?;
            let read = db.begin_read()?;
            let table = read.open_table(FACTS)?;
            held = table.len().ok();
            let mut from = Some(0u128);
            while let Some(start) = from {
                from = salvage_from(&table, start, &mut facts);
            }
            Ok(())
        };
        let _ = quietly(&mut read);
        // Each record keeps its origin.
        let carried: u64 = facts
            .chunks(10_000)
            .map(|chunk| guarded(&self.path, || self.write(chunk.iter().copied())).map_or(0, |_| chunk.len() as u64))
            .sum();
        (carried, held.map(|held| held.saturating_sub(carried)))
    }

    fn reader(&self) -> Result<redb::ReadTransaction, StoreError> {
        self.revive();
        match &*self.db.read().expect("not poisoned") {
            Db::Writable(db) => db.begin_read().map_err(|e| self.error(e)),
            Db::ReadOnly(db) => db.begin_read().map_err(|e| self.error(e)),
            Db::Lost { .. } => Err(StoreError::Lost(self.path.clone())),
        }
    }

    fn writer(&self) -> Result<redb::WriteTransaction, StoreError> {
        self.revive();
        let begun = match &*self.db.read().expect("not poisoned") {
            Db::Writable(db) => db.begin_write(),
            Db::ReadOnly(_) => return Err(StoreError::ReadOnly(self.path.clone())),
            Db::Lost { .. } => return Err(StoreError::Lost(self.path.clone())),
        };
        begun.map_err(|e| {
            if let redb::TransactionError::Storage(storage) = &e {
                self.lose_on_io(storage);
            }
            self.error(e)
        })
    }

    /// Commits a write; a failure of the disk drops the handle (see [`Db::Lost`]).
    fn commit(&self, write: redb::WriteTransaction) -> Result<(), StoreError> {
        write.commit().map_err(|e| {
            if let redb::CommitError::Storage(storage) = &e {
                self.lose_on_io(storage);
            }
            self.error(e)
        })
    }

    /// After an I/O error (ENOSPC, a failing disk), drops the database handle, to be
    /// reopened after a back-off: redb refuses every operation of a handle that saw one.
    fn lose_on_io(&self, error: &redb::StorageError) {
        if matches!(error, redb::StorageError::Io(_) | redb::StorageError::PreviousIo) {
            let mut db = self.db.write().expect("not poisoned");
            if matches!(*db, Db::Writable(_)) {
                *db = Db::Lost { retry: std::time::Instant::now() + FIRST_BACKOFF, backoff: FIRST_BACKOFF };
            }
        }
    }

    /// Reopens a lost store once its back-off has passed; a failed attempt doubles it.
    fn revive(&self) {
        let due = |db: &Db| matches!(db, Db::Lost { retry, .. } if std::time::Instant::now() >= *retry);
        if !due(&self.db.read().expect("not poisoned")) {
            return;
        }
        let mut db = self.db.write().expect("not poisoned");
        let Db::Lost { backoff, .. } = *db else { return };
        if !due(&db) {
            return;
        }
        *db = match create(&self.path) {
            Ok(reopened) => Db::Writable(reopened),
            Err(_) => {
                let backoff = (backoff * 2).min(LONGEST_BACKOFF);
                Db::Lost { retry: std::time::Instant::now() + backoff, backoff }
            }
        };
    }

    fn error(&self, e: impl fmt::Display) -> StoreError {
        StoreError::Database(self.path.clone(), e.to_string())
    }

    /// What is known of the position with this key; a record failing its checksum counts as
    /// nothing known.
    pub fn get(&self, key: u128) -> Result<Option<Outcome>, StoreError> {
        Ok(self.get_many(&[key])?[0])
    }

    /// What is known of each position, read under its four symmetric forms (the colour flip
    /// and the left-right mirror keep the value for the side to move) and merged, in one read
    /// transaction: a proof of one form answers for them all.
    pub fn recall(&self, positions: &[Position]) -> Result<Vec<Option<Outcome>>, StoreError> {
        let keys: Vec<u128> = positions
            .iter()
            .flat_map(|p| {
                let flipped = p.flipped();
                [p.key(), p.mirrored().key(), flipped.key(), flipped.mirrored().key()]
            })
            .collect();
        let known = self.get_many(&keys)?;
        Ok(known.chunks(4).map(|forms| forms.iter().flatten().copied().reduce(Outcome::merge)).collect())
    }

    /// What is known of each key, in one read transaction.
    pub fn get_many(&self, keys: &[u128]) -> Result<Vec<Option<Outcome>>, StoreError> {
        guarded(&self.path, || self.read_many(keys))
    }

    fn read_many(&self, keys: &[u128]) -> Result<Vec<Option<Outcome>>, StoreError> {
        let read = self.reader()?;
        let table = read.open_table(FACTS).map_err(|e| self.error(e))?;
        keys.iter()
            .map(|&key| Ok(table.get(key).map_err(|e| self.error(e))?.and_then(|record| decode(key, record.value()))))
            .collect()
    }

    /// Records outcomes from `origin` in one atomic commit, keeping for each key the better
    /// knowledge. Returns how many records changed.
    pub fn record(&self, facts: &[(u128, Outcome)], origin: Origin) -> Result<usize, StoreError> {
        guarded(&self.path, || self.write(facts.iter().map(|&(key, outcome)| (key, outcome, origin))))
    }

    /// Records outcomes, each from its own origin, in one atomic commit (see
    /// [`ProofStore::record`]).
    fn write(&self, facts: impl Iterator<Item = (u128, Outcome, Origin)>) -> Result<usize, StoreError> {
        let fullness = self.fullness();
        if fullness == Fullness::Full {
            return Ok(0);
        }
        let write = self.writer()?;
        let mut changed = 0;
        {
            let mut table = write.open_table(FACTS).map_err(|e| self.error(e))?;
            for (key, outcome, origin) in facts {
                if fullness == Fullness::ProofsOnly && !outcome.is_settled() {
                    continue;
                }
                let Some(record) = encode(key, outcome, origin) else { continue };
                let held = table.get(key).map_err(|e| self.error(e))?.and_then(|r| decode_record(key, r.value()));
                // Two statements that cannot both be true: one is forged or corrupt. The one
                // from the better-founded origin stays (the record held, on a tie); the
                // conflict is counted either way, never merged into a third statement that
                // neither made.
                if let Some((_, known_origin)) = held.filter(|(known, _)| known.conflicts(outcome)) {
                    self.conflicts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if origin > known_origin {
                        self.overruled.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        table.insert(key, record).map_err(|e| self.error(e))?;
                        changed += 1;
                    }
                    continue;
                }
                // What the two say together (a range narrowed, an unknown deepened); nothing
                // is written when that is what the store holds already. A statement that needs
                // both is only as well founded as the lower of their origins.
                let known = held.map(|(known, _)| known);
                let merged = known.map_or(outcome, |known| known.merge(outcome));
                if Some(merged) != known {
                    let record = match held {
                        Some((_, known_origin)) if merged != outcome => {
                            encode(key, merged, origin.min(known_origin)).unwrap_or(record)
                        }
                        _ => record,
                    };
                    table.insert(key, record).map_err(|e| self.error(e))?;
                    changed += 1;
                }
            }
        }
        self.commit(write)?;
        Ok(changed)
    }

    /// Facts that contradicted what the store held since this handle was opened (a win against
    /// a loss, ranges that do not meet): each one a forged or corrupt statement, its own or the
    /// record's. [`ProofStore::overruled`] counts those that replaced the record.
    pub fn conflicts(&self) -> u64 {
        self.conflicts.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Of [`ProofStore::conflicts`], the facts that replaced the record they contradict, their
    /// [`Origin`] being better founded than the record's.
    pub fn overruled(&self) -> u64 {
        self.overruled.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The outcome held for `key` and where it came from.
    pub fn get_with_origin(&self, key: u128) -> Result<Option<(Outcome, Origin)>, StoreError> {
        let read = self.reader()?;
        let table = read.open_table(FACTS).map_err(|e| self.error(e))?;
        Ok(table.get(key).map_err(|e| self.error(e))?.and_then(|record| decode_record(key, record.value())))
    }

    /// Records held (damaged ones included).
    pub fn len(&self) -> Result<u64, StoreError> {
        let read = self.reader()?;
        read.open_table(FACTS).map_err(|e| self.error(e))?.len().map_err(|e| self.error(e))
    }

    /// Whether the store holds no record.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// Every record that passes its checksum, and how many failed it.
    pub fn verify(&self) -> Result<(u64, u64), StoreError> {
        let read = self.reader()?;
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

/// Runs `operation`, catching a panic without printing it. The database meets some damage
/// with a panic, and salvage expects them: finding where a damaged stretch ends takes up to
/// 128 reads that may each panic. A panic hook, installed once, stays silent for a thread
/// inside this call and hands every other panic to the hook that was there before.
fn quietly<T>(operation: impl FnOnce() -> T) -> std::thread::Result<T> {
    use std::cell::Cell;
    thread_local!(static QUIET: Cell<bool> = const { Cell::new(false) });
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                before(info)
            }
        }));
    });
    let was = QUIET.with(|quiet| quiet.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(operation));
    QUIET.with(|quiet| quiet.set(was));
    result
}

/// Runs a database operation, turning a panic inside the database (some damage is met with
/// one, not an error) into an error that carries its message, printed nowhere else: damage
/// must never take the service down.
fn guarded<T>(path: &Path, operation: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    quietly(operation).unwrap_or_else(|panic| {
        let said = panic.downcast_ref::<&str>().copied().or(panic.downcast_ref::<String>().map(String::as_str));
        let why = format!("the database failed on damaged data ({})", said.unwrap_or("no message"));
        Err(StoreError::Database(path.to_path_buf(), why))
    })
}

/// The process that has `path` open, as `pid N (name)`, found through `/proc` (Linux; `None`
/// elsewhere, or when the holder's descriptors cannot be read).
fn holder_of(path: &Path) -> Option<String> {
    let wanted = std::fs::canonicalize(path).ok()?;
    let own = std::process::id();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(descriptors) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        if descriptors.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == wanted)) {
            if pid == own {
                return Some("this very process".to_string());
            }
            let name = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            return Some(format!("pid {pid} ({})", name.trim()));
        }
    }
    None
}

/// Walks the table in `read`, so that a damaged file fails here, not mid-service.
fn check(read: redb::ReadTransaction, path: &Path) -> Result<(), StoreError> {
    let error = |e: &dyn fmt::Display| StoreError::Database(path.to_path_buf(), e.to_string());
    match read.open_table(FACTS) {
        Ok(table) => {
            for entry in table.iter().map_err(|e| error(&e))? {
                entry.map_err(|e| error(&e))?;
            }
            Ok(())
        }
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(()),
        Err(e) => Err(error(&e)),
    }
}

/// Moves the damaged store at `path` aside and creates an empty one in its place; returns
/// it and where the damaged file went.
fn begin_anew(path: &Path) -> Result<(Database, PathBuf), StoreError> {
    let aside = move_aside(path)?;
    let db = create(path).map_err(|e| StoreError::Database(path.to_path_buf(), e.to_string()))?;
    Ok((db, aside))
}

/// Moves a damaged store to the first free `PATH.damaged-N`, deleting the oldest copies
/// beyond the last few, so that repeated damage cannot fill the disk.
fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let copy = |n: u64| path.with_extension(format!("damaged-{n}"));
    // The numbers of the copies there are, oldest (lowest) first.
    let prefix = copy(0).file_name().map(|n| n.to_string_lossy().trim_end_matches('0').to_string()).unwrap_or_default();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut kept: Vec<u64> = std::fs::read_dir(dir)
        .map_err(|e| StoreError::Io(dir.to_path_buf(), e))?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.strip_prefix(&prefix)?.parse().ok())
        .collect();
    kept.sort_unstable();
    let aside = copy(kept.last().map_or(0, |n| n + 1));
    while kept.len() >= DAMAGED_COPIES_KEPT {
        let oldest = kept.remove(0);
        std::fs::remove_file(copy(oldest)).map_err(|e| StoreError::Io(copy(oldest), e))?;
    }
    std::fs::rename(path, &aside).map_err(|e| StoreError::Io(path.to_path_buf(), e))?;
    Ok(aside)
}

fn checksum(key: u128, payload: u64) -> u64 {
    let mut bytes = [0u8; 24];
    bytes[..16].copy_from_slice(&key.to_le_bytes());
    bytes[16..].copy_from_slice(&payload.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes) >> 32
}

/// `checksum (32 bits) | origin (3) | tag (5) | distance or depth (24)`, a bounded value's two
/// bounds in 12 bits each (lower, upper); a draw has no distance (0).
fn encode(key: u128, outcome: Outcome, origin: Origin) -> Option<u64> {
    let payload = match outcome {
        Outcome::Proven(Value::Draw) => TAG_DRAW << 24,
        Outcome::Proven(value) => (TAG_PROVEN << 24) | u64::from(value.dtw()?),
        Outcome::Bounded { win, at_least, at_most } => {
            if at_most >= 1 << 12 {
                return None;
            }
            let tag = if win { TAG_BOUNDED_WIN } else { TAG_BOUNDED_LOSS };
            (tag << 24) | u64::from(at_least) << 12 | u64::from(at_most)
        }
        Outcome::Unknown { no_result_within } => (TAG_UNKNOWN << 24) | u64::from(no_result_within),
    } | (origin as u64) << 29;
    Some(checksum(key, payload) << 32 | payload)
}

/// The outcome a record states, whatever its origin; `None` for damage.
fn decode(key: u128, record: u64) -> Option<Outcome> {
    decode_record(key, record).map(|(outcome, _)| outcome)
}

/// The outcome a record states and its origin; `None` for damage.
fn decode_record(key: u128, record: u64) -> Option<(Outcome, Origin)> {
    let payload = record & 0xFFFF_FFFF;
    if record >> 32 != checksum(key, payload) {
        return None;
    }
    let origin = Origin::from_bits(payload >> 29)?;
    let depth = (payload & 0xFF_FFFF) as u32;
    let outcome = match (payload >> 24) & TAG_BITS {
        TAG_PROVEN => Some(Outcome::Proven(Value::from_dtw(depth))),
        TAG_UNKNOWN => Some(Outcome::Unknown { no_result_within: depth }),
        TAG_DRAW => (depth == 0).then_some(Outcome::Proven(Value::Draw)),
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
    }?;
    Some((outcome, origin))
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
            Outcome::Proven(Value::Draw),
        ] {
            for origin in Origin::ALL {
                let record = encode(99, outcome, origin).unwrap();
                assert_eq!(decode_record(99, record), Some((outcome, origin)));
                assert_eq!(decode(98, record), None, "a record is bound to its key");
                for bit in 0..64 {
                    assert_eq!(decode(99, record ^ (1 << bit)), None, "bit {bit}");
                }
            }
            // A record written before origins were kept (the tag's top bits clear) reads as
            // of unrecorded origin.
            assert_eq!(encode(99, outcome, Origin::Unrecorded).unwrap() >> 29 & 7, 0);
        }
    }
}
