//! Checkpoints of a distributed solve, so that a crash or `kill -9` of any process costs the
//! levels since the last checkpoint, not the solve.
//!
//! After a level that all workers agreed to checkpoint, every worker writes its share (state
//! bytes, decided bits, overflow entries, and its count of wins in 1) to its own file,
//! `.GAME.cluster/level-N.worker-W-of-P`, atomically (temporary name, fsync, rename). Once all
//! workers have written (the next round's barrier), the first worker of each process writes
//! that process's **manifest**, `manifest.process-I`, naming level `N`, and removes its
//! workers' files of levels before `N − 1`. Manifests of two processes differ by at most one
//! level (a process can only pass the barrier after `N` once every process has written
//! manifest `N − 1`), so the files of both levels a manifest may name are always kept, and a
//! resumed cluster starts from the last level that every worker can restore.
//!
//! Every file starts with what it belongs to (game, table format, index fingerprint, worker
//! count, worker) and ends with a checksum: another solve's or a damaged file is refused.

use std::path::{Path, PathBuf};

use shogi4_engine::{Material, MaterialIndex};
use shogi4_tablebase::{checkpoint_body, index_fingerprint, material_field, VERSION};

use crate::share::Share;
use crate::ClusterError;

const MAGIC: &[u8; 8] = b"S4SHARE\x02";

/// Where each header field lies, little-endian; the body common to all checkpoints
/// (`shogi4_tablebase::checkpoint_body`) follows.
mod layout {
    use std::ops::Range;
    pub const MAGIC: Range<usize> = 0..8;
    pub const FORMAT: Range<usize> = 8..12;
    pub const MATERIAL: Range<usize> = 12..28;
    pub const FINGERPRINT: Range<usize> = 28..36;
    pub const PEERS: Range<usize> = 36..40;
    pub const WORKER: Range<usize> = 40..44;
    pub const RANGE_START: Range<usize> = 44..52;
    pub const RANGE_END: Range<usize> = 52..60;
    pub const LEVEL: Range<usize> = 60..64;
    /// What the share's identity ends before: the counts below are its contents.
    pub const IDENTITY: Range<usize> = 0..64;
    pub const WINS_IN_ONE: Range<usize> = 64..72;
    pub const OVERFLOW_ENTRIES: Range<usize> = 72..80;
    pub const HEADER: usize = 80;
}

/// Where a solve of `material` in `out` keeps its checkpoints.
pub fn dir_of(out: &Path, material: Material) -> PathBuf {
    out.join(format!(".{material}.cluster"))
}

fn share_path(dir: &Path, level: u32, worker: usize, peers: usize) -> PathBuf {
    dir.join(format!("level-{level}.worker-{worker}-of-{peers}"))
}

fn manifest_path(dir: &Path, process: usize) -> PathBuf {
    dir.join(format!("manifest.process-{process}"))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ClusterError + '_ {
    move |e| ClusterError::Io(path.to_path_buf(), e)
}

/// Writes `parts` to `path` atomically (see `shogi4_tablebase::write_atomically`).
fn write_atomically(path: &Path, parts: &[&[u8]]) -> Result<(), ClusterError> {
    shogi4_tablebase::write_atomically(path, parts).map_err(io(path))
}

/// The identity a share file must carry to be this worker's.
pub struct Identity<'a> {
    /// The game's index.
    pub index: &'a MaterialIndex,
    /// Workers in the cluster.
    pub peers: usize,
    /// This worker.
    pub worker: usize,
}

impl Identity<'_> {
    fn header(&self, share: &Share, level: u32, wins_in_one: u64) -> [u8; layout::HEADER] {
        let mut head = [0u8; layout::HEADER];
        head[layout::MAGIC].copy_from_slice(MAGIC);
        head[layout::FORMAT].copy_from_slice(&VERSION.to_le_bytes());
        head[layout::MATERIAL].copy_from_slice(&material_field(self.index.material()));
        head[layout::FINGERPRINT].copy_from_slice(&index_fingerprint(self.index).to_le_bytes());
        head[layout::PEERS].copy_from_slice(&(self.peers as u32).to_le_bytes());
        head[layout::WORKER].copy_from_slice(&(self.worker as u32).to_le_bytes());
        head[layout::RANGE_START].copy_from_slice(&share.range.start.to_le_bytes());
        head[layout::RANGE_END].copy_from_slice(&share.range.end.to_le_bytes());
        head[layout::LEVEL].copy_from_slice(&level.to_le_bytes());
        head[layout::WINS_IN_ONE].copy_from_slice(&wins_in_one.to_le_bytes());
        head[layout::OVERFLOW_ENTRIES].copy_from_slice(&(share.overflow.len() as u64).to_le_bytes());
        head
    }

    /// Writes this worker's share after `level`.
    pub fn write(&self, dir: &Path, share: &Share, level: u32, wins_in_one: u64) -> Result<(), ClusterError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let head = self.header(share, level, wins_in_one);
        let path = share_path(dir, level, self.worker, self.peers);
        checkpoint_body::write(&path, &head, &share.state, &share.decided, &share.overflow).map_err(io(&path))
    }

    /// Reads this worker's share after `level` into `share` (which has the right range);
    /// returns its count of wins in 1.
    pub fn read(&self, dir: &Path, share: &mut Share, level: u32) -> Result<u64, ClusterError> {
        let path = share_path(dir, level, self.worker, self.peers);
        let refused = |why: &str| ClusterError::Checkpoint(format!("{}: {why}", path.display()));
        let failed = |e| match e {
            checkpoint_body::BodyError::Io(e) => ClusterError::Io(path.clone(), e),
            checkpoint_body::BodyError::Damaged(why) => refused(why),
        };
        let mut head = [0u8; layout::HEADER];
        let reader = checkpoint_body::open(&path, &mut head)
            .map_err(failed)?
            .ok_or_else(|| ClusterError::Io(path.clone(), std::io::ErrorKind::NotFound.into()))?;
        let u64_in = |at: std::ops::Range<usize>| u64::from_le_bytes(head[at].try_into().expect("8 bytes"));
        let (wins_in_one, entries) = (u64_in(layout::WINS_IN_ONE), u64_in(layout::OVERFLOW_ENTRIES));
        share.overflow.clear();
        if head[layout::IDENTITY] != self.header(share, level, 0)[layout::IDENTITY] {
            return Err(refused("written by another solve (game, format, build or cluster size differ)"));
        }
        share.overflow = reader.body(&mut share.state, &mut share.decided, entries).map_err(failed)?;
        Ok(wins_in_one)
    }

    /// The levels this worker could resume from: those its process's manifest allows
    /// (the level it names and the one before) for which this worker's file exists.
    pub fn restorable(&self, dir: &Path, process: usize) -> Result<Vec<u32>, ClusterError> {
        let Some(level) = read_manifest(dir, process, self.index.material(), self.peers)? else {
            return Ok(Vec::new());
        };
        Ok([level.checked_sub(1), Some(level)]
            .into_iter()
            .flatten()
            .filter(|&l| share_path(dir, l, self.worker, self.peers).exists())
            .collect())
    }
}

fn manifest_text(material: Material, peers: usize, level: u32) -> String {
    format!("shogi4 cluster checkpoint\nmaterial {material}\nworkers {peers}\nlevel {level}\n")
}

/// Records that every worker has written its share after `level`, and removes the files of
/// `workers` (this process's) from before `level − 1`.
pub fn commit(
    dir: &Path,
    process: usize,
    workers: std::ops::Range<usize>,
    material: Material,
    peers: usize,
    level: u32,
) -> Result<(), ClusterError> {
    write_atomically(&manifest_path(dir, process), &[manifest_text(material, peers, level).as_bytes()])?;
    for old in 0..level.saturating_sub(1) {
        for worker in workers.clone() {
            let _ = std::fs::remove_file(share_path(dir, old, worker, peers));
        }
    }
    Ok(())
}

/// The level named by this process's manifest, if there is one.
fn read_manifest(dir: &Path, process: usize, material: Material, peers: usize) -> Result<Option<u32>, ClusterError> {
    let path = manifest_path(dir, process);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ClusterError::Io(path, e)),
    };
    let level = text.lines().find_map(|l| l.strip_prefix("level ")).and_then(|l| l.parse::<u32>().ok());
    match level {
        Some(level) if text == manifest_text(material, peers, level) => Ok(Some(level)),
        _ => Err(ClusterError::Checkpoint(format!(
            "{} is not a checkpoint of this solve of {material} on {peers} workers (resume with the same \
             processes and workers per process, or delete {} to start afresh)",
            path.display(),
            dir.display()
        ))),
    }
}

/// Removes the checkpoint files of `workers` (this process's) and its manifest, and the
/// directory once it is empty: the table is written.
pub fn remove(dir: &Path, process: usize, workers: std::ops::Range<usize>, peers: usize) {
    let _ = std::fs::remove_file(manifest_path(dir, process));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Temporary files of a write that a crash cut short too.
            let ours = workers.clone().any(|w| {
                let suffix = format!(".worker-{w}-of-{peers}");
                name.ends_with(&suffix) || name.contains(&format!("{suffix}.tmp-"))
            });
            if ours {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}
