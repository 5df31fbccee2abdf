//! Reading a table: over any byte slice, or a memory-mapped file. One O(1) lookup per probe.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use memmap2::Mmap;
use rayon::prelude::*;
use shogi4_engine::{Children, MaterialIndex, Move, Position};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::compressed::{DecodeError, Decoder};
use crate::format::{decode, layout, CorruptValue, Damage, FormatError, Header, TableError};
use crate::value::{Value, MAX_INLINE_DTW, OVERFLOW_CODE};

/// A validated table over bytes `B` (a `Vec<u8>`, or an [`Mmap`] of the file), plain or
/// compressed.
pub struct Table<B> {
    bytes: B,
    header: Header,
    index: MaterialIndex,
    /// For a compressed table, its parsed section.
    decoder: Option<Decoder>,
}

impl<B: AsRef<[u8]>> Table<B> {
    /// Checks the header and the sizes (not the checksum: see [`Table::verify_checksum`]).
    pub fn new(bytes: B) -> Result<Table<B>, FormatError> {
        let header = Header::parse(bytes.as_ref())?;
        let index = MaterialIndex::new(header.material);
        let decoder = match header.compressed_bytes {
            Some(size) => {
                let start = header.values_offset as usize;
                let section = &bytes.as_ref()[start..start + size as usize];
                Some(Decoder::parse(section, header.slots).map_err(FormatError::Compressed)?)
            }
            None => None,
        };
        Ok(Table { bytes, header, index, decoder })
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

    /// Whether the table is compressed (format version 4).
    pub fn is_compressed(&self) -> bool {
        self.decoder.is_some()
    }

    /// The value bytes, one per slot, of a plain table; `None` for a compressed one (see
    /// [`Table::decompressed_values`]).
    pub fn values(&self) -> Option<&[u8]> {
        if self.decoder.is_some() {
            return None;
        }
        let start = self.header.values_offset as usize;
        Some(&self.bytes.as_ref()[start..start + self.header.slots as usize])
    }

    /// Every value byte, as a plain table of the same game holds them: the bytes a compressed
    /// table stores, with the rules' win in 1 wherever the rules decide the slot.
    pub fn decompressed_values(&self) -> Result<std::borrow::Cow<'_, [u8]>, FormatError> {
        let mut values = self.stored_values()?;
        self.fill_decided_slots(&mut values);
        Ok(values)
    }

    /// Every stored byte: a plain table's values; a compressed table's bytes, whatever the
    /// compressor put in the slots the rules decide.
    fn stored_values(&self) -> Result<std::borrow::Cow<'_, [u8]>, FormatError> {
        match &self.decoder {
            None => Ok(std::borrow::Cow::Borrowed(self.values().expect("a plain table"))),
            Some(decoder) => {
                Ok(std::borrow::Cow::Owned(decoder.decode_all(self.section()).map_err(FormatError::Compressed)?))
            }
        }
    }

    /// Of a compressed table, the stored bytes made the values: the rules' win in 1 wherever
    /// they decide the slot.
    fn fill_decided_slots(&self, values: &mut std::borrow::Cow<'_, [u8]>) {
        if self.decoder.is_some() {
            self.fill_decided(values.to_mut());
        }
    }

    /// The rules' win in 1 written wherever they decide the slot.
    fn fill_decided(&self, values: &mut [u8]) {
        self.rules_decided(&crate::Silent).write_win_in_one(values);
    }

    /// The slots whose side to move can capture the royal, which the rules decide: in
    /// parallel, a bit each.
    fn rules_decided(&self, progress: &dyn crate::Progress) -> DecidedSlots {
        const CHUNK: usize = 1 << 16;
        let slots = self.header.slots as usize;
        let index = &self.index;
        let mut words = vec![0u64; slots.div_ceil(64)];
        words.par_chunks_mut(CHUNK / 64).enumerate().for_each(|(c, chunk)| {
            let first = c * CHUNK;
            let end = (first + CHUNK).min(slots);
            index.for_each_position(first as u64..end as u64, |slot, position| {
                if position.can_capture_royal() {
                    let at = slot as usize - first;
                    chunk[at / 64] |= 1 << (at % 64);
                }
            });
            progress.advance((end - first) as u64);
        });
        DecidedSlots { words }
    }

    /// The overflow table's entries, (slot, distance), in slot order.
    fn overflow_entries(&self) -> Vec<(u64, u32)> {
        (0..self.header.overflow_entries as usize).map(|i| self.overflow_entry(i)).collect()
    }

    fn section(&self) -> &[u8] {
        let start = self.header.values_offset as usize;
        &self.bytes.as_ref()[start..start + self.header.compressed_bytes.unwrap_or(0) as usize]
    }

    /// The stored byte of `slot`. Of a compressed table, only meaningful where the rules do
    /// not decide the slot.
    #[inline]
    fn stored(&self, slot: u64) -> Result<u8, CorruptValue> {
        match &self.decoder {
            None => Ok(self.bytes.as_ref()[self.header.values_offset as usize + slot as usize]),
            Some(decoder) => decoder.byte(self.section(), slot).map_err(|e| CorruptValue {
                slot,
                damage: match e {
                    DecodeError::DamagedBlock(block) => Damage::Block(block),
                    DecodeError::Malformed(_) => Damage::Block(u64::MAX),
                },
            }),
        }
    }

    /// The stored value of `slot`, which the rules do not decide (the audit's read of a child
    /// that does not leave the royal en prise).
    #[inline]
    pub(crate) fn stored_value(&self, slot: u64) -> Result<Value, CorruptValue> {
        decode(self.stored(slot)?, slot, |s| self.overflow_dtw(s))
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

    /// The value of `slot`; an error only for a damaged table (see [`CorruptValue`]). Of a
    /// compressed table this builds the slot's position, to ask the rules first: where the
    /// position is known, [`Table::value_at`] or [`Table::value_of`] is cheaper.
    #[inline]
    pub fn value(&self, slot: u64) -> Result<Value, CorruptValue> {
        if self.decoder.is_some() && self.index.position_at(slot).can_capture_royal() {
            return Ok(Value::Win(1));
        }
        self.stored_value(slot)
    }

    /// The value of `slot`, whose position is `position`.
    #[inline]
    pub fn value_at(&self, slot: u64, position: &Position) -> Result<Value, CorruptValue> {
        if self.decoder.is_some() && position.can_capture_royal() {
            return Ok(Value::Win(1));
        }
        self.stored_value(slot)
    }

    /// The value of `position`, which must belong to this table's closed game.
    pub fn value_of(&self, position: &Position) -> Result<Value, CorruptValue> {
        debug_assert_eq!(position.material(), self.header.material);
        self.value_at(self.index.index_of(position), position)
    }

    /// The value, for its side to move, of the position after `mv` (a legal move of `parent`
    /// that does not capture the royal), `children` being `parent`'s children view: the rules
    /// answer where the move leaves the mover's royal en prise, the table elsewhere.
    #[inline]
    pub fn value_after(&self, children: &Children<'_>, parent: &Position, mv: Move) -> Result<Value, CorruptValue> {
        if self.decoder.is_some() && parent.exposes_royal(mv) {
            return Ok(Value::Win(1));
        }
        self.stored_value(children.index_after(mv))
    }

    /// Prefetches the byte of `slot` of a plain table (a compressed one reads a block anyway).
    #[inline]
    pub fn prefetch(&self, slot: u64) {
        if let Some(values) = self.values() {
            crate::memory::prefetch(&values[slot as usize]);
        }
    }

    /// The game's longest win and its first example: the largest odd distance in the
    /// histogram, and the canonical position of the lowest slot that holds it. `None` when no
    /// position is a win. A scan of the value bytes, so callers keep the answer.
    pub fn longest_win(&self) -> Option<(u32, Position)> {
        let histogram = &self.header.statistics.histogram;
        let dtw = (1..histogram.len()).rev().find(|&d| d % 2 == 1 && histogram[d] > 0)? as u32;
        let slot = if let Some(decoder) = &self.decoder {
            decoder.longest_win_slot?
        } else if dtw <= MAX_INLINE_DTW {
            let code = Value::Win(dtw).encode();
            self.values()?.iter().position(|&b| b == code)? as u64
        } else {
            (0..self.header.overflow_entries as usize).map(|i| self.overflow_entry(i)).find(|&(_, d)| d == dtw)?.0
        };
        Some((dtw, self.index.position_at(slot)))
    }

    /// The same table as a compressed file (format version 4), whole: every value the same,
    /// overflow distances included, read back and checked against this table before it is
    /// handed over. Works from a plain or a compressed table.
    pub fn to_compressed(&self, progress: &dyn crate::Progress) -> Result<Vec<u8>, FormatError> {
        self.to_compressed_in_parts(crate::compressed::DEFAULT_PARTS, progress)
    }

    /// [`Table::to_compressed`] with `parts` parts per block (1 to
    /// [`crate::compressed::MAX_PARTS`]): more make faster reads and a larger file.
    pub fn to_compressed_in_parts(&self, parts: usize, progress: &dyn crate::Progress) -> Result<Vec<u8>, FormatError> {
        let mut values = self.stored_values()?;
        progress.phase("slots the rules decide", values.len() as u64);
        let decided = self.rules_decided(progress);
        progress.finish_phase();
        // A compressed source's stored bytes made its values (`decompressed_values`) with this
        // pass of the rules, not a second one.
        if self.decoder.is_some() {
            decided.write_win_in_one(values.to_mut());
        }
        let longest = self.longest_win().map(|(_, position)| self.index.index_of(&position));
        let section = crate::compressed::encode(&values, |slot| decided.contains(slot), longest, parts, progress);
        let overflow = self.overflow_entries();
        let mut header = Header::unsummed(self.header.material, self.header.slots, &self.header.statistics, &overflow);
        header.compressed_bytes = Some(section.len() as u64);
        let copy = Table::new(header.summed(&section, &overflow).file_with(&section, &overflow))?;
        drop(section);
        // Read back through the reader's checks (the file's checksum, the index's, every
        // block's, the overflow table) before it is handed over, each block compared with the
        // source as it is decoded: the whole table decoded at once would be as large as the
        // source again. The slots the rules decide need no second pass of the rules, since
        // `decided` says where they are.
        copy.check_file_checksum()?;
        let decoder = copy.decoder.as_ref().expect("a compressed table has a decoder");
        let (escapes, differs) = (AtomicU64::new(0), AtomicBool::new(false));
        let win_in_one = Value::Win(1).encode();
        decoder
            .for_each_block(copy.section(), |first, stored| {
                escapes.fetch_add(stored.iter().filter(|&&b| b == OVERFLOW_CODE).count() as u64, Relaxed);
                let same = stored.iter().zip(first as usize..).all(|(&stored, slot)| {
                    let expected = if decided.contains(slot) { win_in_one } else { stored };
                    values[slot] == expected
                });
                if !same {
                    differs.store(true, Relaxed);
                }
            })
            .map_err(FormatError::Compressed)?;
        copy.check_overflow(escapes.into_inner(), |slot| {
            decoder.byte(copy.section(), slot).map_err(FormatError::Compressed)
        })?;
        if differs.into_inner() {
            return Err(FormatError::InconsistentHeader("the compressed values differ from the source's"));
        }
        Ok(copy.bytes)
    }

    /// The same table as a plain file (format version 1), whole: for a table that came from a
    /// plain one, that file byte for byte. Read back and checked before it is handed over.
    pub fn to_plain(&self) -> Result<Vec<u8>, FormatError> {
        // The values are decoded straight into the file (a 5-piece table's are gigabytes):
        // each block was checked against its checksum as it was decoded, and what is checked
        // below is that the file holds them where its header says, intact.
        let overflow = self.overflow_entries();
        let header = Header::unsummed(self.header.material, self.header.slots, &self.header.statistics, &overflow);
        let body = header.values_offset as usize..(header.values_offset + header.slots) as usize;
        let file = header.summed_file_written_in_place(&overflow, |values| self.values_into(values))?;
        let written = xxh3_64(&file[body]);
        let copy = Table::new(file)?;
        if xxh3_64(&copy.verified_values()?) != written {
            return Err(FormatError::InconsistentHeader("the plain values are not where they were written"));
        }
        Ok(copy.bytes)
    }

    /// The values (those of [`Table::decompressed_values`]) written into `out`, a byte per slot.
    fn values_into(&self, out: &mut [u8]) -> Result<(), FormatError> {
        match &self.decoder {
            None => out.copy_from_slice(self.values().expect("a plain table")),
            Some(decoder) => {
                decoder.decode_into(self.section(), out).map_err(FormatError::Compressed)?;
                self.fill_decided(out);
            }
        }
        Ok(())
    }

    /// Recomputes the checksum of the whole file and checks the overflow table against the
    /// value bytes.
    pub fn verify_checksum(&self) -> Result<(), FormatError> {
        self.verified_values().map(|_| ())
    }

    /// What [`Table::verify_checksum`] checks, handing back the value bytes it decoded on the
    /// way (those of [`Table::decompressed_values`]), so that a caller who wants both decodes
    /// once.
    pub fn verified_values(&self) -> Result<std::borrow::Cow<'_, [u8]>, FormatError> {
        let mut values = self.verified_stored_values()?;
        self.fill_decided_slots(&mut values);
        // The compressor never stores the overflow escape where the rules decide: an entry
        // there would have lost its 255 byte to the filling (a plain table has none to lose).
        if self.decoder.is_some()
            && values.iter().filter(|&&b| b == OVERFLOW_CODE).count() as u64 != self.header.overflow_entries
        {
            return Err(FormatError::BadOverflow("entry for a slot the rules decide"));
        }
        Ok(values)
    }

    /// The checks of [`Table::verified_values`] but the last, on the stored bytes (those of
    /// [`Table::stored_values`]), which it hands back.
    fn verified_stored_values(&self) -> Result<std::borrow::Cow<'_, [u8]>, FormatError> {
        self.check_file_checksum()?;
        // Of a compressed table, decoding checks every block against its checksum too.
        let values = self.stored_values()?;
        let escapes = values.iter().filter(|&&b| b == OVERFLOW_CODE).count() as u64;
        self.check_overflow(escapes, |slot| Ok(values[slot as usize]))?;
        Ok(values)
    }

    /// The checksum over the whole file (its own field read as zeros).
    fn check_file_checksum(&self) -> Result<(), FormatError> {
        let bytes = self.bytes.as_ref();
        let mut hasher = Xxh3::new();
        hasher.update(&bytes[..layout::CHECKSUM.start]);
        hasher.update(&[0u8; 8]);
        hasher.update(&bytes[layout::CHECKSUM.end..]);
        let found = hasher.digest();
        if found != self.header.checksum {
            return Err(FormatError::Checksum { expected: self.header.checksum, found });
        }
        Ok(())
    }

    /// The overflow table against the stored bytes (`escapes` of them the overflow escape,
    /// `stored(slot)` one of them): an entry for each escape, each for a slot holding one, with
    /// a distance too long for a byte, in slot order.
    fn check_overflow(&self, escapes: u64, stored: impl Fn(u64) -> Result<u8, FormatError>) -> Result<(), FormatError> {
        if escapes != self.header.overflow_entries {
            return Err(FormatError::BadOverflow("entry count differs from the number of 255 bytes"));
        }
        for i in 0..self.header.overflow_entries as usize {
            let (slot, dtw) = self.overflow_entry(i);
            if slot >= self.header.slots || stored(slot)? != OVERFLOW_CODE || dtw <= MAX_INLINE_DTW {
                return Err(FormatError::BadOverflow("entry for a slot without a 255 byte, or a short distance"));
            }
            if i > 0 && self.overflow_entry(i - 1).0 >= slot {
                return Err(FormatError::BadOverflow("entries not sorted by slot"));
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
    Ok(Table::new(map)?)
}

/// A set of slots, a bit each: those the rules decide.
struct DecidedSlots {
    words: Vec<u64>,
}

impl DecidedSlots {
    #[inline]
    fn contains(&self, slot: usize) -> bool {
        self.words[slot / 64] >> (slot % 64) & 1 == 1
    }

    /// The rules' win in 1 written into each of these slots of `values`.
    fn write_win_in_one(&self, values: &mut [u8]) {
        let win_in_one = Value::Win(1).encode();
        values.par_iter_mut().enumerate().for_each(|(slot, value)| {
            if self.contains(slot) {
                *value = win_in_one;
            }
        });
    }
}
