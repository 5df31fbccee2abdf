//! Reading a table: over any byte slice, or a memory-mapped file. One O(1) lookup per probe.

use std::path::Path;

use memmap2::Mmap;
use shogi4_engine::{MaterialIndex, Position};
use xxhash_rust::xxh3::Xxh3;

use crate::format::{decode, layout, CorruptValue, Header, TableError};
use crate::value::{Value, MAX_INLINE_DTW, OVERFLOW_CODE};

/// A validated table over bytes `B` (a `Vec<u8>`, or an [`Mmap`] of the file).
pub struct Table<B> {
    bytes: B,
    header: Header,
    index: MaterialIndex,
}

impl<B: AsRef<[u8]>> Table<B> {
    /// Checks the header and the sizes (not the checksum: see [`Table::verify_checksum`]).
    pub fn new(bytes: B) -> Result<Table<B>, TableError> {
        let header = Header::parse(bytes.as_ref())?;
        let index = MaterialIndex::new(header.material);
        Ok(Table { bytes, header, index })
    }

    /// The header: material, slot count, statistics, checksum.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The dense index of the table's closed game.
    pub fn index(&self) -> &MaterialIndex {
        &self.index
    }

    /// Size of the table in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.as_ref().len() as u64
    }

    /// The whole file, as it was checked.
    pub fn file_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The value bytes, one per slot.
    pub fn values(&self) -> &[u8] {
        let start = self.header.values_offset as usize;
        &self.bytes.as_ref()[start..start + self.header.slots as usize]
    }

    fn overflow(&self) -> &[u8] {
        &self.bytes.as_ref()[self.header.overflow_offset() as usize..]
    }

    fn overflow_entry(&self, i: usize) -> (u64, u32) {
        let entry = &self.overflow()[layout::OVERFLOW_ENTRY * i..layout::OVERFLOW_ENTRY * (i + 1)];
        (
            u64::from_le_bytes(entry[..8].try_into().expect("8 bytes")),
            u32::from_le_bytes(entry[8..12].try_into().expect("4 bytes")),
        )
    }

    fn overflow_dtw(&self, slot: u64) -> Option<u32> {
        let (mut low, mut high) = (0usize, self.header.overflow_entries as usize);
        while low < high {
            let mid = (low + high) / 2;
            let (s, dtw) = self.overflow_entry(mid);
            match s.cmp(&slot) {
                std::cmp::Ordering::Equal => return Some(dtw),
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
            }
        }
        None
    }

    /// The value of `slot`; an error only for a damaged table (see [`CorruptValue`]).
    #[inline]
    pub fn value(&self, slot: u64) -> Result<Value, CorruptValue> {
        decode(self.values()[slot as usize], slot, |s| self.overflow_dtw(s))
    }

    /// The value of `position`, which must belong to this table's closed game.
    pub fn value_of(&self, position: &Position) -> Result<Value, CorruptValue> {
        debug_assert_eq!(position.material(), self.header.material);
        self.value(self.index.index_of(position))
    }

    /// The game's longest win and its first example: the largest odd distance in the
    /// histogram, and the canonical position of the lowest slot that holds it. `None` when no
    /// position is a win. A scan of the value bytes, so callers keep the answer.
    pub fn longest_win(&self) -> Option<(u32, Position)> {
        let histogram = &self.header.statistics.histogram;
        let dtw = (1..histogram.len()).rev().find(|&d| d % 2 == 1 && histogram[d] > 0)? as u32;
        let slot = if dtw <= MAX_INLINE_DTW {
            let code = Value::Win(dtw).encode();
            self.values().iter().position(|&b| b == code)? as u64
        } else {
            (0..self.header.overflow_entries as usize).map(|i| self.overflow_entry(i)).find(|&(_, d)| d == dtw)?.0
        };
        Some((dtw, self.index.position_at(slot)))
    }

    /// Recomputes the checksum of the whole file and checks the overflow table against the
    /// value bytes.
    pub fn verify_checksum(&self) -> Result<(), TableError> {
        let bytes = self.bytes.as_ref();
        let mut hasher = Xxh3::new();
        hasher.update(&bytes[..layout::CHECKSUM.start]);
        hasher.update(&[0u8; 8]);
        hasher.update(&bytes[layout::CHECKSUM.end..]);
        let found = hasher.digest();
        if found != self.header.checksum {
            return Err(TableError::Checksum { expected: self.header.checksum, found });
        }
        let escapes = self.values().iter().filter(|&&b| b == OVERFLOW_CODE).count() as u64;
        if escapes != self.header.overflow_entries {
            return Err(TableError::BadOverflow("entry count differs from the number of 255 bytes"));
        }
        for i in 0..self.header.overflow_entries as usize {
            let (slot, dtw) = self.overflow_entry(i);
            if slot >= self.header.slots || self.values()[slot as usize] != OVERFLOW_CODE || dtw <= MAX_INLINE_DTW {
                return Err(TableError::BadOverflow("entry for a slot without a 255 byte, or a short distance"));
            }
            if i > 0 && self.overflow_entry(i - 1).0 >= slot {
                return Err(TableError::BadOverflow("entries not sorted by slot"));
            }
        }
        Ok(())
    }
}

/// A table file, memory-mapped.
pub type MappedTable = Table<Mmap>;

/// Opens a file for reading if it is a regular file: anything else (a FIFO named like a
/// table, a device, a directory) is refused without blocking, since it is opened non-blocking
/// and checked on the handle itself (no gap between a check and the open).
pub fn open_regular_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

/// Opens and memory-maps a table file, checking its header (not its checksum).
pub fn open_table(path: &Path) -> Result<MappedTable, TableError> {
    let io = |e| TableError::Io(path.to_path_buf(), e);
    let file = open_regular_file(path).map_err(io)?;
    // SAFETY: the map is read-only. Tables are written to a temporary file and renamed into
    // place, never modified where they stand, so the mapped bytes do not change under us as
    // long as nobody edits the file by hand while it is served.
    let map = unsafe { Mmap::map(&file) }.map_err(io)?;
    Table::new(map)
}
