//! The `.s4tb` table file format, version 1: reading and writing the header, and writing whole
//! files atomically. The layout is documented once, in `tables/README.md`; [`layout`] names
//! every field's place, and the reader, the writer and the tests all use those names.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use shogi4_engine::{Material, MaterialIndex};
use xxhash_rust::xxh3::Xxh3;

use crate::durable::DurableFile;
use crate::value::{Value, MAX_INLINE_DTW, OVERFLOW_CODE};

/// File magic.
pub const MAGIC: [u8; 8] = *b"S4TB\r\n\x1a\n";
/// The format version of plain tables: one value byte per slot.
pub const VERSION: u32 = 1;
/// The format version of compressed tables (see [`crate::compressed`]): the same header, and
/// a compressed section where the value bytes were.
pub const VERSION_COMPRESSED: u32 = 4;
/// The value encoding this code reads and writes.
pub const VALUE_ENCODING: u32 = 1;
/// The XXH3-64 checksum (the header field) of the table this project's solver writes for
/// `material`, for every closed game of up to 4 non-royal pieces: the recorded reference that
/// every version of the solver, in memory or distributed, must reproduce byte for byte.
pub fn recorded_checksum(material: Material) -> Option<u64> {
    let name = material.to_string();
    include_str!("../tests/data/checksums.txt")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|fields| fields.first() == Some(&name.as_str()))
        .and_then(|fields| u64::from_str_radix(fields.get(1)?, 16).ok())
}

/// File name extension.
pub const EXTENSION: &str = "s4tb";

/// A closed game's name in the 16-byte field that table headers and checkpoints hold, ASCII,
/// padded with zeros.
pub fn material_field(material: Material) -> [u8; 16] {
    let mut field = [0u8; 16];
    let name = material.to_string();
    field[..name.len()].copy_from_slice(name.as_bytes());
    field
}

/// The name a [`material_field`] holds: its bytes up to the first zero.
pub fn material_in_field(field: &[u8]) -> String {
    field.iter().take_while(|&&b| b != 0).map(|&b| char::from(b)).collect()
}

/// The file name of a closed game's table, `KKCF.s4tb`: the one name under which a table is
/// written, served, downloaded and accepted.
pub fn file_name(material: Material) -> String {
    format!("{material}.{EXTENSION}")
}

/// Where each header field lies (byte ranges; all integers little-endian), as documented in
/// `tables/README.md`.
pub mod layout {
    use std::ops::Range;

    /// `S4TB\r\n\x1a\n` (catches text-mode transfers).
    pub const MAGIC: Range<usize> = 0..8;
    /// Format version (u32).
    pub const VERSION: Range<usize> = 8..12;
    /// Where the value array starts (u32, a multiple of 64).
    pub const VALUES_OFFSET: Range<usize> = 12..16;
    /// Material name, ASCII, NUL-padded.
    pub const MATERIAL: Range<usize> = 16..32;
    /// Slots (u64).
    pub const SLOTS: Range<usize> = 32..40;
    /// Positions, published convention (u64).
    pub const POSITIONS: Range<usize> = 40..48;
    /// Wins, in positions (u64).
    pub const WINS: Range<usize> = 48..56;
    /// Losses, in positions (u64).
    pub const LOSSES: Range<usize> = 56..64;
    /// Draws, in positions (u64).
    pub const DRAWS: Range<usize> = 64..72;
    /// Longest distance to win (u32).
    pub const MAX_DTW: Range<usize> = 72..76;
    /// Value encoding (u32).
    pub const ENCODING: Range<usize> = 76..80;
    /// Overflow entries (u64).
    pub const OVERFLOW_ENTRIES: Range<usize> = 80..88;
    /// XXH3-64 of the whole file with this field read as zero (u64).
    pub const CHECKSUM: Range<usize> = 88..96;
    /// Histogram entries (u64).
    pub const HISTOGRAM_LEN: Range<usize> = 96..104;
    /// Where the histogram (u64 per distance) starts; the fixed header's size.
    pub const HISTOGRAM: usize = 104;
    /// The value array starts at a multiple of this.
    pub const VALUES_ALIGN: u64 = 64;
    /// The overflow table starts at a multiple of this.
    pub const OVERFLOW_ALIGN: u64 = 8;
    /// Bytes per overflow entry: slot (u64), distance (u32), zero (u32).
    pub const OVERFLOW_ENTRY: usize = 16;
}

use layout::{HISTOGRAM as FIXED_HEADER, OVERFLOW_ENTRY};

/// Win/loss/draw statistics of a solved closed game, in the published convention (both sides
/// to move, no symmetry folding: every slot counts 4 positions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Statistics {
    /// All positions.
    pub positions: u64,
    /// Wins for the side to move.
    pub wins: u64,
    /// Losses for the side to move.
    pub losses: u64,
    /// Draws.
    pub draws: u64,
    /// The longest distance to win.
    pub max_dtw: u32,
    /// `histogram[d]`: positions whose distance is `d` (draws are not counted).
    pub histogram: Vec<u64>,
}

impl Statistics {
    /// Adds `slots` slots of one value (4 positions each).
    pub fn add(&mut self, value: Value, slots: u64) {
        let positions = 4 * slots;
        self.positions += positions;
        match value {
            Value::Win(_) => self.wins += positions,
            Value::Loss(_) => self.losses += positions,
            Value::Draw => self.draws += positions,
        }
        if let Some(d) = value.dtw() {
            let d = d as usize;
            if self.histogram.len() <= d {
                self.histogram.resize(d + 1, 0);
            }
            self.histogram[d] += positions;
            self.max_dtw = self.max_dtw.max(d as u32);
        }
    }

    /// Adds the statistics of other slots of the same game (another worker's share).
    pub fn merge(&mut self, other: &Statistics) {
        self.positions += other.positions;
        self.wins += other.wins;
        self.losses += other.losses;
        self.draws += other.draws;
        self.max_dtw = self.max_dtw.max(other.max_dtw);
        if self.histogram.len() < other.histogram.len() {
            self.histogram.resize(other.histogram.len(), 0);
        }
        self.histogram.iter_mut().zip(&other.histogram).for_each(|(a, b)| *a += b);
    }

    /// Statistics of a value array and its overflow entries, counted in parallel.
    pub fn of_values(values: &[u8], overflow: &[(u64, u32)]) -> Statistics {
        use rayon::prelude::*;
        let counts = values
            .par_chunks(1 << 20)
            .map(|chunk| {
                let mut counts = [0u64; 256];
                for &b in chunk {
                    counts[usize::from(b)] += 1;
                }
                counts
            })
            .reduce(
                || [0u64; 256],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let mut statistics = Statistics::default();
        for (code, &count) in counts.iter().enumerate() {
            if count > 0 && code != usize::from(OVERFLOW_CODE) {
                statistics.add(Value::decode_inline(code as u8), count);
            }
        }
        for &(_, dtw) in overflow {
            statistics.add(Value::from_dtw(dtw), 1);
        }
        statistics
    }
}

/// Why a table was refused: which file, and what went wrong with it (shakmaty-syzygy's split:
/// the file and the name here, the bytes in [`FormatError`]).
#[derive(Debug)]
pub enum TableError {
    /// The file could not be read or written.
    Io(PathBuf, std::io::Error),
    /// Its bytes are not a valid table.
    Format(FormatError),
    /// The file's name and the material in its header disagree.
    NameMismatch {
        /// The file.
        path: PathBuf,
        /// The material its header names.
        header: Material,
    },
}

/// What is wrong with a table's bytes, wherever they came from.
#[derive(Debug)]
pub enum FormatError {
    /// Shorter than its header says.
    Truncated {
        /// Bytes the header requires.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// Longer than its header says.
    TrailingBytes {
        /// Bytes the header accounts for.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// Not a Shogi4 table.
    BadMagic,
    /// A format version this build does not read.
    UnsupportedVersion(u32),
    /// A value encoding this build does not read.
    UnsupportedEncoding(u32),
    /// The material field does not name a closed game.
    BadMaterial(String),
    /// The slot count disagrees with the dense index of the material.
    SlotCount {
        /// Slots of the material's index.
        expected: u64,
        /// Slots in the header.
        found: u64,
    },
    /// Header fields contradict each other.
    InconsistentHeader(&'static str),
    /// The data does not match its checksum.
    Checksum {
        /// Checksum in the header.
        expected: u64,
        /// Checksum of the data.
        found: u64,
    },
    /// The overflow table is not sorted, or disagrees with the 255 bytes.
    BadOverflow(&'static str),
    /// A value byte that cannot be decoded (a 255 byte without an overflow entry).
    Corrupt(CorruptValue),
    /// A compressed section that cannot be read: malformed, or a block failing its checksum.
    Compressed(crate::compressed::DecodeError),
}

/// A value that cannot be read from a damaged table: a 255 byte (look in the overflow table)
/// with no overflow entry for its slot, or, in a compressed table, a block that fails its
/// checksum or cannot be decoded. A verified checksum rules both out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorruptValue {
    /// The slot that was read.
    pub slot: u64,
    /// What is wrong.
    pub damage: Damage,
}

/// What makes a value unreadable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// Byte 255 with no overflow entry.
    MissingOverflow,
    /// A compressed block that fails its checksum or does not decode.
    Block(u64),
}

impl CorruptValue {
    /// Byte 255 at `slot` without its overflow entry.
    pub fn missing_overflow(slot: u64) -> CorruptValue {
        CorruptValue { slot, damage: Damage::MissingOverflow }
    }
}

impl fmt::Display for CorruptValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.damage {
            Damage::MissingOverflow => {
                write!(f, "slot {} holds byte 255 but the overflow table has no entry for it", self.slot)
            }
            Damage::Block(block) => {
                write!(f, "slot {} lies in compressed block {block}, which fails its checksum", self.slot)
            }
        }
    }
}

impl std::error::Error for CorruptValue {}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Io(path, e) => write!(f, "{}: {e}", path.display()),
            TableError::Format(e) => e.fmt(f),
            TableError::NameMismatch { path, header } => {
                write!(
                    f,
                    "{}: the header describes {header}; the file should be named {header}.{EXTENSION}",
                    path.display()
                )
            }
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Truncated { expected, found } => {
                write!(f, "truncated: the header requires {expected} bytes, the file has {found}")
            }
            FormatError::TrailingBytes { expected, found } => {
                write!(f, "the header accounts for {expected} bytes, the file has {found}")
            }
            FormatError::BadMagic => write!(f, "not a Shogi4 table (bad magic)"),
            FormatError::UnsupportedVersion(v) => {
                write!(f, "format version {v}; this build reads versions {VERSION} and {VERSION_COMPRESSED}")
            }
            FormatError::UnsupportedEncoding(v) => {
                write!(f, "value encoding {v}; this build reads encoding {VALUE_ENCODING}")
            }
            FormatError::BadMaterial(m) => write!(f, "material field {m:?} is not a closed game"),
            FormatError::SlotCount { expected, found } => {
                write!(f, "header has {found} slots; the material's index has {expected}")
            }
            FormatError::InconsistentHeader(what) => write!(f, "inconsistent header: {what}"),
            FormatError::Checksum { expected, found } => {
                write!(f, "checksum mismatch: header says {expected:016x}, data hashes to {found:016x}")
            }
            FormatError::BadOverflow(what) => write!(f, "bad overflow table: {what}"),
            FormatError::Corrupt(e) => write!(f, "corrupt value: {e}"),
            FormatError::Compressed(crate::compressed::DecodeError::Malformed(what)) => {
                write!(f, "malformed compressed section: {what}")
            }
            FormatError::Compressed(crate::compressed::DecodeError::DamagedBlock(block)) => {
                write!(f, "compressed block {block} fails its checksum")
            }
        }
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TableError::Io(_, e) => Some(e),
            TableError::Format(e) => Some(e),
            TableError::NameMismatch { .. } => None,
        }
    }
}

impl std::error::Error for FormatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FormatError::Corrupt(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FormatError> for TableError {
    fn from(e: FormatError) -> Self {
        TableError::Format(e)
    }
}

impl From<CorruptValue> for FormatError {
    fn from(e: CorruptValue) -> Self {
        FormatError::Corrupt(e)
    }
}

impl From<CorruptValue> for TableError {
    fn from(e: CorruptValue) -> Self {
        TableError::Format(FormatError::Corrupt(e))
    }
}

/// Why a solve into a table directory failed: the solver's layer over [`TableError`] (the
/// files').
#[derive(Debug)]
pub enum SolveError {
    /// A table or the directory could not be read or written.
    Table(TableError),
    /// Solving the game would need more memory than allowed; nothing was written.
    TooLarge {
        /// The closed game.
        material: Material,
        /// Bytes the solve needs.
        needed: u64,
        /// Bytes allowed (the caller's limit, or what the system has available).
        limit: u64,
    },
    /// A solve's checkpoint cannot be resumed from.
    Checkpoint(crate::CheckpointError),
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::Table(e) => write!(f, "{e}"),
            SolveError::TooLarge { material, needed, limit } => {
                let size = |b: u64| {
                    if b < 1 << 30 {
                        format!("{} MiB", b.div_ceil(1 << 20))
                    } else {
                        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
                    }
                };
                write!(
                    f,
                    "solving {material} needs about {} of memory but {} are allowed (allow more, or use a bigger \
                     machine); nothing was written",
                    size(*needed),
                    size(*limit)
                )
            }
            SolveError::Checkpoint(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SolveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SolveError::Table(e) => Some(e),
            SolveError::Checkpoint(e) => Some(e),
            SolveError::TooLarge { .. } => None,
        }
    }
}

impl From<TableError> for SolveError {
    fn from(e: TableError) -> Self {
        SolveError::Table(e)
    }
}

impl From<crate::CheckpointError> for SolveError {
    fn from(e: crate::CheckpointError) -> Self {
        SolveError::Checkpoint(e)
    }
}

/// The parsed header of a table: everything but the values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The closed game.
    pub material: Material,
    /// Number of slots.
    pub slots: u64,
    /// Value statistics.
    pub statistics: Statistics,
    /// Number of overflow entries.
    pub overflow_entries: u64,
    /// XXH3-64 of the whole file, this field read as zero.
    pub checksum: u64,
    /// Offset of the value array (of a compressed table: of its compressed section).
    pub values_offset: u64,
    /// Of a compressed table, the compressed section's size in bytes; `None` for a plain one.
    pub compressed_bytes: Option<u64>,
}

impl Header {
    /// The header of a table with these contents, its checksum still zero.
    pub(crate) fn unsummed(material: Material, slots: u64, statistics: &Statistics, overflow: &[(u64, u32)]) -> Header {
        let histogram_end = FIXED_HEADER + 8 * statistics.histogram.len();
        Header {
            material,
            slots,
            statistics: statistics.clone(),
            overflow_entries: overflow.len() as u64,
            checksum: 0,
            values_offset: (histogram_end as u64).next_multiple_of(layout::VALUES_ALIGN),
            compressed_bytes: None,
        }
    }

    /// The zero bytes between the values and the overflow table.
    fn padding(&self) -> Vec<u8> {
        let body = self.compressed_bytes.unwrap_or(self.slots);
        vec![0u8; (self.overflow_offset() - self.values_offset - body) as usize]
    }

    /// This header with the checksum of the file it heads: `body` (the value bytes, or the
    /// compressed section) and the overflow table.
    pub(crate) fn summed(mut self, body: &[u8], overflow: &[(u64, u32)]) -> Header {
        let mut hasher = Xxh3::new();
        hasher.update(&self.to_bytes());
        hasher.update(body);
        hasher.update(&self.padding());
        hasher.update(&overflow_bytes(overflow));
        self.checksum = hasher.digest();
        self
    }

    /// The whole file this header heads, with `body` and the overflow table.
    pub(crate) fn file_with(&self, body: &[u8], overflow: &[(u64, u32)]) -> Vec<u8> {
        let written: Result<_, std::convert::Infallible> = self.assembled(overflow, |out| {
            out.copy_from_slice(body);
            Ok(())
        });
        written.unwrap_or_else(|never| match never {})
    }

    /// The whole file of this header, not yet summed, with the body that `write_body` writes
    /// into its place, and the header's checksum then computed over the file and put in it:
    /// a body decoded straight into the file is never held twice.
    pub(crate) fn summed_file_written_in_place<E>(
        mut self,
        overflow: &[(u64, u32)],
        write_body: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<Vec<u8>, E> {
        self.checksum = 0;
        let mut file = self.assembled(overflow, write_body)?;
        // The checksum of the file with its own field read as zero, as `summed` computes it.
        let checksum = xxhash_rust::xxh3::xxh3_64(&file);
        file[layout::CHECKSUM].copy_from_slice(&checksum.to_le_bytes());
        Ok(file)
    }

    /// The pieces of the file written into one buffer of its size: a table's body may be
    /// gigabytes, and joining copies of the pieces held it three times over.
    fn assembled<E>(
        &self,
        overflow: &[(u64, u32)],
        write_body: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<Vec<u8>, E> {
        let (header, padding, overflow) = (self.to_bytes(), self.padding(), overflow_bytes(overflow));
        let body = self.compressed_bytes.unwrap_or(self.slots) as usize;
        let mut file = vec![0u8; header.len() + body + padding.len() + overflow.len()];
        let (head, rest) = file.split_at_mut(header.len());
        head.copy_from_slice(&header);
        let (body, rest) = rest.split_at_mut(body);
        write_body(body)?;
        rest[padding.len()..].copy_from_slice(&overflow);
        Ok(file)
    }

    /// Offset of the overflow table.
    pub fn overflow_offset(&self) -> u64 {
        // Saturating: a damaged header's sizes must come out as "too large", not wrap.
        self.values_offset
            .saturating_add(self.compressed_bytes.unwrap_or(self.slots))
            .saturating_add(layout::OVERFLOW_ALIGN - 1)
            / layout::OVERFLOW_ALIGN
            * layout::OVERFLOW_ALIGN
    }

    /// The format version: [`VERSION`] or [`VERSION_COMPRESSED`].
    pub fn version(&self) -> u32 {
        if self.compressed_bytes.is_some() {
            VERSION_COMPRESSED
        } else {
            VERSION
        }
    }

    /// Total file size.
    pub fn file_size(&self) -> u64 {
        self.overflow_offset().saturating_add(self.overflow_entries.saturating_mul(OVERFLOW_ENTRY as u64))
    }

    /// Reads and checks the header of `bytes` (the whole file), without the checksum.
    pub fn parse(bytes: &[u8]) -> Result<Header, FormatError> {
        let found = bytes.len() as u64;
        // The magic first, as far as the file goes: a short file of something else is not a
        // table, where a table cut short is truncated.
        let magic = &bytes[..bytes.len().min(layout::MAGIC.end)];
        if !MAGIC.starts_with(magic) {
            return Err(FormatError::BadMagic);
        }
        if bytes.len() < FIXED_HEADER {
            return Err(FormatError::Truncated { expected: FIXED_HEADER as u64, found });
        }
        let u32_at = |at: std::ops::Range<usize>| u32::from_le_bytes(bytes[at].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let u64_in = |at: std::ops::Range<usize>| u64_at(at.start);
        let version = u32_at(layout::VERSION);
        if version != VERSION && version != VERSION_COMPRESSED {
            return Err(FormatError::UnsupportedVersion(version));
        }
        let encoding = u32_at(layout::ENCODING);
        if encoding != VALUE_ENCODING {
            return Err(FormatError::UnsupportedEncoding(encoding));
        }
        let name = material_in_field(&bytes[layout::MATERIAL]);
        let material: Material = name.parse().map_err(|_| FormatError::BadMaterial(name.clone()))?;
        let values_offset = u64::from(u32_at(layout::VALUES_OFFSET));
        let slots = u64_in(layout::SLOTS);
        let expected_slots = MaterialIndex::new(material).slots();
        if slots != expected_slots {
            return Err(FormatError::SlotCount { expected: expected_slots, found: slots });
        }
        let histogram_len = u64_in(layout::HISTOGRAM_LEN);
        if histogram_len > u64::from(u32::MAX) {
            return Err(FormatError::InconsistentHeader("histogram length"));
        }
        let histogram_end = FIXED_HEADER as u64 + 8 * histogram_len;
        if !values_offset.is_multiple_of(layout::VALUES_ALIGN) || values_offset < histogram_end {
            return Err(FormatError::InconsistentHeader("values offset"));
        }
        if found < values_offset {
            return Err(FormatError::Truncated { expected: values_offset, found });
        }
        let compressed_bytes = if version == VERSION_COMPRESSED {
            if found < values_offset + 8 {
                return Err(FormatError::Truncated { expected: values_offset + 8, found });
            }
            Some(u64_at(values_offset as usize + crate::compressed::layout::SECTION_BYTES))
        } else {
            None
        };
        let histogram: Vec<u64> = (0..histogram_len as usize).map(|i| u64_at(FIXED_HEADER + 8 * i)).collect();
        let statistics = Statistics {
            positions: u64_in(layout::POSITIONS),
            wins: u64_in(layout::WINS),
            losses: u64_in(layout::LOSSES),
            draws: u64_in(layout::DRAWS),
            max_dtw: u32_at(layout::MAX_DTW),
            histogram,
        };
        let s = &statistics;
        if s.positions != 4 * slots {
            return Err(FormatError::InconsistentHeader("positions is not 4 × slots"));
        }
        if s.wins.checked_add(s.losses).and_then(|n| n.checked_add(s.draws)) != Some(s.positions) {
            return Err(FormatError::InconsistentHeader("wins + losses + draws is not positions"));
        }
        if s.histogram.len() as u64 != u64::from(s.max_dtw) + 1 && !(s.histogram.is_empty() && s.max_dtw == 0) {
            return Err(FormatError::InconsistentHeader("histogram length is not max_dtw + 1"));
        }
        if s.histogram.iter().try_fold(0u64, |acc, &n| acc.checked_add(n)) != Some(s.wins + s.losses) {
            return Err(FormatError::InconsistentHeader("histogram does not add up to wins + losses"));
        }
        let header = Header {
            material,
            slots,
            statistics,
            overflow_entries: u64_in(layout::OVERFLOW_ENTRIES),
            checksum: u64_in(layout::CHECKSUM),
            values_offset,
            compressed_bytes,
        };
        if header.compressed_bytes.is_some_and(|b| b > found) {
            return Err(FormatError::Truncated { expected: header.compressed_bytes.unwrap_or(0), found });
        }
        let expected = header.file_size();
        match found.cmp(&expected) {
            std::cmp::Ordering::Less => Err(FormatError::Truncated { expected, found }),
            std::cmp::Ordering::Greater => Err(FormatError::TrailingBytes { expected, found }),
            std::cmp::Ordering::Equal => Ok(header),
        }
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let s = &self.statistics;
        let mut out = vec![0u8; self.values_offset as usize];
        let mut put = |at: std::ops::Range<usize>, bytes: &[u8]| out[at].copy_from_slice(bytes);
        put(layout::MAGIC, &MAGIC);
        put(layout::VERSION, &self.version().to_le_bytes());
        put(layout::VALUES_OFFSET, &(self.values_offset as u32).to_le_bytes());
        put(layout::MATERIAL, &material_field(self.material));
        put(layout::SLOTS, &self.slots.to_le_bytes());
        put(layout::POSITIONS, &s.positions.to_le_bytes());
        put(layout::WINS, &s.wins.to_le_bytes());
        put(layout::LOSSES, &s.losses.to_le_bytes());
        put(layout::DRAWS, &s.draws.to_le_bytes());
        put(layout::MAX_DTW, &s.max_dtw.to_le_bytes());
        put(layout::ENCODING, &VALUE_ENCODING.to_le_bytes());
        put(layout::OVERFLOW_ENTRIES, &self.overflow_entries.to_le_bytes());
        put(layout::CHECKSUM, &self.checksum.to_le_bytes());
        put(layout::HISTOGRAM_LEN, &(s.histogram.len() as u64).to_le_bytes());
        for (i, n) in s.histogram.iter().enumerate() {
            let at = FIXED_HEADER + 8 * i;
            put(at..at + 8, &n.to_le_bytes());
        }
        out
    }
}

/// A solved closed game in memory, ready to be written.
#[derive(Clone, Debug)]
pub struct SolvedTable {
    /// The closed game.
    pub material: Material,
    /// One encoded value per slot.
    pub values: Vec<u8>,
    /// Exact distances of the slots whose byte is 255, sorted by slot.
    pub overflow: Vec<(u64, u32)>,
    /// Value statistics.
    pub statistics: Statistics,
}

impl SolvedTable {
    /// The value of `slot`.
    pub fn value(&self, slot: u64) -> Result<Value, CorruptValue> {
        decode(self.values[slot as usize], slot, |s| {
            self.overflow.binary_search_by_key(&s, |&(slot, _)| slot).ok().map(|i| self.overflow[i].1)
        })
    }

    /// The header of this table's file, checksum included.
    fn header(&self) -> Header {
        Header::unsummed(self.material, self.values.len() as u64, &self.statistics, &self.overflow)
            .summed(&self.values, &self.overflow)
    }

    /// The whole file as bytes (for tests and small tables).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.header().file_with(&self.values, &self.overflow)
    }

    /// Writes `DIR/MATERIAL.s4tb` atomically: a temporary file in the same directory, fsync,
    /// then rename, so an interrupted write never leaves a truncated table under the final
    /// name. Returns the path written.
    pub fn write_to_dir(&self, dir: &Path) -> Result<PathBuf, TableError> {
        let header = self.header();
        let mut writer =
            TableWriter::create(dir, self.material, self.values.len() as u64, &self.statistics, &self.overflow)?;
        writer.write_values(0, &self.values)?;
        writer.finish_with(Some(header.checksum))
    }
}

pub(crate) fn overflow_bytes(overflow: &[(u64, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(overflow.len() * OVERFLOW_ENTRY);
    for &(slot, dtw) in overflow {
        out.extend_from_slice(&slot.to_le_bytes());
        out.extend_from_slice(&dtw.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    out
}

/// A table file written in pieces, for a solver that never holds all the values in one place
/// (the distributed solve, whose workers each own a range of slots): header and overflow
/// table first, then the values at their slots in any order, then the checksum, computed by
/// reading the file back. The bytes are those [`SolvedTable::write_to_dir`] writes for the
/// same contents, and the same atomicity holds: nothing appears under the table's name until
/// [`TableWriter::finish`] has synced the whole file; a writer dropped unfinished removes its
/// temporary file.
pub struct TableWriter {
    header: Header,
    file: DurableFile,
}

impl TableWriter {
    /// Starts `DIR/MATERIAL.s4tb` for a table of `slots` values with these statistics and
    /// overflow entries (sorted by slot).
    pub fn create(
        dir: &Path,
        material: Material,
        slots: u64,
        statistics: &Statistics,
        overflow: &[(u64, u32)],
    ) -> Result<TableWriter, TableError> {
        let path = dir.join(file_name(material));
        let header = Header::unsummed(material, slots, statistics, overflow);
        std::fs::create_dir_all(dir).map_err(|e| TableError::Io(dir.to_path_buf(), e))?;
        let file = DurableFile::create(&path).map_err(|e| TableError::Io(path.clone(), e))?;
        let io = |e| TableError::Io(file.temporary().to_path_buf(), e);
        // On failure the durable file is dropped, which removes it.
        (|| {
            let mut out = file.file();
            out.write_all(&header.to_bytes())?;
            out.set_len(header.overflow_offset())?;
            std::io::Seek::seek(&mut out, std::io::SeekFrom::End(0))?;
            out.write_all(&overflow_bytes(overflow))
        })()
        .map_err(io)?;
        Ok(TableWriter { header, file })
    }

    /// Writes values starting at `first_slot`.
    pub fn write_values(&mut self, first_slot: u64, values: &[u8]) -> Result<(), TableError> {
        use std::os::unix::fs::FileExt;
        if first_slot.checked_add(values.len() as u64).is_none_or(|end| end > self.header.slots) {
            return Err(FormatError::InconsistentHeader("values written past the last slot").into());
        }
        self.file
            .file()
            .write_all_at(values, self.header.values_offset + first_slot)
            .map_err(|e| TableError::Io(self.file.temporary().to_path_buf(), e))
    }

    /// Computes the checksum over the file as written, then syncs it and renames it to its
    /// final name. Returns the path written.
    pub fn finish(self) -> Result<PathBuf, TableError> {
        self.finish_with(None)
    }

    /// [`TableWriter::finish`], with the checksum given when the caller already knows it.
    fn finish_with(self, checksum: Option<u64>) -> Result<PathBuf, TableError> {
        use std::io::Read;
        use std::os::unix::fs::FileExt;
        let TableWriter { file, .. } = self;
        let summed = (|| {
            let checksum = match checksum {
                Some(checksum) => checksum,
                None => {
                    // The checksum field is still zero, as the checksum's definition reads it.
                    let mut hasher = Xxh3::new();
                    let mut reader = std::io::BufReader::with_capacity(1 << 20, file.file());
                    std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(0))?;
                    let mut buffer = vec![0u8; 1 << 20];
                    loop {
                        let read = reader.read(&mut buffer)?;
                        if read == 0 {
                            break;
                        }
                        hasher.update(&buffer[..read]);
                    }
                    hasher.digest()
                }
            };
            file.file().write_all_at(&checksum.to_le_bytes(), layout::CHECKSUM.start as u64)
        })();
        summed.map_err(|e| TableError::Io(file.temporary().to_path_buf(), e))?;
        let path = file.path().to_path_buf();
        file.commit().map_err(|e| TableError::Io(path, e))
    }
}

/// Decodes a value byte; `overflow(slot)` finds the exact distance of a 255 byte. A 255 byte
/// without an entry is damage, reported rather than guessed at.
#[inline]
pub(crate) fn decode(code: u8, slot: u64, overflow: impl FnOnce(u64) -> Option<u32>) -> Result<Value, CorruptValue> {
    if code == OVERFLOW_CODE {
        let dtw = overflow(slot).ok_or(CorruptValue::missing_overflow(slot))?;
        debug_assert!(dtw > MAX_INLINE_DTW);
        Ok(Value::from_dtw(dtw))
    } else {
        Ok(Value::decode_inline(code))
    }
}
