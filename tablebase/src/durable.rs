//! Crash-safe files: the one way the workspace writes a file that must never be seen half
//! written (tables, compressed tables, checkpoints, the distributed solve's shares, proof
//! exports).
//!
//! The bytes go to a temporary file beside the final one, `.NAME.tmp-PID` (hidden, and in the
//! same directory so that the rename cannot cross file systems). It is created afresh, never
//! opened if it exists: a leftover of a crashed write with the same process id is removed
//! first, so nobody else's file is ever written through. [`DurableFile::commit`] syncs it,
//! renames it over the final name and syncs the directory, so that after a crash either the
//! old file or the whole new one is there. Dropped uncommitted, it removes its temporary file.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file written under a temporary name until [`DurableFile::commit`] puts it in place.
pub struct DurableFile {
    file: File,
    temporary: PathBuf,
    path: PathBuf,
    committed: bool,
}

impl DurableFile {
    /// Starts the file that will be `path`.
    pub fn create(path: &Path) -> io::Result<DurableFile> {
        let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
        let temporary = directory_of(path).join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(&temporary)?;
        Ok(DurableFile { file, temporary, path: path.to_path_buf(), committed: false })
    }

    /// The file being written (reads see what was written so far).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Where it will be once committed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where it is being written.
    pub fn temporary(&self) -> &Path {
        &self.temporary
    }

    /// Syncs the file, renames it to its final name and syncs the rename. Returns the path.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        self.file.sync_all()?;
        std::fs::rename(&self.temporary, &self.path)?;
        self.committed = true;
        File::open(directory_of(&self.path))?.sync_all()?;
        Ok(std::mem::take(&mut self.path))
    }
}

impl Drop for DurableFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

/// Whether a command that writes files starting with `magic` may replace `path`: yes if there
/// is nothing there or a regular file that starts with `magic` (one such command wrote it);
/// otherwise an error that says why, so that a database, a device node, a FIFO, a directory, a
/// link or any other file is never replaced by a mistaken path.
pub fn replaceable(path: &Path, magic: &[u8]) -> io::Result<()> {
    let refuse = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} {why}; refusing to replace it (remove it first if it should go)", path.display()),
        ))
    };
    let metadata = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        other => other?,
    };
    if !metadata.file_type().is_file() {
        return refuse("exists and is not a regular file");
    }
    let mut start = vec![0u8; magic.len()];
    let read = File::open(path).and_then(|mut f| io::Read::read_exact(&mut f, &mut start));
    if read.is_err() || start != magic {
        return refuse("holds something this command did not write");
    }
    Ok(())
}

/// Writes `parts` one after the other to `path` as a [`DurableFile`].
pub fn write_atomically(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    let durable = DurableFile::create(path)?;
    let mut writer = BufWriter::with_capacity(1 << 20, durable.file());
    for part in parts {
        writer.write_all(part)?;
    }
    writer.flush()?;
    drop(writer);
    durable.commit().map(drop)
}

/// The directory a file of `path` lives in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_missing_files_and_files_of_the_same_kind_are_replaceable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        assert!(replaceable(&path, b"MAGIC").is_ok(), "nothing there");
        std::fs::write(&path, b"MAGIC and more").unwrap();
        assert!(replaceable(&path, b"MAGIC").is_ok(), "one of ours");
        std::fs::write(&path, b"redb database").unwrap();
        assert!(replaceable(&path, b"MAGIC").is_err(), "another file");
        std::fs::write(&path, b"").unwrap();
        assert!(replaceable(&path, b"MAGIC").is_err(), "an empty file");
        assert!(replaceable(dir.path(), b"MAGIC").is_err(), "a directory");
        assert!(replaceable(Path::new("/dev/null"), b"MAGIC").is_err(), "a device");
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            assert!(replaceable(&link, b"MAGIC").is_err(), "a link");
        }
    }

    #[test]
    fn nothing_appears_until_committed_and_an_abandoned_write_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("shogi4-durable-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("file.bin");
        std::fs::write(&path, b"old").unwrap();
        let durable = DurableFile::create(&path).unwrap();
        let mut out = durable.file();
        out.write_all(b"new bytes").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(durable.temporary().exists());
        let temporary = durable.temporary().to_path_buf();
        drop(durable);
        assert!(!temporary.exists());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        write_atomically(&path, &[b"new ", b"bytes"]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new bytes");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["file.bin"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
