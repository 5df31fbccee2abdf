//! The decoder, on the request path: parses a section once, then reads one slot by decoding
//! part of one block. It needs the format's facts only, never the encoder.

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::format::*;

/// The long codes of one canonical Huffman code, for what the first-level table cannot decode.
#[derive(Debug)]
struct Code {
    /// For each length, the first code (left-aligned in 32 bits) past that length's codes,
    /// the first code, and where its symbols start in `sorted` | bits << 24.
    limit: Vec<(u64, u32, u32)>,
    sorted: Vec<u16>,
}

impl Code {
    /// The code of these per-symbol `lengths` (0: not coded) and its canonical codes (see
    /// [`canonical_codes`]), or why they are not a complete prefix code.
    fn new(lengths: &[u32]) -> Result<(Code, Vec<(u32, u32)>), DecodeError> {
        use DecodeError::Malformed;
        if lengths.iter().any(|&l| l > MAX_CODE_BITS) {
            return Err(Malformed("code length"));
        }
        // Kraft: a complete prefix code (or a single one-bit code).
        let coded = lengths.iter().filter(|&&l| l > 0).count();
        let kraft: u64 = lengths.iter().filter(|&&l| l > 0).map(|&l| 1u64 << (MAX_CODE_BITS - l)).sum();
        if kraft > 1 << MAX_CODE_BITS || (coded > 1 && kraft != 1 << MAX_CODE_BITS) {
            return Err(Malformed("code lengths do not form a prefix code"));
        }
        let codes = canonical_codes(lengths);
        let mut sorted: Vec<u16> = (0..lengths.len() as u16).filter(|&s| lengths[usize::from(s)] > 0).collect();
        sorted.sort_by_key(|&s| (lengths[usize::from(s)], s));
        let mut limit = Vec::new();
        let mut at = 0;
        while at < sorted.len() {
            let (first, bits) = codes[usize::from(sorted[at])];
            let same = sorted[at..].iter().take_while(|&&s| lengths[usize::from(s)] == bits).count() as u32;
            limit.push((u64::from(first + same) << (32 - bits), first, at as u32 | bits << 24));
            at += same as usize;
        }
        Ok((Code { limit, sorted }, codes))
    }

    /// The symbol whose code starts the 32 bits `top`, and its length, by the canonical
    /// code's limits (the first-level table is the decoder's).
    fn symbol(&self, top: u32) -> Option<(u16, u32)> {
        let &(_, first, packed) = self.limit.iter().find(|&&(end, _, _)| u64::from(top) < end)?;
        let bits = packed >> 24;
        let index = (packed & 0xff_ffff).wrapping_add(top >> (32 - bits)).wrapping_sub(first);
        Some((*self.sorted.get(index as usize)?, bits))
    }
}

/// A first-level table entry, packed: the symbol (bits 0–11), its code length (12–16), its
/// class (17–20) and the slots it stands for (21–31; [`LONG_SYMBOL`] for a longer one). 0: the
/// code is longer than [`FAST_BITS`]. One load per symbol, since a read walks dozens.
type FastEntry = u32;

const LONG_SYMBOL: u32 = (1 << 11) - 1;

// The packing holds every symbol, code length and class the format allows: raising one of
// these limits means widening its field first.
const _: () = assert!(MAX_SYMBOLS <= 1 << 12 && MAX_CODE_BITS < 1 << 5 && MAX_CLASSES <= 1 << 4);

/// A [`FastEntry`] for a symbol whose code has `bits` bits (at most [`FAST_BITS`], so never
/// 0), in class `class`, standing for `slots` slots.
fn fast_entry(symbol: usize, bits: u32, class: u32, slots: u64) -> FastEntry {
    let slots = u32::try_from(slots).map_or(LONG_SYMBOL, |l| l.min(LONG_SYMBOL));
    symbol as u32 | bits << 12 | class << 17 | slots << 21
}

/// A [`FastEntry`]'s symbol, code length, class and slots ([`LONG_SYMBOL`] when the symbol
/// stands for more, to be read from its length).
#[inline]
fn fast_fields(entry: FastEntry) -> (usize, u32, usize, u32) {
    ((entry & 0xfff) as usize, entry >> 12 & 0x1f, (entry >> 17 & 0xf) as usize, entry >> 21)
}

/// The decoding side of a compressed section: parsed once when the table is opened.
#[derive(Debug)]
pub struct Decoder {
    leaves: Vec<u8>,
    leaf_count: usize,
    pairs: Vec<(u16, u16)>,
    lengths: Vec<u64>,
    classes: usize,
    class_of: Vec<u8>,
    /// One code per context: see [`context_of`].
    codes: Vec<Code>,
    /// Every context's first-level table, one after the other.
    fast: Vec<FastEntry>,
    sparse_shift: u32,
    sparse_at: usize,
    groups_at: usize,
    offsets_at: usize,
    records_at: usize,
    /// Bytes of a block's record: its checksum and its parts' starts.
    record_bytes: usize,
    blocks_at: usize,
    parts: usize,
    blocks: u64,
    slots: u64,
    sparse_entries: u64,
    /// The slot of the game's longest win, if any.
    pub longest_win_slot: Option<u64>,
}

/// Why a compressed section cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The section's fixed fields or arrays contradict each other or the file.
    Malformed(&'static str),
    /// A block's bytes do not match its checksum.
    DamagedBlock(u64),
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes[at..at + 2].try_into().expect("2 bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Where a walk through a block stands: the bit, and the classes of the two symbols before.
struct Walk {
    bit: usize,
    end: usize,
    since_reset: u32,
    previous: usize,
    before: usize,
}

impl Decoder {
    /// Parses the section `bytes` of a table of `slots` slots (checks every structural field;
    /// block checksums are checked on each read, and by [`Decoder::decode_all`] for them all).
    pub fn parse(bytes: &[u8], slots: u64) -> Result<Decoder, DecodeError> {
        use DecodeError::Malformed;
        if bytes.len() < layout::FIXED || u64_at(bytes, layout::SECTION_BYTES) != bytes.len() as u64 {
            return Err(Malformed("section size"));
        }
        let symbols = u32_at(bytes, layout::SYMBOLS) as usize;
        let leaf_count = u32_at(bytes, layout::LEAVES) as usize;
        if symbols > MAX_SYMBOLS || leaf_count == 0 || leaf_count > 256 || leaf_count > symbols {
            return Err(Malformed("symbol counts"));
        }
        if u32_at(bytes, layout::BLOCK_BYTES) as usize != BLOCK_BYTES {
            return Err(Malformed("block size"));
        }
        let parts = u32_at(bytes, layout::PARTS) as usize;
        if parts == 0 || parts > MAX_PARTS {
            return Err(Malformed("parts per block"));
        }
        let classes = u32_at(bytes, layout::CLASSES) as usize;
        if classes > MAX_CLASSES {
            return Err(Malformed("classes"));
        }
        let contexts = 1 + classes * classes;
        let code_entries = u64::from(u32_at(bytes, layout::CODE_ENTRIES));
        if code_entries > (contexts * symbols) as u64 {
            return Err(Malformed("code entries"));
        }
        let sparse_shift = u32_at(bytes, layout::SPARSE_SHIFT);
        let blocks = u64_at(bytes, layout::BLOCKS);
        let sparse_entries = u64_at(bytes, layout::SPARSE_ENTRIES);
        if sparse_shift > 40 || sparse_entries != slots.div_ceil(1 << sparse_shift) || (blocks == 0) != (slots == 0) {
            return Err(Malformed("sparse index"));
        }
        if blocks > bytes.len() as u64 / BLOCK_BYTES as u64 {
            return Err(Malformed("arrays past the end"));
        }
        let longest = u64_at(bytes, layout::LONGEST_WIN_SLOT);
        let mut at = layout::FIXED;
        let mut take = |len: u64| -> Result<usize, DecodeError> {
            let start = at;
            let end = (at as u64)
                .checked_add(len)
                .filter(|&e| e <= bytes.len() as u64)
                .ok_or(Malformed("arrays past the end"))?;
            at = (end as usize).next_multiple_of(8);
            Ok(start)
        };
        let leaves_at = take(leaf_count as u64)?;
        let pairs_at = take(4 * (symbols - leaf_count) as u64)?;
        let classes_at = take(if classes > 0 { symbols as u64 } else { 0 })?;
        let bitmap_bytes = symbols.div_ceil(8);
        let coded_at = take((contexts * bitmap_bytes) as u64)?;
        let lengths_bytes = packed_bytes(code_entries as usize, LENGTH_BITS);
        let entries_at = take(lengths_bytes as u64)?;
        let entries_end = entries_at + lengths_bytes;
        let sparse_at = take(4 * sparse_entries)?;
        // The groups' first slots, the blocks' offsets, and each block's record (checksum and
        // part starts), with no gap between them.
        let groups = blocks.div_ceil(GROUP_BLOCKS as u64);
        let record_bytes = 4 + packed_bytes(parts - 1, START_BITS);
        let groups_at = take(8 * groups + 4 * blocks + record_bytes as u64 * blocks)?;
        let offsets_at = groups_at + 8 * groups as usize;
        let records_at = offsets_at + 4 * blocks as usize;
        let blocks_at = take(BLOCK_BYTES as u64 * blocks)?;
        if blocks_at + BLOCK_BYTES * blocks as usize != bytes.len() {
            return Err(Malformed("section size"));
        }
        // Hashed in place, the field itself read as zero.
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&bytes[..layout::INDEX_CHECKSUM]);
        hasher.update(&[0u8; 8]);
        hasher.update(&bytes[layout::INDEX_CHECKSUM + 8..blocks_at]);
        if hasher.digest() != u64_at(bytes, layout::INDEX_CHECKSUM) {
            return Err(Malformed("the grammar, codes or index fail their checksum"));
        }
        let leaves = bytes[leaves_at..leaves_at + leaf_count].to_vec();
        if leaves.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Malformed("leaf bytes not increasing"));
        }
        let mut pairs = Vec::with_capacity(symbols - leaf_count);
        for i in 0..symbols - leaf_count {
            let (a, b) = (u16_at(bytes, pairs_at + 4 * i), u16_at(bytes, pairs_at + 4 * i + 2));
            // A pair refers to earlier symbols only, so the grammar has no cycle.
            if usize::from(a) >= leaf_count + i || usize::from(b) >= leaf_count + i {
                return Err(Malformed("a pair refers to a later symbol"));
            }
            pairs.push((a, b));
        }
        let lengths = symbol_lengths(leaf_count, &pairs);
        let class_of = bytes[classes_at..classes_at + if classes > 0 { symbols } else { 0 }].to_vec();
        if class_of.iter().any(|&c| usize::from(c) >= classes) {
            return Err(Malformed("a symbol's class"));
        }
        let mut codes = Vec::with_capacity(contexts);
        let mut fast = Vec::with_capacity(contexts << FAST_BITS);
        let mut entry = 0usize;
        for c in 0..contexts {
            let coded = &bytes[coded_at + c * bitmap_bytes..][..bitmap_bytes];
            let mut code_lengths = vec![0u32; symbols];
            for s in (0..symbols).filter(|&s| coded[s / 8] >> (s % 8) & 1 == 1) {
                if entry >= code_entries as usize {
                    return Err(Malformed("code entries"));
                }
                code_lengths[s] = unpack(&bytes[..entries_end], entries_at, entry, LENGTH_BITS);
                if code_lengths[s] == 0 {
                    return Err(Malformed("code length"));
                }
                entry += 1;
            }
            let (code, canonical) = Code::new(&code_lengths)?;
            codes.push(code);
            // This context's first-level table: every code of at most FAST_BITS bits fills the
            // entries that start with it.
            let table = fast.len();
            fast.resize(table + (1 << FAST_BITS), 0);
            for (symbol, &(code, bits)) in canonical.iter().enumerate().filter(|&(_, &(_, b))| b > 0 && b <= FAST_BITS)
            {
                let class = class_of.get(symbol).map_or(0, |&c| u32::from(c));
                let start = table + ((code << (FAST_BITS - bits)) as usize);
                fast[start..start + (1 << (FAST_BITS - bits))].fill(fast_entry(symbol, bits, class, lengths[symbol]));
            }
        }
        if entry != code_entries as usize {
            return Err(Malformed("code entries"));
        }
        let decoder = Decoder {
            leaves,
            leaf_count,
            pairs,
            lengths,
            classes,
            class_of,
            codes,
            fast,
            sparse_shift,
            sparse_at,
            groups_at,
            offsets_at,
            records_at,
            record_bytes,
            blocks_at,
            parts,
            blocks,
            slots,
            sparse_entries,
            longest_win_slot: (longest != u64::MAX).then_some(longest),
        };
        if blocks > 0 && decoder.first_slot(bytes, 0) != 0 {
            return Err(Malformed("block slots"));
        }
        if longest != u64::MAX && longest >= slots {
            return Err(Malformed("longest win slot"));
        }
        Ok(decoder)
    }

    /// The first slot of `block`; the slot count for the block past the last.
    fn first_slot(&self, bytes: &[u8], block: u64) -> u64 {
        if block >= self.blocks {
            return self.slots;
        }
        let group = block as usize / GROUP_BLOCKS;
        u64_at(bytes, self.groups_at + 8 * group)
            .saturating_add(u64::from(u32_at(bytes, self.offsets_at + 4 * block as usize)))
    }

    /// The slot offsets, from its first slot, at which `block`'s parts start: the first's 0,
    /// and 0 for a later part the block does not use.
    fn starts(&self, bytes: &[u8], block: u64) -> [u64; MAX_PARTS] {
        let at = self.records_at + self.record_bytes * block as usize + 4;
        let record = &bytes[..at + self.record_bytes - 4];
        let mut starts = [0u64; MAX_PARTS];
        let mut start = 0u64;
        for (part, slot) in starts.iter_mut().enumerate().take(self.parts).skip(1) {
            // Stored as the slots since the part before; 0 for this part and every later one
            // when the block ended first.
            let since = unpack(record, at, part - 1, START_BITS);
            if since == 0 {
                break;
            }
            start += u64::from(since);
            *slot = start;
        }
        starts
    }

    /// The stored byte of `slot` (for a slot the rules decide, whatever was stored there).
    pub fn byte(&self, bytes: &[u8], slot: u64) -> Result<u8, DecodeError> {
        let entry = (slot >> self.sparse_shift) as usize;
        if entry as u64 >= self.sparse_entries {
            return Err(DecodeError::Malformed("slot past the end"));
        }
        let mut block = u64::from(u32_at(bytes, self.sparse_at + 4 * entry));
        // The index is not trusted to stay in range: a damaged one is an error, not a loop.
        loop {
            if block >= self.blocks {
                return Err(DecodeError::DamagedBlock(block));
            }
            if self.first_slot(bytes, block + 1) > slot {
                break;
            }
            block += 1;
        }
        // The block and its record are needed next: ask for all their cache lines at once.
        let start = self.blocks_at + BLOCK_BYTES * block as usize;
        (0..BLOCK_BYTES).step_by(64).for_each(|line| crate::memory::prefetch(&bytes[start + line]));
        crate::memory::prefetch(&bytes[self.records_at + self.record_bytes * block as usize]);
        let first = self.first_slot(bytes, block);
        if first > slot {
            return Err(DecodeError::DamagedBlock(block));
        }
        let mut copy = [0u8; BLOCK_BYTES + 8];
        self.checked_block(bytes, block, &mut copy)?;
        let mut offset = slot - first;
        // The part that holds the slot, which starts with a fresh context. (The parts' starts
        // are covered by the index checksum; a walk is bounded by the block whatever they say.)
        let starts = self.starts(bytes, block);
        let part = (1..self.parts).rev().find(|&p| starts[p] != 0 && offset >= starts[p]).unwrap_or(0);
        offset -= starts[part];
        let mut walk = self.walk(part * (BLOCK_BITS / self.parts), BLOCK_BITS);
        let symbol = loop {
            let (symbol, length) = self.next_symbol(&copy, &mut walk, block)?;
            if offset < length {
                break symbol;
            }
            offset -= length;
        };
        let mut symbol = symbol;
        while symbol >= self.leaf_count {
            let (a, b) = self.pairs[symbol - self.leaf_count];
            let left = self.lengths[usize::from(a)];
            if offset < left {
                symbol = usize::from(a);
            } else {
                offset -= left;
                symbol = usize::from(b);
            }
        }
        Ok(self.leaves[symbol])
    }

    fn walk(&self, bit: usize, end: usize) -> Walk {
        Walk { bit, end, since_reset: 0, previous: 0, before: 0 }
    }

    /// Copies `block` into `copy` and checks it against its checksum: what is decoded is what
    /// was checked, even if the file changes meanwhile. The last eight bytes of `copy` stay
    /// zero, for reading past the end.
    fn checked_block(&self, bytes: &[u8], block: u64, copy: &mut [u8; BLOCK_BYTES + 8]) -> Result<(), DecodeError> {
        let start = self.blocks_at + BLOCK_BYTES * block as usize;
        copy[..BLOCK_BYTES].copy_from_slice(&bytes[start..start + BLOCK_BYTES]);
        if xxh3_64(&copy[..BLOCK_BYTES]) as u32 != u32_at(bytes, self.records_at + self.record_bytes * block as usize) {
            return Err(DecodeError::DamagedBlock(block));
        }
        Ok(())
    }

    /// The next symbol of a walk through a block copy and the slots it stands for; the walk
    /// moves past it.
    #[inline]
    fn next_symbol(
        &self,
        copy: &[u8; BLOCK_BYTES + 8],
        walk: &mut Walk,
        block: u64,
    ) -> Result<(usize, u64), DecodeError> {
        if walk.bit >= walk.end {
            return Err(DecodeError::DamagedBlock(block));
        }
        let byte = walk.bit / 8;
        let window = u64::from_be_bytes(copy[byte..byte + 8].try_into().expect("8 bytes")) << (walk.bit % 8);
        let top = (window >> 32) as u32;
        // The context as `context_of` defines it, from the classes carried in the walk.
        let context =
            if walk.since_reset < 2 || self.classes == 0 { 0 } else { 1 + walk.previous * self.classes + walk.before };
        let (symbol, bits, class, slots) = match self.fast[context << FAST_BITS | (top >> (32 - FAST_BITS)) as usize] {
            0 => {
                let (symbol, bits) = self.codes[context].symbol(top).ok_or(DecodeError::DamagedBlock(block))?;
                let symbol = usize::from(symbol);
                let class = self.class_of.get(symbol).map_or(0, |&c| usize::from(c));
                (symbol, bits, class, self.lengths[symbol])
            }
            entry => {
                let (symbol, bits, class, slots) = fast_fields(entry);
                let slots = if slots == LONG_SYMBOL { self.lengths[symbol] } else { u64::from(slots) };
                (symbol, bits, class, slots)
            }
        };
        walk.bit += bits as usize;
        walk.before = walk.previous;
        walk.previous = class;
        walk.since_reset += 1;
        Ok((symbol, slots))
    }

    /// Writes the stored bytes of every slot of `block` to `out`, which has one byte per slot
    /// of the block.
    fn expand_block(&self, bytes: &[u8], block: u64, out: &mut [u8]) -> Result<(), DecodeError> {
        let mut copy = [0u8; BLOCK_BYTES + 8];
        self.checked_block(bytes, block, &mut copy)?;
        let (first, end) = (self.first_slot(bytes, block), self.first_slot(bytes, block + 1));
        let wanted = end.checked_sub(first).ok_or(DecodeError::DamagedBlock(block))?;
        if wanted != out.len() as u64 {
            return Err(DecodeError::DamagedBlock(block));
        }
        let mut written = 0;
        let starts = self.starts(bytes, block);
        let parts = (1..self.parts).take_while(|&p| starts[p] != 0).count() + 1;
        let part_bits = BLOCK_BITS / self.parts;
        let mut stack = Vec::new();
        for part in 0..parts {
            let end = if part + 1 < parts { starts[part + 1] } else { wanted };
            let wanted = end.checked_sub(starts[part]).ok_or(DecodeError::DamagedBlock(block))?;
            let mut walk = self.walk(part * part_bits, (part + 1) * part_bits);
            let mut done = 0u64;
            while done < wanted {
                let (symbol, slots) = self.next_symbol(&copy, &mut walk, block)?;
                done += slots;
                if done > wanted {
                    return Err(DecodeError::DamagedBlock(block));
                }
                stack.push(symbol);
                while let Some(symbol) = stack.pop() {
                    if symbol < self.leaf_count {
                        out[written] = self.leaves[symbol];
                        written += 1;
                    } else {
                        let (a, b) = self.pairs[symbol - self.leaf_count];
                        stack.push(usize::from(b));
                        stack.push(usize::from(a));
                    }
                }
            }
        }
        Ok(())
    }

    /// Every stored byte, in slot order, blocks decoded in parallel (the audit's read, and
    /// that of a compressed table compressed again).
    pub fn decode_all(&self, bytes: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let mut values = vec![0u8; self.slots as usize];
        self.decode_into(bytes, &mut values)?;
        Ok(values)
    }

    /// [`Decoder::decode_all`] into `values`, one byte per slot.
    pub fn decode_into(&self, bytes: &[u8], values: &mut [u8]) -> Result<(), DecodeError> {
        if values.len() as u64 != self.slots {
            return Err(DecodeError::Malformed("a buffer of another size than the slots"));
        }
        // Each block writes its own part of the result, where its first slots say.
        cut_at(values, &self.block_ends(bytes)?)
            .into_par_iter()
            .enumerate()
            .try_for_each(|(block, piece)| self.expand_block(bytes, block as u64, piece))
    }

    /// Every block decoded, in parallel, and handed to `visit` with the slot it starts at:
    /// the checks of [`Decoder::decode_all`] without ever holding more than a block's values
    /// per thread (a 5-piece table's are gigabytes).
    pub fn for_each_block(&self, bytes: &[u8], visit: impl Fn(u64, &[u8]) + Sync) -> Result<(), DecodeError> {
        let ends = self.block_ends(bytes)?;
        (0..ends.len()).into_par_iter().try_for_each_init(Vec::new, |values, block| {
            let first = if block == 0 { 0 } else { ends[block - 1] };
            values.resize(ends[block] - first, 0);
            self.expand_block(bytes, block as u64, values)?;
            visit(first as u64, values);
            Ok(())
        })
    }

    /// The slot after each block's last, checked to rise and to stay within the table (the
    /// last block's is the slot count).
    fn block_ends(&self, bytes: &[u8]) -> Result<Vec<usize>, DecodeError> {
        let mut ends = Vec::with_capacity(self.blocks as usize);
        for block in 0..self.blocks {
            let end = self.first_slot(bytes, block + 1);
            if end < ends.last().map_or(0, |&at| at as u64) || end > self.slots {
                return Err(DecodeError::DamagedBlock(block));
            }
            ends.push(end as usize);
        }
        Ok(ends)
    }
}
