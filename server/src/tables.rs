//! The served tables as one immutable set, swapped whole when the directory is re-read
//! (`SIGHUP`): requests in flight finish on the set they started with, new ones see the new
//! set.
//!
//! A served table is never the file itself. Each file is read into private anonymous memory
//! (a read-only anonymous mapping) and its checksum verified on that copy; what is served is
//! the copy. So whatever later happens to the file (truncated, overwritten in place, deleted,
//! replaced), the server neither dies of a vanished page (the SIGBUS of a shrunk mapped file)
//! nor serves a byte it did not verify. The cost is memory: every served table is resident
//! (131 MB for the default set, 525 MB for KKCFRT; the kernel may swap it), and a read at load
//! time (about a second per GB).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::http::HeaderValue;
use memmap2::{Mmap, MmapMut};
use shogi4_api::TableInfo;
use shogi4_engine::Material;
use shogi4_tablebase::{Table, TableDir, TableError};

/// One served table and what a handler needs besides its values.
pub struct ServedTable {
    /// The table, over a private sealed copy of its file.
    pub table: Table<Mmap>,
    /// Its `GET /tables` entry.
    pub info: TableInfo,
    /// `ETag` of every answer from this table: a weak validator from its checksum.
    pub etag: HeaderValue,
    /// `tablebase_probes_total{material}`.
    pub probes: metrics::Counter,
    /// The file it was copied from, as it was then: a reload copies only what changed.
    source: FileIdentity,
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
    /// By closed game.
    pub tables: BTreeMap<Material, Arc<ServedTable>>,
    /// Files refused, with the reason.
    pub rejected: Vec<(PathBuf, String)>,
}

impl TableSet {
    /// Reads every table of `dir` into a new set. Tables whose file is unchanged since
    /// `previous` was read are taken over as they are; the others are copied and checked
    /// (the checksum too, when `verify`).
    pub fn load(dir: &Path, verify: bool, previous: Option<&TableSet>) -> Result<TableSet, TableError> {
        let mut set = TableSet::default();
        for path in TableDir::new(dir).files()? {
            let identity = FileIdentity::of(&path).map_err(|e| TableError::Io(path.clone(), e))?;
            // The same file under the same name: a renamed file must pass the name check again.
            let unchanged = previous.and_then(|p| {
                p.tables
                    .values()
                    .find(|t| t.source == identity && TableDir::new(dir).path_of(t.table.header().material) == path)
            });
            let served = match unchanged {
                Some(table) => Ok(Arc::clone(table)),
                None => serve_copy(&path, identity, verify).map(Arc::new),
            };
            match served {
                Ok(table) => {
                    set.tables.insert(table.table.header().material, table);
                }
                Err(error) => {
                    tracing::error!(file = %path.display(), %error, "table refused");
                    set.rejected.push((path, error.to_string()));
                }
            }
        }
        Ok(set)
    }
}

/// Copies a table file into sealed memory, checks the copy, and prepares it for serving.
fn serve_copy(path: &Path, identity: FileIdentity, verify: bool) -> Result<ServedTable, TableError> {
    let io = |e| TableError::Io(path.to_path_buf(), e);
    let bytes = private_copy(path).map_err(io)?;
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
        info: TableInfo::new(&table),
        etag,
        probes: crate::metrics::probe_counter(&material.to_string()),
        table,
        source: identity,
    })
}

/// The file's bytes in private anonymous memory, read-only from then on: no change to the
/// file can reach them.
fn private_copy(path: &Path) -> std::io::Result<Mmap> {
    let mut file = std::fs::File::open(path)?;
    let size = usize::try_from(file.metadata()?.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "file too large for this machine"))?;
    let mut copy = MmapMut::map_anon(size.max(1))?;
    file.read_exact(&mut copy[..size])?;
    let copy = copy.make_read_only()?;
    Ok(copy)
}
