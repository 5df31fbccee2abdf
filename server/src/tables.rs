//! The served tables as one immutable set, swapped whole when the directory is re-read
//! (`SIGHUP`): requests in flight finish on the set they started with, new ones see the new
//! set.
//!
//! Tables are held in one of two ways, smallest first until the copy budget
//! (`--copy-budget-mb`) is spent:
//!
//! - **A private copy.** The file is read into private anonymous memory (a read-only
//!   anonymous mapping) and its checksum verified on that copy; what is served is the copy.
//!   Whatever later happens to the file (truncated, overwritten in place, deleted, replaced),
//!   the server neither dies of a vanished page nor serves a byte it did not verify. The cost
//!   is memory (every such table is resident; the kernel may swap it) and a read at load time
//!   (about a second per GB).
//! - **The file, mapped and guarded** ([`crate::guard`]), for tables beyond the budget: the
//!   page cache holds what is probed, so a table larger than memory can be served. A file
//!   replaced by rename or deleted keeps serving its verified bytes (the mapping holds the old
//!   inode). A file truncated or written in place is caught: a lost page is replaced by zeros
//!   instead of killing the server, and every read is followed by a check of the fault mark
//!   and the file's size and modification time; a request that may have read changed bytes
//!   gets a `table-changed` problem instead of an answer, and `/health` says `degraded` until
//!   the file is restored and the set reloaded.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::http::HeaderValue;
use memmap2::{Mmap, MmapMut};
use sha2::Digest;
use shogi4_api::TableInfo;
use shogi4_engine::Material;
use shogi4_tablebase::{ProbeError, Table, TableDir, TableError, Tablebase};

use crate::error::ApiError;
use crate::guard::Guard;

/// How tables are read in: verified or not, and how many bytes may be private copies.
#[derive(Clone, Copy, Debug)]
pub struct TableLoading {
    /// Recompute each table's checksum before serving it.
    pub verify_checksums: bool,
    /// Bytes of tables held as private copies; larger sets are partly served from their
    /// files, mapped and guarded.
    pub copy_budget: u64,
}

impl Default for TableLoading {
    fn default() -> TableLoading {
        TableLoading { verify_checksums: true, copy_budget: 2 << 30 }
    }
}

/// One served table and what a handler needs besides its values.
pub struct ServedTable {
    /// How the bytes are held. Declared before the table, so a guard is released before its
    /// mapping is unmapped.
    holding: Holding,
    /// The table, over a private sealed copy of its file or the guarded file mapping; read it
    /// through [`ServedTable::read`].
    table: Table<Mmap>,
    /// Its `GET /tables` entry.
    pub info: TableInfo,
    /// `ETag` of every answer from this table: a weak validator from its checksum.
    pub etag: HeaderValue,
    /// `tablebase_probes_total{material}`.
    pub probes: metrics::Counter,
    /// SHA-256 of the verified bytes, hex: what a mirror checks its download against.
    /// Computed on first need ([`ServedTable::sha256`]), not at load: only mirrors need it,
    /// and it is a whole pass over the file.
    sha256: std::sync::OnceLock<String>,
    /// The file it was copied from, as it was then: a reload copies only what changed.
    source: FileIdentity,
}

/// Where a served table's bytes are.
enum Holding {
    /// Private anonymous memory.
    Copy,
    /// The file's own mapping.
    Mapped(Guard),
}

impl ServedTable {
    /// Reads the table. When its file is mapped, the read is followed by a check that the
    /// file has not changed since it was verified, and a change answers a problem instead.
    pub fn read<T>(&self, read: impl FnOnce(&Table<Mmap>) -> Result<T, ProbeError>) -> Result<T, ApiError> {
        let result = read(&self.table);
        // A mapped file's bytes were verified when it was loaded: bytes that fail their own
        // checks now (a compressed block's checksum) mean the file changed since, in a way its
        // size and time did not show. A private copy cannot change, so there it stays our fault.
        if let (Err(ProbeError::Corrupt { .. } | ProbeError::Inconsistent { .. }), Holding::Mapped(guard)) =
            (&result, &self.holding)
        {
            let error = result.as_ref().err().map(ToString::to_string).unwrap_or_default();
            guard.mark_damaged(format!("its bytes fail their checks: {error}"));
        }
        self.intact()?;
        result.map_err(ApiError::from_probe)
    }

    /// `Ok` unless the table's file is mapped and has changed since it was verified.
    pub fn intact(&self) -> Result<(), ApiError> {
        match &self.holding {
            Holding::Copy => Ok(()),
            Holding::Mapped(guard) => guard.check().map_err(|changed| {
                let material = self.table.header().material;
                if guard.first_report() {
                    tracing::error!(%material, reason = %changed.0, "a mapped table changed on disk");
                }
                ApiError::TableChanged { material, reason: changed.0 }
            }),
        }
    }

    /// Whether the table is served from a private copy (else from its mapped file).
    pub fn is_copy(&self) -> bool {
        matches!(self.holding, Holding::Copy)
    }

    /// A copy of bytes `range` of the file, as verified: the copy is made first and the file
    /// checked after, as [`ServedTable::read`] does, so a mapped file that changed meanwhile
    /// gives a `table-changed` problem, never its new bytes.
    pub fn copy_file_bytes(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, ApiError> {
        let copy = self.table.file_bytes()[range].to_vec();
        self.intact()?;
        Ok(copy)
    }

    /// The size of the file.
    pub fn file_size(&self) -> u64 {
        self.table.size()
    }
}

/// What tells one version of a file from another without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileIdentity {
    device: u64,
    inode: u64,
    size: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    fn of(path: &Path) -> std::io::Result<FileIdentity> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        Ok(FileIdentity { device, inode, size: meta.len(), modified: meta.modified().ok() })
    }
}

/// The tables served at one moment, and the files that were refused.
#[derive(Default)]
pub struct TableSet {
    /// By closed game (the lookup both binaries share).
    pub tables: Tablebase<Arc<ServedTable>>,
    /// Files refused, with the reason.
    pub rejected: Vec<(PathBuf, String)>,
}

impl TableSet {
    /// Reads every table of `dir` into a new set, smallest first: private copies while the
    /// copy budget lasts, guarded mappings after. Tables whose file is unchanged since
    /// `previous` was read are taken over as they are; the others are read and checked (the
    /// checksum too, when `loading.verify_checksums`).
    pub fn load(dir: &Path, loading: TableLoading, previous: Option<&TableSet>) -> Result<TableSet, TableError> {
        let mut set = TableSet::default();
        let mut files = Vec::new();
        for path in TableDir::new(dir).files()? {
            let identity = FileIdentity::of(&path).map_err(|e| TableError::Io(path.clone(), e))?;
            files.push((path, identity));
        }
        files.sort_by_key(|(path, identity)| (identity.size, path.clone()));
        let mut copied = 0u64;
        for (path, identity) in files {
            // The same file under the same name: a renamed file must pass the name check again.
            let unchanged = previous.and_then(|p| {
                p.tables
                    .tables()
                    .map(|(_, t)| t)
                    .find(|t| t.source == identity && TableDir::new(dir).path_of(t.table.header().material) == path)
            });
            let served = match unchanged {
                Some(table) => Ok(Arc::clone(table)),
                None if copied + identity.size <= loading.copy_budget => {
                    serve_copy(&path, identity, loading.verify_checksums).map(Arc::new)
                }
                None => serve_mapped(&path, identity, loading.verify_checksums).map(Arc::new),
            };
            match served {
                Ok(table) => {
                    if table.is_copy() {
                        copied += table.file_size();
                    }
                    set.tables.insert(table.table.header().material, table);
                }
                Err(error) => {
                    // A damaged replacement does not take the verified table it replaces out
                    // of service: that one goes on serving (a private copy, or a mapping
                    // still intact), and health reports the refused file.
                    let kept = previous.and_then(|p| {
                        p.tables.tables().map(|(_, t)| t).find(|t| {
                            TableDir::new(dir).path_of(t.table.header().material) == path && t.intact().is_ok()
                        })
                    });
                    match kept {
                        Some(table) => {
                            tracing::error!(file = %path.display(), %error, "replacement table refused; the verified one it would replace is still served");
                            if table.is_copy() {
                                copied += table.file_size();
                            }
                            set.tables.insert(table.table.header().material, Arc::clone(table));
                            set.rejected.push((path, format!("{error}; the table verified before is still served")));
                        }
                        None => {
                            tracing::error!(file = %path.display(), %error, "table refused");
                            set.rejected.push((path, error.to_string()));
                        }
                    }
                }
            }
        }
        Ok(set)
    }

    /// Served tables whose mapped file changed since it was verified, with the reason.
    pub fn changed(&self) -> Vec<(Material, String)> {
        self.tables
            .tables()
            .filter_map(|(material, table)| match table.intact() {
                Err(ApiError::TableChanged { reason, .. }) => Some((*material, reason)),
                _ => None,
            })
            .collect()
    }
}

/// Copies a table file into sealed memory, checks the copy, and prepares it for serving.
fn serve_copy(path: &Path, identity: FileIdentity, verify: bool) -> Result<ServedTable, TableError> {
    let bytes = private_copy(path).map_err(|e| TableError::Io(path.to_path_buf(), e))?;
    prepare(path, identity, verify, bytes, Holding::Copy)
}

/// Maps a table file under guard, checks it, and prepares it for serving.
fn serve_mapped(path: &Path, identity: FileIdentity, verify: bool) -> Result<ServedTable, TableError> {
    let io = |e| TableError::Io(path.to_path_buf(), e);
    let (map, guard) = Guard::map(shogi4_tablebase::open_regular_file(path).map_err(io)?).map_err(io)?;
    let served = prepare(path, identity, verify, map, Holding::Mapped(guard))?;
    // A change while it was being verified.
    served.intact().map_err(|e| io(std::io::Error::other(e.problem().detail)))?;
    tracing::info!(file = %path.display(), bytes = served.file_size(), "served from its file (beyond the copy budget)");
    Ok(served)
}

fn prepare(
    path: &Path,
    identity: FileIdentity,
    verify: bool,
    bytes: Mmap,
    holding: Holding,
) -> Result<ServedTable, TableError> {
    let table = Table::new(bytes)?;
    TableDir::check_name(path, &table)?;
    let material = table.header().material;
    if verify {
        table.verify_checksum()?;
    }
    let h = table.header();
    // Weak: the same answer is sent as identity, gzip or brotli bytes; and derived from the
    // data alone, so it changes exactly when the table does.
    let etag = HeaderValue::from_str(&format!("W/\"{:016x}\"", h.checksum)).expect("ASCII");
    Ok(ServedTable {
        holding,
        sha256: std::sync::OnceLock::new(),
        info: TableInfo::new(&table),
        etag,
        probes: crate::metrics::probe_counter(&material.to_string()),
        table,
        source: identity,
    })
}

impl ServedTable {
    /// SHA-256 of the served bytes, hex; the first call hashes the whole file (run it off the
    /// async workers). Over the bytes that are served, which are the bytes verified: a
    /// download can never carry a file that changed on disk since (a private copy), and a
    /// mapped file that changes is caught by the guard before its bytes leave.
    pub fn sha256(&self) -> &str {
        self.sha256.get_or_init(|| hex(&sha2::Sha256::digest(self.table.file_bytes())))
    }
}

/// Lowercase hex, as `sha256sum` prints it.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file's bytes in private anonymous memory, read-only from then on: no change to the
/// file can reach them.
fn private_copy(path: &Path) -> std::io::Result<Mmap> {
    let mut file = shogi4_tablebase::open_regular_file(path)?;
    let size = usize::try_from(file.metadata()?.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "file too large for this machine"))?;
    let mut copy = MmapMut::map_anon(size.max(1))?;
    file.read_exact(&mut copy[..size])?;
    let copy = copy.make_read_only()?;
    Ok(copy)
}
