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

use std::io::Read;
use std::path::{Path, PathBuf};

use shogi4_engine::{Material, MaterialIndex};
use shogi4_tablebase::{index_fingerprint, VERSION};
use xxhash_rust::xxh3::Xxh3;

use crate::share::Share;
use crate::ClusterError;

const MAGIC: &[u8; 8] = b"S4SHARE\x02";
/// Magic, format, material, fingerprint, peers, worker, range start and end, level, wins in 1,
/// overflow entries.
const HEADER: usize = 8 + 4 + 16 + 8 + 4 + 4 + 8 + 8 + 4 + 8 + 8;

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
    fn header(&self, share: &Share, level: u32, wins_in_one: u64) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(HEADER);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        let mut name = [0u8; 16];
        let material = self.index.material().to_string();
        name[..material.len()].copy_from_slice(material.as_bytes());
        bytes.extend_from_slice(&name);
        bytes.extend_from_slice(&index_fingerprint(self.index).to_le_bytes());
        bytes.extend_from_slice(&(self.peers as u32).to_le_bytes());
        bytes.extend_from_slice(&(self.worker as u32).to_le_bytes());
        bytes.extend_from_slice(&share.range.start.to_le_bytes());
        bytes.extend_from_slice(&share.range.end.to_le_bytes());
        bytes.extend_from_slice(&level.to_le_bytes());
        bytes.extend_from_slice(&wins_in_one.to_le_bytes());
        bytes.extend_from_slice(&(share.overflow.len() as u64).to_le_bytes());
        debug_assert_eq!(bytes.len(), HEADER);
        bytes
    }

    /// Writes this worker's share after `level`.
    pub fn write(&self, dir: &Path, share: &Share, level: u32, wins_in_one: u64) -> Result<(), ClusterError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let head = self.header(share, level, wins_in_one);
        let mut tail = Vec::with_capacity(12 * share.overflow.len());
        for &(slot, dtw) in &share.overflow {
            tail.extend_from_slice(&slot.to_le_bytes());
            tail.extend_from_slice(&dtw.to_le_bytes());
        }
        let bits: Vec<u8> = share.decided.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut hasher = Xxh3::new();
        for part in [&head[..], &share.state, &bits, &tail] {
            hasher.update(part);
        }
        let checksum = hasher.digest().to_le_bytes();
        let path = share_path(dir, level, self.worker, self.peers);
        write_atomically(&path, &[&head, &share.state, &bits, &tail, &checksum])
    }

    /// Reads this worker's share after `level` into `share` (which has the right range);
    /// returns its count of wins in 1.
    pub fn read(&self, dir: &Path, share: &mut Share, level: u32) -> Result<u64, ClusterError> {
        let path = share_path(dir, level, self.worker, self.peers);
        let refused = |why: &str| ClusterError::Checkpoint(format!("{}: {why}", path.display()));
        let mut file = std::fs::File::open(&path).map_err(io(&path))?;
        let mut head = vec![0u8; HEADER];
        file.read_exact(&mut head).map_err(|_| refused("shorter than its header"))?;
        let wins_in_one = u64::from_le_bytes(head[HEADER - 16..HEADER - 8].try_into().expect("8 bytes"));
        let entries = u64::from_le_bytes(head[HEADER - 8..].try_into().expect("8 bytes"));
        share.overflow.clear();
        if head[..HEADER - 16] != self.header(share, level, 0)[..HEADER - 16] {
            return Err(refused("written by another solve (game, format, build or cluster size differ)"));
        }
        let mut hasher = Xxh3::new();
        hasher.update(&head);
        let mut bits = vec![0u8; 8 * share.decided.len()];
        file.read_exact(&mut share.state).map_err(|_| refused("cut short"))?;
        file.read_exact(&mut bits).map_err(|_| refused("cut short"))?;
        hasher.update(&share.state);
        hasher.update(&bits);
        for (word, bytes) in share.decided.iter_mut().zip(bits.chunks_exact(8)) {
            *word = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        }
        let mut tail = vec![0u8; 12 * entries as usize];
        file.read_exact(&mut tail).map_err(|_| refused("cut short"))?;
        hasher.update(&tail);
        let mut checksum = [0u8; 8];
        file.read_exact(&mut checksum).map_err(|_| refused("cut short"))?;
        if u64::from_le_bytes(checksum) != hasher.digest() || file.read(&mut [0u8; 1]).map_err(io(&path))? != 0 {
            return Err(refused("damaged (checksum mismatch)"));
        }
        share.overflow = tail
            .chunks_exact(12)
            .map(|e| {
                (u64::from_le_bytes(e[..8].try_into().expect("8")), u32::from_le_bytes(e[8..].try_into().expect("4")))
            })
            .collect();
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
             --cluster and --workers, or delete {} to start afresh)",
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
