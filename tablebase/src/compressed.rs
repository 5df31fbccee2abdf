//! Compressed value arrays (format version 2): a grammar of pairs over the value bytes, one
//! canonical Huffman code for the whole table, and small fixed-size blocks, each with its own
//! checksum, so that one value is read by decoding part of one block.
//!
//! - **Don't-care slots.** A slot whose side to move can capture the royal is a win in 1 by
//!   the rules; every reader asks the rules first for such positions (see
//!   [`crate::Table::value_of`]), so the compressor may store anything there. It stores the
//!   value before it, which turns most of them into runs.
//! - **The grammar** (Re-Pair): the most frequent pairs of adjacent symbols become new
//!   symbols, pass after pass, up to [`MAX_SYMBOLS`]. A symbol stands for a run of slots; its
//!   length is known from the grammar.
//! - **Blocks** hold whole symbols, [`BLOCK_BYTES`] bytes each. A sparse index says which
//!   block holds every `2^k`-th slot; from there the block's first slots lead to the right one.
//!   Reading slot `s` copies its block, checks the block's checksum, walks the codes until the
//!   symbol that covers `s`, and descends that symbol's pairs to the byte.
//!
//! The layout is documented in `tables/README.md`; [`layout`] names each field.

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// Bytes per block.
pub const BLOCK_BYTES: usize = 128;
/// Symbols at most: value bytes and pairs together (so a code never exceeds 24 bits).
pub const MAX_SYMBOLS: usize = 4096;
/// The longest Huffman code.
const MAX_CODE_BITS: u32 = 24;
/// Where in a block its hint points: the first symbol at or past this bit.
const HINT_BIT: u64 = (BLOCK_BYTES * 8 / 2) as u64;
/// Low bits of a hint that hold the symbol's bit offset (the rest: its slot offset).
const HINT_BIT_BITS: u32 = 11;
/// Bits of the first-level decoding table.
const FAST_BITS: u32 = 11;
/// Pairs made new symbols in one pass over the sequence.
const PAIRS_PER_PASS: usize = 48;
/// A pair becomes a symbol only if it occurs this often (fewer do not pay for their rule).
const MIN_PAIR_COUNT: u32 = 8;

/// Where each field of the compressed section lies, relative to its start (the header's
/// `values_offset`).
pub mod layout {
    /// The section's size in bytes, this field included (u64).
    pub const SECTION_BYTES: usize = 0;
    /// Slot of the game's longest win, `u64::MAX` when none (u64).
    pub const LONGEST_WIN_SLOT: usize = 8;
    /// Symbols, value bytes included (u32).
    pub const SYMBOLS: usize = 16;
    /// Value bytes among them: symbols `0..leaves` stand for one byte each (u32).
    pub const LEAVES: usize = 20;
    /// Bytes per block (u32).
    pub const BLOCK_BYTES: usize = 24;
    /// The sparse index has an entry every `2^sparse_shift` slots (u32).
    pub const SPARSE_SHIFT: usize = 28;
    /// Blocks (u64).
    pub const BLOCKS: usize = 32;
    /// Sparse index entries (u64).
    pub const SPARSE_ENTRIES: usize = 40;
    /// XXH3-64 of the section up to the blocks, this field read as zero (u64): checked when
    /// the table is opened, so that the grammar, the code and the indexes a read relies on are
    /// intact; each block has its own checksum, checked on every read.
    pub const INDEX_CHECKSUM: usize = 48;
    /// The fixed part's size; the arrays follow, each starting at a multiple of 8: the leaf
    /// bytes (u8 each), the pairs (two u16 per non-leaf symbol), the code lengths (u8 per
    /// symbol), the sparse index (u32 per entry: the block holding that slot), each block's
    /// first slot (u64 per block, and the slot count after the last) directly followed by each
    /// block's checksum (u32: the low half of the XXH3-64 of its bytes) and each block's hint
    /// (u32: the first symbol from the block's middle bit on, as its slot offset in the block
    /// in the high 21 bits and its bit offset in the low 11; 0 for none), then the blocks.
    pub const FIXED: usize = 56;
}

/// Compresses `values` into the section's bytes (from `values_offset` up to, not including,
/// the overflow table); `dont_care(slot)` says which slots the rules decide (any byte may be
/// stored there). `longest_win_slot` is kept in the section, since finding it would otherwise
/// need a full decode.
pub fn encode(
    values: &[u8],
    dont_care: &[bool],
    longest_win_slot: Option<u64>,
    progress: &dyn crate::Progress,
) -> Vec<u8> {
    assert_eq!(values.len(), dont_care.len());
    // Leaves: the bytes that occur, in byte order.
    let mut used = [false; 256];
    let mut filled = Vec::with_capacity(values.len());
    let first =
        values.iter().zip(dont_care).find(|(&v, &d)| !d && v != crate::value::OVERFLOW_CODE).map_or(0, |(&v, _)| v);
    let mut previous = first;
    for (&v, &d) in values.iter().zip(dont_care) {
        // A slot the rules decide repeats the byte before it, but never the overflow escape:
        // every 255 byte must have its overflow entry.
        let v = if d { previous } else { v };
        previous = if v == crate::value::OVERFLOW_CODE { first } else { v };
        used[usize::from(v)] = true;
        filled.push(v);
    }
    let leaves: Vec<u8> = (0..=255u8).filter(|&b| used[usize::from(b)]).collect();
    let mut leaf_of = [0u16; 256];
    for (i, &b) in leaves.iter().enumerate() {
        leaf_of[usize::from(b)] = i as u16;
    }
    let mut sequence: Vec<u16> = filled.par_iter().map(|&v| leaf_of[usize::from(v)]).collect();
    drop(filled);
    let mut pairs: Vec<(u16, u16)> = Vec::new();
    let mut symbols = leaves.len();
    progress.phase("grammar of pairs", (MAX_SYMBOLS - symbols) as u64);
    while symbols < MAX_SYMBOLS {
        let chosen = most_frequent_pairs(&sequence, symbols, (MAX_SYMBOLS - symbols).min(PAIRS_PER_PASS));
        if chosen.is_empty() {
            break;
        }
        let mut after = vec![None; symbols];
        for &(a, b) in &chosen {
            after[usize::from(a)] = Some((b, symbols as u16));
            pairs.push((a, b));
            symbols += 1;
        }
        sequence = replace_pairs(&sequence, &after);
        progress.advance(chosen.len() as u64);
    }
    progress.finish_phase();
    let lengths = symbol_lengths(leaves.len(), &pairs);
    let mut frequency = vec![0u64; symbols];
    for &s in &sequence {
        frequency[usize::from(s)] += 1;
    }
    let code_lengths = huffman_lengths(&frequency);
    let codes = canonical_codes(&code_lengths);
    // Blocks: whole symbols, as many as fit.
    let mut blocks: Vec<u8> = Vec::new();
    let mut first_slots: Vec<u64> = Vec::new();
    let mut hints: Vec<u32> = Vec::new();
    let mut writer = BitWriter::default();
    let mut slot = 0u64;
    for &s in &sequence {
        let (code, bits) = codes[usize::from(s)];
        if writer.bits + u64::from(bits) > (BLOCK_BYTES * 8) as u64 || first_slots.is_empty() {
            if !first_slots.is_empty() {
                blocks.extend_from_slice(&writer.finish(BLOCK_BYTES));
            }
            writer = BitWriter::default();
            first_slots.push(slot);
            hints.push(0);
        }
        // The first symbol from the middle of the block on: a read past it starts there.
        let hint = hints.last_mut().expect("a block");
        if *hint == 0 && writer.bits >= HINT_BIT {
            let into = slot - first_slots.last().expect("a block");
            if into < 1 << (32 - HINT_BIT_BITS) {
                *hint = (into as u32) << HINT_BIT_BITS | writer.bits as u32;
            }
        }
        writer.put(code, bits);
        slot += lengths[usize::from(s)];
    }
    if !first_slots.is_empty() {
        blocks.extend_from_slice(&writer.finish(BLOCK_BYTES));
    }
    let block_count = first_slots.len() as u64;
    first_slots.push(slot);
    debug_assert_eq!(slot, values.len() as u64);
    // The sparse index: about one entry per block.
    let per_block = (values.len() as u64).div_ceil(block_count.max(1)).max(1);
    let sparse_shift = 63 - per_block.leading_zeros();
    let entries = (values.len() as u64).div_ceil(1 << sparse_shift);
    let mut sparse = Vec::with_capacity(entries as usize);
    let mut block = 0usize;
    for e in 0..entries {
        let s = e << sparse_shift;
        while first_slots[block + 1] <= s {
            block += 1;
        }
        sparse.push(block as u32);
    }
    let checks: Vec<u32> = blocks.par_chunks(BLOCK_BYTES).map(|b| xxh3_64(b) as u32).collect();

    let mut out = vec![0u8; layout::FIXED];
    out[layout::LONGEST_WIN_SLOT..][..8].copy_from_slice(&longest_win_slot.unwrap_or(u64::MAX).to_le_bytes());
    out[layout::SYMBOLS..][..4].copy_from_slice(&(symbols as u32).to_le_bytes());
    out[layout::LEAVES..][..4].copy_from_slice(&(leaves.len() as u32).to_le_bytes());
    out[layout::BLOCK_BYTES..][..4].copy_from_slice(&(BLOCK_BYTES as u32).to_le_bytes());
    out[layout::SPARSE_SHIFT..][..4].copy_from_slice(&sparse_shift.to_le_bytes());
    out[layout::BLOCKS..][..8].copy_from_slice(&block_count.to_le_bytes());
    out[layout::SPARSE_ENTRIES..][..8].copy_from_slice(&entries.to_le_bytes());
    let align = |out: &mut Vec<u8>| out.resize(out.len().next_multiple_of(8), 0);
    out.extend_from_slice(&leaves);
    align(&mut out);
    for &(a, b) in &pairs {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
    align(&mut out);
    out.extend(code_lengths.iter().map(|&l| l as u8));
    align(&mut out);
    sparse.iter().for_each(|b| out.extend_from_slice(&b.to_le_bytes()));
    align(&mut out);
    first_slots.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
    checks.iter().for_each(|c| out.extend_from_slice(&c.to_le_bytes()));
    hints.iter().for_each(|h| out.extend_from_slice(&h.to_le_bytes()));
    align(&mut out);
    let size = (out.len() + blocks.len()) as u64;
    out[layout::SECTION_BYTES..][..8].copy_from_slice(&size.to_le_bytes());
    let index_checksum = xxh3_64(&out);
    out[layout::INDEX_CHECKSUM..][..8].copy_from_slice(&index_checksum.to_le_bytes());
    out.extend_from_slice(&blocks);
    out
}

/// Up to `wanted` pairs of adjacent symbols, most frequent first, each occurring at least
/// [`MIN_PAIR_COUNT`] times, no two sharing a symbol (so that replacing them all in one pass
/// counts what was counted). Runs `aaaa` count as two `aa`, not three. `symbols` bounds every
/// symbol of the sequence: the counts are one dense array of `symbols²`.
fn most_frequent_pairs(sequence: &[u16], symbols: usize, wanted: usize) -> Vec<(u16, u16)> {
    let counts = sequence
        .par_chunks(1 << 22)
        .fold(
            || vec![0u32; symbols * symbols],
            |mut counts, chunk| {
                let mut i = 0;
                while i + 1 < chunk.len() {
                    let (a, b) = (chunk[i], chunk[i + 1]);
                    counts[usize::from(a) * symbols + usize::from(b)] += 1;
                    // Within a run, pairs do not overlap.
                    i += if a == b && chunk.get(i + 2) == Some(&a) { 2 } else { 1 };
                }
                counts
            },
        )
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        })
        .unwrap_or_default();
    let mut ranked: Vec<(u32, u32)> =
        counts.iter().enumerate().filter(|&(_, &n)| n >= MIN_PAIR_COUNT).map(|(pair, &n)| (pair as u32, n)).collect();
    ranked.sort_unstable_by_key(|&(pair, n)| (std::cmp::Reverse(n), pair));
    let mut taken = vec![false; symbols];
    let mut chosen = Vec::new();
    for (pair, _) in ranked {
        let (a, b) = ((pair as usize / symbols) as u16, (pair as usize % symbols) as u16);
        if taken[usize::from(a)] || taken[usize::from(b)] {
            continue;
        }
        taken[usize::from(a)] = true;
        taken[usize::from(b)] = true;
        chosen.push((a, b));
        if chosen.len() == wanted {
            break;
        }
    }
    chosen
}

/// The sequence with every chosen pair replaced by its symbol, left to right; `after[a]` is
/// the pair that starts with `a` (no two chosen pairs share a symbol), as (second, new symbol).
fn replace_pairs(sequence: &[u16], after: &[Option<(u16, u16)>]) -> Vec<u16> {
    let mut out = Vec::with_capacity(sequence.len());
    let mut i = 0;
    while i < sequence.len() {
        if let (Some((b, s)), Some(&next)) = (after[usize::from(sequence[i])], sequence.get(i + 1)) {
            if next == b {
                out.push(s);
                i += 2;
                continue;
            }
        }
        out.push(sequence[i]);
        i += 1;
    }
    out
}

/// Slots each symbol stands for.
pub(crate) fn symbol_lengths(leaves: usize, pairs: &[(u16, u16)]) -> Vec<u64> {
    let mut lengths = vec![1u64; leaves];
    for &(a, b) in pairs {
        // Saturating: a hostile file's grammar could double a length past any integer.
        let length = lengths[usize::from(a)].saturating_add(lengths[usize::from(b)]);
        lengths.push(length);
    }
    lengths
}

/// Huffman code lengths for these frequencies (0 for symbols never coded), none longer than
/// [`MAX_CODE_BITS`]: when a code would be, the frequencies are flattened and it is rebuilt.
fn huffman_lengths(frequency: &[u64]) -> Vec<u32> {
    let mut weights: Vec<u64> = frequency.to_vec();
    loop {
        let lengths = unlimited_huffman_lengths(&weights);
        if lengths.iter().all(|&l| l <= MAX_CODE_BITS) {
            return lengths;
        }
        weights.iter_mut().filter(|w| **w > 0).for_each(|w| *w = (*w >> 1) | 1);
    }
}

fn unlimited_huffman_lengths(weights: &[u64]) -> Vec<u32> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let coded: Vec<usize> = (0..weights.len()).filter(|&s| weights[s] > 0).collect();
    let mut lengths = vec![0u32; weights.len()];
    if coded.len() == 1 {
        lengths[coded[0]] = 1;
        return lengths;
    }
    // Nodes: leaves first, then internal nodes; parent links give each leaf's depth.
    let mut parent = vec![usize::MAX; coded.len()];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        coded.iter().enumerate().map(|(i, &s)| Reverse((weights[s], i))).collect();
    while heap.len() > 1 {
        let Reverse((w1, n1)) = heap.pop().expect("two nodes");
        let Reverse((w2, n2)) = heap.pop().expect("two nodes");
        let node = parent.len();
        parent.push(usize::MAX);
        parent[n1] = node;
        parent[n2] = node;
        heap.push(Reverse((w1 + w2, node)));
    }
    let mut depth = vec![0u32; parent.len()];
    for n in (0..parent.len()).rev() {
        if parent[n] != usize::MAX {
            depth[n] = depth[parent[n]] + 1;
        }
    }
    for (i, &s) in coded.iter().enumerate() {
        lengths[s] = depth[i];
    }
    lengths
}

/// Canonical codes (code, bits) for these lengths: by length, then by symbol.
fn canonical_codes(lengths: &[u32]) -> Vec<(u32, u32)> {
    let mut order: Vec<usize> = (0..lengths.len()).filter(|&s| lengths[s] > 0).collect();
    order.sort_by_key(|&s| (lengths[s], s));
    let mut codes = vec![(0u32, 0u32); lengths.len()];
    let mut code = 0u32;
    let mut previous = 0u32;
    for s in order {
        code <<= lengths[s] - previous;
        previous = lengths[s];
        codes[s] = (code, lengths[s]);
        code += 1;
    }
    codes
}

/// Bits, most significant first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    bits: u64,
}

impl BitWriter {
    fn put(&mut self, code: u32, bits: u32) {
        for i in (0..bits).rev() {
            if self.bits.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if code >> i & 1 == 1 {
                *self.bytes.last_mut().expect("a byte") |= 0x80 >> (self.bits % 8);
            }
            self.bits += 1;
        }
    }

    fn finish(mut self, size: usize) -> Vec<u8> {
        self.bytes.resize(size, 0);
        self.bytes
    }
}

/// The decoding side of a compressed section: parsed once when the table is opened.
#[derive(Debug)]
pub struct Decoder {
    leaves: Vec<u8>,
    leaf_count: usize,
    pairs: Vec<(u16, u16)>,
    lengths: Vec<u64>,
    /// First-level table: `FAST_BITS` leading bits → (symbol, code bits), bits 0 if longer.
    fast: Vec<(u16, u8)>,
    /// Canonical decoding by length: for each length, the first code (left-aligned in 32
    /// bits) past that length's codes, the first code, and where its symbols start in `sorted`.
    limit: Vec<(u64, u32, u32)>,
    sorted: Vec<u16>,
    sparse_shift: u32,
    sparse_at: usize,
    firsts_at: usize,
    checks_at: usize,
    hints_at: usize,
    blocks_at: usize,
    blocks: u64,
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

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
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
        let sparse_shift = u32_at(bytes, layout::SPARSE_SHIFT);
        let blocks = u64_at(bytes, layout::BLOCKS);
        let sparse_entries = u64_at(bytes, layout::SPARSE_ENTRIES);
        if sparse_shift > 40 || sparse_entries != slots.div_ceil(1 << sparse_shift) || (blocks == 0) != (slots == 0) {
            return Err(Malformed("sparse index"));
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
        let lengths_at = take(symbols as u64)?;
        let sparse_at = take(4 * sparse_entries)?;
        // The first slots, the checksums and the hints, with no gap between them.
        let firsts_at = take(8 * (blocks + 1) + 8 * blocks)?;
        let checks_at = firsts_at + 8 * (blocks as usize + 1);
        let hints_at = checks_at + 4 * blocks as usize;
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
            return Err(Malformed("the grammar, code or index fails its checksum"));
        }
        let leaves = bytes[leaves_at..leaves_at + leaf_count].to_vec();
        if leaves.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Malformed("leaf bytes not increasing"));
        }
        let mut pairs = Vec::with_capacity(symbols - leaf_count);
        for i in 0..symbols - leaf_count {
            let (a, b) = (
                bytes[pairs_at + 4 * i] as u16 | (bytes[pairs_at + 4 * i + 1] as u16) << 8,
                bytes[pairs_at + 4 * i + 2] as u16 | (bytes[pairs_at + 4 * i + 3] as u16) << 8,
            );
            // A pair refers to earlier symbols only, so the grammar has no cycle.
            if usize::from(a) >= leaf_count + i || usize::from(b) >= leaf_count + i {
                return Err(Malformed("a pair refers to a later symbol"));
            }
            pairs.push((a, b));
        }
        let lengths = symbol_lengths(leaf_count, &pairs);
        let code_lengths: Vec<u32> = bytes[lengths_at..lengths_at + symbols].iter().map(|&l| u32::from(l)).collect();
        if code_lengths.iter().any(|&l| l > MAX_CODE_BITS) {
            return Err(Malformed("code length"));
        }
        // Kraft: a complete prefix code (or a single one-bit code).
        let kraft: u64 = code_lengths.iter().filter(|&&l| l > 0).map(|&l| 1u64 << (MAX_CODE_BITS - l)).sum();
        let coded = code_lengths.iter().filter(|&&l| l > 0).count();
        if kraft > 1 << MAX_CODE_BITS || (coded > 1 && kraft != 1 << MAX_CODE_BITS) {
            return Err(Malformed("code lengths do not form a prefix code"));
        }
        let codes = canonical_codes(&code_lengths);
        let mut sorted: Vec<u16> = (0..symbols as u16).filter(|&s| code_lengths[usize::from(s)] > 0).collect();
        sorted.sort_by_key(|&s| (code_lengths[usize::from(s)], s));
        let mut limit = Vec::new();
        let mut index = 0u32;
        for bits in 1..=MAX_CODE_BITS {
            let of_length: Vec<u16> =
                sorted.iter().copied().filter(|&s| code_lengths[usize::from(s)] == bits).collect();
            if of_length.is_empty() {
                continue;
            }
            let first = codes[usize::from(of_length[0])].0;
            let end = u64::from(first + of_length.len() as u32) << (32 - bits);
            limit.push((end, first, index | bits << 24));
            index += of_length.len() as u32;
        }
        let mut fast = vec![(0u16, 0u8); 1 << FAST_BITS];
        for (s, &(code, bits)) in codes.iter().enumerate() {
            if bits > 0 && bits <= FAST_BITS {
                let start = (code << (FAST_BITS - bits)) as usize;
                for entry in &mut fast[start..start + (1 << (FAST_BITS - bits))] {
                    *entry = (s as u16, bits as u8);
                }
            }
        }
        let decoder = Decoder {
            leaves,
            leaf_count,
            pairs,
            lengths,
            fast,
            limit,
            sorted,
            sparse_shift,
            sparse_at,
            firsts_at,
            checks_at,
            hints_at,
            blocks_at,
            blocks,
            sparse_entries,
            longest_win_slot: (longest != u64::MAX).then_some(longest),
        };
        if blocks > 0 && (decoder.first_slot(bytes, 0) != 0 || decoder.first_slot(bytes, blocks) != slots) {
            return Err(Malformed("block slots"));
        }
        if longest != u64::MAX && longest >= slots {
            return Err(Malformed("longest win slot"));
        }
        Ok(decoder)
    }

    fn first_slot(&self, bytes: &[u8], block: u64) -> u64 {
        u64_at(bytes, self.firsts_at + 8 * block as usize)
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
        let first = self.first_slot(bytes, block);
        if first > slot {
            return Err(DecodeError::DamagedBlock(block));
        }
        let copy = self.checked_block(bytes, block)?;
        let mut offset = slot - first;
        let mut bit = 0usize;
        // Past the block's middle symbol, the walk starts there. (The hints are covered by
        // the index checksum; a bit offset past the block is refused by the walk.)
        let hint = u32_at(bytes, self.hints_at + 4 * block as usize);
        if hint != 0 {
            let (hint_bit, hint_slot) =
                ((hint & ((1 << HINT_BIT_BITS) - 1)) as usize, u64::from(hint >> HINT_BIT_BITS));
            if offset >= hint_slot {
                offset -= hint_slot;
                bit = hint_bit;
            }
        }
        let symbol = loop {
            let symbol = self.next_symbol(&copy, &mut bit, block)?;
            let length = self.lengths[usize::from(symbol)];
            if offset < length {
                break symbol;
            }
            offset -= length;
        };
        let mut symbol = usize::from(symbol);
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

    /// A copy of `block`, checked against its checksum: what is decoded is what was checked,
    /// even if the file changes meanwhile. Eight zero bytes follow, for reading past the end.
    fn checked_block(&self, bytes: &[u8], block: u64) -> Result<[u8; BLOCK_BYTES + 8], DecodeError> {
        let start = self.blocks_at + BLOCK_BYTES * block as usize;
        let mut copy = [0u8; BLOCK_BYTES + 8];
        copy[..BLOCK_BYTES].copy_from_slice(&bytes[start..start + BLOCK_BYTES]);
        if xxh3_64(&copy[..BLOCK_BYTES]) as u32 != u32_at(bytes, self.checks_at + 4 * block as usize) {
            return Err(DecodeError::DamagedBlock(block));
        }
        Ok(copy)
    }

    /// The symbol whose code starts at `bit` of a block copy; `bit` moves past it.
    #[inline]
    fn next_symbol(&self, copy: &[u8; BLOCK_BYTES + 8], bit: &mut usize, block: u64) -> Result<u16, DecodeError> {
        if *bit >= BLOCK_BYTES * 8 {
            return Err(DecodeError::DamagedBlock(block));
        }
        let byte = *bit / 8;
        let window = u64::from_be_bytes(copy[byte..byte + 8].try_into().expect("8 bytes")) << (*bit % 8);
        let top = (window >> 32) as u32;
        let (symbol, bits) = match self.fast[(top >> (32 - FAST_BITS)) as usize] {
            (symbol, bits) if bits > 0 => (symbol, u32::from(bits)),
            _ => self.slow_symbol(top).ok_or(DecodeError::DamagedBlock(block))?,
        };
        *bit += bits as usize;
        Ok(symbol)
    }

    /// Appends the stored bytes of every slot of `block` to `out`.
    fn expand_block(&self, bytes: &[u8], block: u64, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let copy = self.checked_block(bytes, block)?;
        let (first, end) = (self.first_slot(bytes, block), self.first_slot(bytes, block + 1));
        let wanted = end.checked_sub(first).ok_or(DecodeError::DamagedBlock(block))?;
        let mut bit = 0usize;
        let mut done = 0u64;
        let mut stack = Vec::new();
        while done < wanted {
            let symbol = self.next_symbol(&copy, &mut bit, block)?;
            done += self.lengths[usize::from(symbol)];
            if done > wanted {
                return Err(DecodeError::DamagedBlock(block));
            }
            stack.push(usize::from(symbol));
            while let Some(symbol) = stack.pop() {
                if symbol < self.leaf_count {
                    out.push(self.leaves[symbol]);
                } else {
                    let (a, b) = self.pairs[symbol - self.leaf_count];
                    stack.push(usize::from(b));
                    stack.push(usize::from(a));
                }
            }
        }
        Ok(())
    }

    /// Every stored byte, in slot order, blocks decoded in parallel (the audit's and the
    /// decompressor's read).
    pub fn decode_all(&self, bytes: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let parts: Vec<Vec<u8>> = (0..self.blocks)
            .into_par_iter()
            .map(|block| {
                let mut out = Vec::new();
                self.expand_block(bytes, block, &mut out).map(|()| out)
            })
            .collect::<Result<_, _>>()?;
        Ok(parts.concat())
    }

    /// Canonical decoding of a code longer than the first-level table.
    fn slow_symbol(&self, top: u32) -> Option<(u16, u32)> {
        let &(_, first, packed) = self.limit.iter().find(|&&(end, _, _)| u64::from(top) < end)?;
        let bits = packed >> 24;
        let index = (packed & 0xff_ffff).wrapping_add(top >> (32 - bits)).wrapping_sub(first);
        Some((*self.sorted.get(index as usize)?, bits))
    }
}
