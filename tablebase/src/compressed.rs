//! Compressed value arrays (format version 4): a grammar of pairs over the value bytes, codes
//! chosen by what came just before, and small fixed-size blocks, each with its own checksum,
//! so that one value is read by decoding part of one block.
//!
//! - **Don't-care slots.** A slot whose side to move can capture the royal is a win in 1 by
//!   the rules; every reader asks the rules first for such positions (see
//!   [`crate::Table::value_of`]), so the compressor may store anything there. It stores the
//!   value before it, which turns most of them into runs.
//! - **The grammar** (Re-Pair): the most frequent pairs of adjacent symbols become new
//!   symbols, pass after pass, up to [`MAX_SYMBOLS`]. A symbol stands for a run of slots; its
//!   length is known from the grammar.
//! - **Contexts.** The symbols fall into a few classes, grouped by which symbols tend to follow
//!   them; each symbol is coded with the canonical Huffman code of the classes of the two
//!   symbols before it (a value run predicts the next one far better than the table's overall
//!   frequencies do). The first two symbols of each part of a block have no such past and use
//!   one code over every symbol. The compressor tries a few class counts and keeps the smallest
//!   file (small tables cannot pay for many codes).
//! - **Blocks** hold whole symbols, [`BLOCK_BYTES`] bytes each, in parts
//!   ([`DEFAULT_PARTS`] unless the caller chooses) that each start at a fixed bit with a fresh
//!   context, so a read starts at the part that holds its slot. A sparse index says which
//!   block holds every `2^k`-th slot; from there the blocks' first slots lead to the right
//!   one. Reading slot `s` copies its block, checks the
//!   block's checksum, walks the codes of its part until the symbol that covers `s`, and
//!   descends that symbol's pairs to the byte.
//!
//! The layout is documented in `tables/README.md`; [`layout`] names each field.
//!
//! Why these choices (the pass sizes, the counts kept from pass to pass, the classes), how
//! far `KKCFR` is from 0.05 byte per position and what was tried to close the gap: the
//! measurements are in `docs/measurements.md` ("Compressed tables: the runs behind the
//! format").

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// Bytes per block.
pub const BLOCK_BYTES: usize = 512;
/// Symbols at most: value bytes and pairs together.
pub const MAX_SYMBOLS: usize = 4096;
/// The longest Huffman code.
const MAX_CODE_BITS: u32 = 24;
/// Bits of a block.
const BLOCK_BITS: usize = BLOCK_BYTES * 8;
/// Parts of a block unless the caller chooses: each part starts afresh, so a read walks at
/// most one; more parts make shorter reads and cost 12 bits more per block each.
pub const DEFAULT_PARTS: usize = 8;
/// The most parts per block.
pub const MAX_PARTS: usize = 16;
/// Bits of a part's start, counted in slots from the previous part's start: a part that would
/// start further on ends the block instead.
const START_BITS: u32 = 12;
/// Bits of a stored code length (at most [`MAX_CODE_BITS`]).
const LENGTH_BITS: u32 = 5;
/// Bits of the first-level decoding table of each context.
const FAST_BITS: u32 = 10;
/// Pairs made new symbols in one pass over the sequence, at least; see [`pairs_per_pass`].
const PAIRS_PER_PASS: usize = 48;
/// A pass makes one new symbol per this many symbols so far, when that is more than
/// [`PAIRS_PER_PASS`].
const SYMBOLS_PER_NEW_PAIR: usize = 24;
/// Symbols per chunk: pairs are counted and replaced within chunks (a pair across two chunks
/// stays apart), and a long sequence is counted on a sample of them.
const COUNT_CHUNK: usize = 1 << 20;
/// Symbols per stretch or piece of a chunk, about, when its pairs are counted or replaced in
/// parallel.
const STRETCH_SYMBOLS: usize = 1 << 17;
/// First symbols per parallel job at most when counting pairs grouped by their first symbol.
const RANKED_FIRSTS: usize = 256;
/// Parallel jobs per thread when counting pairs grouped by their first symbol.
const JOBS_PER_THREAD: usize = 8;
/// Symbols counted at most in one pass: a longer sequence is counted on a sample.
const COUNTED_SYMBOLS: usize = 1 << 23;
/// A pair becomes a symbol only if it occurs this often (fewer do not pay for their rule).
const MIN_PAIR_COUNT: u32 = 8;
/// The most slots one symbol may stand for: with at most one symbol per bit, the blocks of a
/// group of [`GROUP_BLOCKS`] then start fewer than 2^32 slots after its first.
const MAX_SYMBOL_SLOTS: u64 = 1 << 15;
/// Blocks per group: each group has its first slot in full, each block its offset from it.
const GROUP_BLOCKS: usize = 32;
/// Blocks per sparse index entry, about.
const BLOCKS_PER_ENTRY: u64 = 16;
/// The class counts the compressor tries (0: one code, no contexts).
const CLASS_CHOICES: [usize; 4] = [0, 4, 8, 16];
/// Rounds of regrouping the classes.
const CLUSTER_ROUNDS: usize = 10;
/// The most classes a file may declare.
const MAX_CLASSES: usize = 16;

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
    /// the table is opened, so that the grammar, the codes and the indexes a read relies on
    /// are intact; each block has its own checksum, checked on every read.
    pub const INDEX_CHECKSUM: usize = 48;
    /// Symbol classes `K`, at most 16; 0 for a single code (u32). There are `1 + K²` codes.
    pub const CLASSES: usize = 56;
    /// Code entries of all codes together (u32).
    pub const CODE_ENTRIES: usize = 60;
    /// Parts per block `P`, at most 16 (u32); the next 4 bytes are zero.
    pub const PARTS: usize = 64;
    /// The fixed part's size; the arrays follow, each starting at a multiple of 8: the leaf
    /// bytes (u8 each), the pairs (two u16 per non-leaf symbol), each symbol's class (u8 per
    /// symbol, none when `K` is 0), for each code a bitmap of the symbols it codes (a bit per
    /// symbol), the code lengths of the coded symbols (5 bits each, packed from the lowest bit
    /// on, code after code), the sparse index (u32 per entry: the block holding that slot),
    /// each group's first slot (u64 per group of 32 blocks), directly followed by each block's
    /// first slot as an offset from its group's (u32) and then by each block's record: its
    /// checksum (u32: the low half of the XXH3-64 of its bytes) and, for its parts 2 to `P`,
    /// how many slots after the part before each starts (12 bits each, packed as the code
    /// lengths are, 0 for a part the block does not use); then the blocks.
    pub const FIXED: usize = 72;
}

/// Compresses `values` into the section's bytes (from `values_offset` up to, not including,
/// the overflow table); `dont_care(slot)` says which slots the rules decide (any byte may be
/// stored there). `longest_win_slot` is kept in the section, since finding it would otherwise
/// need a full decode. `parts` (1 to [`MAX_PARTS`]) divides each block: see [`DEFAULT_PARTS`].
pub fn encode(
    values: &[u8],
    dont_care: impl Fn(usize) -> bool + Sync,
    longest_win_slot: Option<u64>,
    parts: usize,
    progress: &dyn crate::Progress,
) -> Vec<u8> {
    // The bytes stored: a slot the rules decide repeats the byte of the nearest slot before it
    // that they do not decide, but never the overflow escape (every 255 byte must have its
    // overflow entry): `first`, the first such byte that is not 255, stands in for it, and
    // for a start without one.
    use crate::value::OVERFLOW_CODE;
    let first = (0..values.len())
        .find(|&slot| !dont_care(slot) && values[slot] != OVERFLOW_CODE)
        .map_or(0, |slot| values[slot]);
    let repeated = |byte: u8| if byte == OVERFLOW_CODE { first } else { byte };
    // Leaves: the bytes that occur, in byte order: every byte of a slot the rules do not
    // decide, and `first` if some slot repeats it.
    const FILL_CHUNK: usize = 1 << 16;
    let used = (0..values.len().div_ceil(FILL_CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut used = [false; 256];
            for slot in c * FILL_CHUNK..((c + 1) * FILL_CHUNK).min(values.len()) {
                used[usize::from(if dont_care(slot) { first } else { values[slot] })] = true;
            }
            used
        })
        .reduce(|| [false; 256], |a, b| std::array::from_fn(|i| a[i] || b[i]));
    let leaves: Vec<u8> = (0..=255u8).filter(|&b| used[usize::from(b)]).collect();
    let mut leaf_of = [0u16; 256];
    for (i, &b) in leaves.iter().enumerate() {
        leaf_of[usize::from(b)] = i as u16;
    }
    // The leaves of the slots `start..start + out.len()`, written to `out`.
    let fill = |start: usize, out: &mut [u16]| {
        let mut previous = (0..start).rev().find(|&slot| !dont_care(slot)).map_or(first, |slot| repeated(values[slot]));
        for (out, slot) in out.iter_mut().zip(start..) {
            let byte = if dont_care(slot) { previous } else { values[slot] };
            previous = repeated(byte);
            *out = leaf_of[usize::from(byte)];
        }
    };
    let mut pairs: Vec<(u16, u16)> = Vec::new();
    let mut lengths = vec![1u64; leaves.len()];
    progress.phase("grammar of pairs", (MAX_SYMBOLS - leaves.len()) as u64);
    let mut sequence = first_pass(values.len(), fill, &mut pairs, &mut lengths);
    progress.advance(pairs.len() as u64);
    // Once the sequence is counted whole, its counts are kept from pass to pass, and the
    // pass writes the new sequence beside the old one (`spare` holds the one before).
    let (mut counts, mut spare): (Option<PairCounts>, Vec<u16>) = (None, Vec::new());
    while lengths.len() < MAX_SYMBOLS {
        let wanted = pairs_per_pass(lengths.len());
        let chosen = if counted_whole(sequence.len()) {
            let counts = counts.get_or_insert_with(|| PairCounts::of(&sequence, lengths.len()));
            chosen_pairs(counts.ranked(lengths.len()), &lengths, wanted)
        } else {
            most_frequent_pairs(&sequence, &lengths, wanted)
        };
        if chosen.is_empty() {
            break;
        }
        let after = adopt(&chosen, &mut pairs, &mut lengths);
        if let Some(counts) = counts.as_mut() {
            let sites = replaced_noting(&sequence, &after, &mut spare);
            counts.replaced(&sequence, &spare, &sites, lengths.len());
            std::mem::swap(&mut sequence, &mut spare);
        } else {
            replace_pairs(&mut sequence, &after);
            if sequence.len() < sequence.capacity() / 2 {
                // Early passes halve the sequence: its memory goes back as it shrinks.
                sequence.shrink_to_fit();
            }
        }
        progress.advance(chosen.len() as u64);
    }
    drop((counts, spare));
    progress.finish_phase();
    let symbols = lengths.len();
    let contexts = Contexts::choose(&sequence, leaves.len(), &pairs, progress);
    let codes: Vec<Vec<(u32, u32)>> = contexts.lengths.iter().map(|l| canonical_codes(l)).collect();

    // Blocks: whole symbols in parts, each part starting afresh.
    assert!((1..=MAX_PARTS).contains(&parts), "1 to {MAX_PARTS} parts per block");
    let mut blocks = Blocks { parts, ..Blocks::default() };
    let mut slot = 0u64;
    for &s in &sequence {
        // A symbol that does not fit what is left of a part gives up its pair's left half, if
        // that fits, and goes on with the right half (the same slots, fewer bits left unused at
        // the part's end); the right half must have a code of its own after a fresh start.
        let mut pending = s;
        loop {
            let (code, bits) = codes[blocks.context(&contexts)][usize::from(pending)];
            if bits > 0 && blocks.fits(bits) {
                blocks.put(code, bits, pending);
                slot += lengths[usize::from(pending)];
                break;
            }
            if let Some(&(left, right)) = pairs.get(usize::from(pending).wrapping_sub(leaves.len())) {
                let (code, bits) = codes[blocks.context(&contexts)][usize::from(left)];
                if bits > 0 && blocks.fits(bits) && codes[0][usize::from(right)].1 > 0 {
                    blocks.put(code, bits, left);
                    slot += lengths[usize::from(left)];
                    pending = right;
                    continue;
                }
            }
            // Every symbol of the sequence, and every right half taken, has a code in context
            // 0, which a fresh part starts with.
            blocks.next_part(slot);
        }
    }
    let (blocks, first_slots, starts) = blocks.finish();
    let block_count = first_slots.len() as u64;
    debug_assert_eq!(slot, values.len() as u64);
    // The sparse index: about one entry per block.
    let per_entry = (values.len() as u64 * BLOCKS_PER_ENTRY).div_ceil(block_count.max(1)).max(1);
    let sparse_shift = 63 - per_entry.leading_zeros();
    let entries = (values.len() as u64).div_ceil(1 << sparse_shift);
    let mut sparse = Vec::with_capacity(entries as usize);
    let mut block = 0usize;
    for e in 0..entries {
        let s = e << sparse_shift;
        while block + 1 < first_slots.len() && first_slots[block + 1] <= s {
            block += 1;
        }
        sparse.push(block as u32);
    }
    let checks: Vec<u32> = blocks.par_chunks(BLOCK_BYTES).map(|b| xxh3_64(b) as u32).collect();

    let mut out = vec![0u8; layout::FIXED];
    let code_entries: usize = contexts.lengths.iter().map(|l| l.iter().filter(|&&b| b > 0).count()).sum();
    out[layout::LONGEST_WIN_SLOT..][..8].copy_from_slice(&longest_win_slot.unwrap_or(u64::MAX).to_le_bytes());
    out[layout::SYMBOLS..][..4].copy_from_slice(&(symbols as u32).to_le_bytes());
    out[layout::LEAVES..][..4].copy_from_slice(&(leaves.len() as u32).to_le_bytes());
    out[layout::BLOCK_BYTES..][..4].copy_from_slice(&(BLOCK_BYTES as u32).to_le_bytes());
    out[layout::SPARSE_SHIFT..][..4].copy_from_slice(&sparse_shift.to_le_bytes());
    out[layout::BLOCKS..][..8].copy_from_slice(&block_count.to_le_bytes());
    out[layout::SPARSE_ENTRIES..][..8].copy_from_slice(&entries.to_le_bytes());
    out[layout::CLASSES..][..4].copy_from_slice(&(contexts.classes as u32).to_le_bytes());
    out[layout::CODE_ENTRIES..][..4].copy_from_slice(&(code_entries as u32).to_le_bytes());
    out[layout::PARTS..][..4].copy_from_slice(&(parts as u32).to_le_bytes());
    let align = |out: &mut Vec<u8>| out.resize(out.len().next_multiple_of(8), 0);
    out.extend_from_slice(&leaves);
    align(&mut out);
    for &(a, b) in &pairs {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
    align(&mut out);
    out.extend_from_slice(&contexts.class_of);
    align(&mut out);
    for l in &contexts.lengths {
        let mut coded = vec![0u8; symbols.div_ceil(8)];
        l.iter().enumerate().filter(|&(_, &b)| b > 0).for_each(|(s, _)| coded[s / 8] |= 1 << (s % 8));
        out.extend_from_slice(&coded);
    }
    align(&mut out);
    let stored_lengths = contexts.lengths.iter().flat_map(|l| l.iter().copied().filter(|&b| b > 0));
    out.extend(pack(stored_lengths, LENGTH_BITS));
    align(&mut out);
    sparse.iter().for_each(|b| out.extend_from_slice(&b.to_le_bytes()));
    align(&mut out);
    for group in first_slots.chunks(GROUP_BLOCKS) {
        out.extend_from_slice(&group[0].to_le_bytes());
    }
    for (b, &first) in first_slots.iter().enumerate() {
        let offset = first - first_slots[b / GROUP_BLOCKS * GROUP_BLOCKS];
        out.extend_from_slice(&u32::try_from(offset).expect("a group spans fewer than 2^32 slots").to_le_bytes());
    }
    // Each block's checksum and part starts side by side: a read fetches them together.
    for (b, check) in checks.iter().enumerate() {
        out.extend_from_slice(&check.to_le_bytes());
        out.extend(pack(starts[b * (parts - 1)..][..parts - 1].iter().map(|&m| u32::from(m)), START_BITS));
    }
    align(&mut out);
    let size = (out.len() + blocks.len()) as u64;
    out[layout::SECTION_BYTES..][..8].copy_from_slice(&size.to_le_bytes());
    let index_checksum = xxh3_64(&out);
    out[layout::INDEX_CHECKSUM..][..8].copy_from_slice(&index_checksum.to_le_bytes());
    out.extend_from_slice(&blocks);
    out
}

/// `values` of `bits` bits each (each below `2^bits`), packed from the lowest bit of the first
/// byte on, the last byte padded with zeros.
fn pack(values: impl Iterator<Item = u32>, bits: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut word, mut filled) = (0u64, 0u32);
    for value in values {
        debug_assert!(value < 1 << bits);
        word |= u64::from(value) << filled;
        filled += bits;
        while filled >= 8 {
            out.push(word as u8);
            word >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(word as u8);
    }
    out
}

/// The bytes [`pack`] writes for `count` values of `bits` bits.
fn packed_bytes(count: usize, bits: u32) -> usize {
    (count * bits as usize).div_ceil(8)
}

/// The `index`-th value of `bits` bits (at most 25) packed by [`pack`] from `at` on.
fn unpack(bytes: &[u8], at: usize, index: usize, bits: u32) -> u32 {
    let bit = index * bits as usize;
    let byte = at + bit / 8;
    let mut word = [0u8; 4];
    let available = bytes.len().saturating_sub(byte).min(4);
    word[..available].copy_from_slice(&bytes[byte..byte + available]);
    (u32::from_le_bytes(word) >> (bit % 8)) & ((1 << bits) - 1)
}

/// The context of the next symbol: 0 (the code over every symbol) for the first two symbols
/// since a part began, else `1 + K·class(previous) + class(the one before)`.
#[inline]
fn context_of(since_reset: u32, previous: u16, before: u16, class_of: &[u8], classes: usize) -> usize {
    if since_reset < 2 || classes == 0 {
        0
    } else {
        1 + usize::from(class_of[usize::from(previous)]) * classes + usize::from(class_of[usize::from(before)])
    }
}

/// The symbol classes and the code lengths of every context, as the compressor chose them.
struct Contexts {
    classes: usize,
    /// Each symbol's class (empty without classes).
    class_of: Vec<u8>,
    /// Per context, each symbol's code length (0: never coded there).
    lengths: Vec<Vec<u32>>,
}

impl Contexts {
    /// Tries every class count of [`CLASS_CHOICES`] and keeps the one with the smallest codes
    /// and tables.
    fn choose(sequence: &[u16], leaves: usize, pairs: &[(u16, u16)], progress: &dyn crate::Progress) -> Contexts {
        let symbols = leaves + pairs.len();
        progress.phase("contexts", CLASS_CHOICES.len() as u64);
        let followers = followers(sequence, symbols);
        // A first grouping: by the last value byte each symbol ends with.
        let mut last_leaf: Vec<usize> = (0..leaves).collect();
        for &(_, b) in pairs {
            last_leaf.push(last_leaf[usize::from(b)]);
        }
        // How often each symbol occurs: the fresh parts' code, whatever the classes.
        let mut totals = vec![0u64; symbols];
        for &s in sequence {
            totals[usize::from(s)] += 1;
        }
        // The choices are independent: tried in parallel, the first smallest kept.
        let tried: Vec<(u64, Contexts)> = CLASS_CHOICES
            .par_iter()
            .map(|&classes| {
                let class_of = if classes == 0 {
                    Vec::new()
                } else {
                    regroup(&followers, classes, last_leaf.iter().map(|&l| (l % classes) as u8).collect())
                };
                let contexts = 1 + classes * classes;
                let mut counts = vec![0u64; contexts * symbols];
                counts[..symbols].copy_from_slice(&totals);
                if classes > 0 {
                    for w in sequence.windows(3) {
                        counts[context_of(2, w[1], w[0], &class_of, classes) * symbols + usize::from(w[2])] += 1;
                    }
                }
                let lengths: Vec<Vec<u32>> = counts.chunks(symbols).map(huffman_lengths).collect();
                let bits: u64 = counts
                    .chunks(symbols)
                    .zip(&lengths)
                    .skip(usize::from(classes > 0))
                    .map(|(c, l)| c.iter().zip(l).map(|(&n, &b)| n * u64::from(b)).sum::<u64>())
                    .sum();
                let entries: u64 = lengths.iter().map(|l| l.iter().filter(|&&b| b > 0).count() as u64).sum();
                let stored_lengths = packed_bytes(entries as usize, LENGTH_BITS) as u64;
                let bytes = bits / 8 + stored_lengths + (contexts * symbols.div_ceil(8)) as u64 + class_of.len() as u64;
                progress.advance(1);
                (bytes, Contexts { classes, class_of, lengths })
            })
            .collect();
        progress.finish_phase();
        tried.into_iter().min_by_key(|(bytes, _)| *bytes).expect("at least one choice").1
    }
}

/// Per symbol, the symbols that follow it in the sequence, with how often.
type Followers = Vec<Vec<(u16, u32)>>;

/// Groups the symbols into `classes` classes whose members are followed by similar symbols
/// (k-means under the code length each class's combined counts would give), starting from
/// `class_of`.
fn regroup(followers: &Followers, classes: usize, mut class_of: Vec<u8>) -> Vec<u8> {
    let symbols = followers.len();
    for _ in 0..CLUSTER_ROUNDS {
        let mut combined = vec![0f64; classes * symbols];
        for (x, row) in followers.iter().enumerate() {
            let class = &mut combined[usize::from(class_of[x]) * symbols..][..symbols];
            row.iter().for_each(|&(y, n)| class[usize::from(y)] += f64::from(n));
        }
        // Code lengths under each class's counts, smoothed so that no symbol is impossible;
        // symbol by symbol, so that one walk of a row prices it under every class.
        let mut cost = vec![0f64; symbols * classes];
        for (k, row) in combined.chunks(symbols).enumerate() {
            let total: f64 = row.iter().sum::<f64>() + 0.01 * symbols as f64;
            for (y, &n) in row.iter().enumerate() {
                cost[y * classes + k] = -((n + 0.01) / total).log2();
            }
        }
        class_of = followers
            .par_iter()
            .enumerate()
            .map(|(x, row)| {
                if row.is_empty() {
                    return class_of[x];
                }
                let mut bits = [0f64; MAX_CLASSES];
                for &(y, n) in row {
                    let costs = &cost[usize::from(y) * classes..][..classes];
                    bits.iter_mut().zip(costs).for_each(|(bits, &cost)| *bits += f64::from(n) * cost);
                }
                (0..classes).min_by(|&a, &b| bits[a].total_cmp(&bits[b])).expect("a class") as u8
            })
            .collect();
    }
    class_of
}

/// The blocks being written: the current one's bits, its part, and the context state.
#[derive(Default)]
struct Blocks {
    bytes: Vec<u8>,
    first_slots: Vec<u64>,
    /// Per block, for each part after the first, how many slots after the part before it it
    /// starts (0: the block does not use the part).
    starts: Vec<u16>,
    /// The slot at which the current part started.
    part_first: u64,
    parts: usize,
    writer: BitWriter,
    part: usize,
    since_reset: u32,
    previous: u16,
    before: u16,
}

impl Blocks {
    fn context(&self, contexts: &Contexts) -> usize {
        context_of(self.since_reset, self.previous, self.before, &contexts.class_of, contexts.classes)
    }

    /// Whether a code of `bits` fits in the current part (there is always a block once a
    /// symbol has been put).
    fn fits(&self, bits: u32) -> bool {
        let end = (self.part + 1) * (BLOCK_BITS / self.parts);
        !self.first_slots.is_empty() && self.writer.bits + u64::from(bits) <= end as u64
    }

    fn put(&mut self, code: u32, bits: u32, symbol: u16) {
        self.writer.put(code, bits);
        self.before = self.previous;
        self.previous = symbol;
        self.since_reset += 1;
    }

    /// Moves on to the next part of the block, or to a new block, before the symbol that
    /// starts at `slot`.
    fn next_part(&mut self, slot: u64) {
        self.since_reset = 0;
        if !self.first_slots.is_empty() && self.part + 1 < self.parts {
            // The part's start must fit its field; else the block ends here. (A part holds at
            // least one symbol, so a used part never starts 0 slots after the one before.)
            let start = slot - self.part_first;
            if start < 1 << START_BITS {
                self.part += 1;
                self.part_first = slot;
                self.writer.pad_to((self.part * (BLOCK_BITS / self.parts)) as u64);
                let at = self.starts.len() - (self.parts - 1) + self.part - 1;
                self.starts[at] = start as u16;
                return;
            }
        }
        if !self.first_slots.is_empty() {
            let done = std::mem::take(&mut self.writer);
            self.bytes.extend_from_slice(&done.finish());
        }
        self.first_slots.push(slot);
        self.starts.extend(std::iter::repeat_n(0, self.parts - 1));
        self.part = 0;
        self.part_first = slot;
    }

    fn finish(mut self) -> (Vec<u8>, Vec<u64>, Vec<u16>) {
        if !self.first_slots.is_empty() {
            self.bytes.extend_from_slice(&self.writer.finish());
        }
        (self.bytes, self.first_slots, self.starts)
    }
}

/// How many pairs the pass that starts with `symbols` symbols makes new symbols: more as the
/// grammar grows. Every pass walks the whole sequence twice (counting, replacing), and late
/// passes change little of it, so fewer, larger passes save most of the grammar's time; the
/// pairs a larger pass takes further down its ranking are about as frequent as those the next
/// passes would have taken. Never more than [`MAX_SYMBOLS`] leaves room for.
fn pairs_per_pass(symbols: usize) -> usize {
    PAIRS_PER_PASS.max(symbols / SYMBOLS_PER_NEW_PAIR).min(MAX_SYMBOLS - symbols)
}

/// The `chosen` pairs made new symbols: `pairs` and `lengths` grow by them. Returns, for each
/// symbol before them, the pair it starts as (second symbol, new symbol), as
/// [`replace_pairs`] takes it.
fn adopt(chosen: &[(u16, u16)], pairs: &mut Vec<(u16, u16)>, lengths: &mut Vec<u64>) -> Vec<Option<(u16, u16)>> {
    let mut after = vec![None; lengths.len()];
    for &(a, b) in chosen {
        after[usize::from(a)] = Some((b, lengths.len() as u16));
        pairs.push((a, b));
        lengths.push(lengths[usize::from(a)] + lengths[usize::from(b)]);
    }
    after
}

/// The chunks of [`COUNT_CHUNK`] symbols of a sequence of `len` whose pairs a pass counts: a
/// long sequence is counted on an evenly spread sample of them, which picks the same frequent
/// pairs at a fraction of the cost.
fn counted_chunks(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    chunks(len).step_by(counted_step(len))
}

/// Every how many chunks [`counted_chunks`] takes one.
fn counted_step(len: usize) -> usize {
    (len / COUNTED_SYMBOLS).max(1)
}

/// Whether a pass counts every chunk of a sequence of `len`, not a sample: only then can its
/// counts be kept from pass to pass (see `PairCounts`).
fn counted_whole(len: usize) -> bool {
    counted_step(len) == 1
}

/// The chunks of [`COUNT_CHUNK`] symbols of a sequence of `len`, within which pairs are
/// counted and replaced.
fn chunks(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..len.div_ceil(COUNT_CHUNK)).map(move |c| c * COUNT_CHUNK..((c + 1) * COUNT_CHUNK).min(len))
}

/// The grammar's first pass over the leaves of `slots` slots (`fill(start, out)` writes those
/// of the slots from `start` on into `out`), without holding them all at once: the counted
/// chunks are made first and the pairs chosen from them, then each chunk is made again and
/// replaced before the next batch. The same pairs and the same sequence as a pass over the
/// whole leaf sequence, whose replacements never cross a chunk either; but a 5-piece table's
/// sequence is some 20 GB at two bytes a slot, and about 60% of that after the pass.
/// `pairs` and `lengths` grow by the pairs chosen.
fn first_pass(
    slots: usize,
    fill: impl Fn(usize, &mut [u16]) + Sync,
    pairs: &mut Vec<(u16, u16)>,
    lengths: &mut Vec<u64>,
) -> Vec<u16> {
    let made = |range: std::ops::Range<usize>| {
        let mut chunk = vec![0u16; range.len()];
        fill(range.start, &mut chunk);
        chunk
    };
    let chosen = {
        let symbols = lengths.len();
        let counted: Vec<Vec<u16>> = counted_chunks(slots).collect::<Vec<_>>().into_par_iter().map(made).collect();
        let counted: Vec<&[u16]> = counted.iter().map(Vec::as_slice).collect();
        most_frequent_pairs_of(&counted, lengths, pairs_per_pass(symbols))
    };
    let packed = PackedPairs::new(&adopt(&chosen, pairs, lengths));
    /// Chunks made and replaced at once: what is held besides the sequence.
    const BATCH_CHUNKS: usize = 64;
    let chunks: Vec<std::ops::Range<usize>> = chunks(slots).collect();
    // Room for every slot, of which only what is written takes memory.
    let mut sequence = Vec::with_capacity(slots);
    for batch in chunks.chunks(BATCH_CHUNKS) {
        let replaced: Vec<Vec<u16>> = batch
            .par_iter()
            .map(|range| {
                let mut chunk = made(range.clone());
                let kept = replace_in_piece(&mut chunk, &packed, |_| ());
                chunk.truncate(kept);
                chunk
            })
            .collect();
        replaced.iter().for_each(|chunk| sequence.extend_from_slice(chunk));
    }
    sequence
}

/// Up to `wanted` pairs of adjacent symbols, most frequent first, each occurring at least
/// [`MIN_PAIR_COUNT`] times and standing for at most [`MAX_SYMBOL_SLOTS`] slots, no two
/// sharing a symbol (so that replacing them all in one pass counts what was counted). Runs
/// `aaaa` count as two `aa`, not three. `lengths` has the slots of every symbol so far.
fn most_frequent_pairs(sequence: &[u16], lengths: &[u64], wanted: usize) -> Vec<(u16, u16)> {
    let chunks: Vec<&[u16]> = counted_chunks(sequence.len()).map(|c| &sequence[c]).collect();
    most_frequent_pairs_of(&chunks, lengths, wanted)
}

/// [`most_frequent_pairs`] of a sequence, from the chunks of it that [`counted_chunks`] names.
fn most_frequent_pairs_of(chunks: &[&[u16]], lengths: &[u64], wanted: usize) -> Vec<(u16, u16)> {
    chosen_pairs(counted_pairs(chunks, lengths.len()), lengths, wanted)
}

/// [`most_frequent_pairs`] from `ranked`: every pair (`a·symbols + b`) counted at least
/// [`MIN_PAIR_COUNT`] times, with its count, in any order.
fn chosen_pairs(mut ranked: Vec<(u32, u32)>, lengths: &[u64], wanted: usize) -> Vec<(u16, u16)> {
    let symbols = lengths.len();
    let by_count = |&(pair, n): &(u32, u32)| (std::cmp::Reverse(n), pair);
    // The choice rarely reads far down the ranking: the most frequent pairs are put in order
    // first, and the rest only if the choice runs through them.
    let ordered = (wanted * 32).min(ranked.len());
    if ordered < ranked.len() {
        ranked.select_nth_unstable_by_key(ordered, by_count);
    }
    ranked[..ordered].sort_unstable_by_key(by_count);
    let mut taken = vec![false; symbols];
    let mut chosen = Vec::new();
    for i in 0..ranked.len() {
        if i == ordered {
            ranked[ordered..].sort_unstable_by_key(by_count);
        }
        let pair = ranked[i].0 as usize;
        let (a, b) = ((pair / symbols) as u16, (pair % symbols) as u16);
        if taken[usize::from(a)]
            || taken[usize::from(b)]
            || lengths[usize::from(a)] + lengths[usize::from(b)] > MAX_SYMBOL_SLOTS
        {
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

/// Every pair of adjacent symbols (`a·symbols + b`) that occurs at least [`MIN_PAIR_COUNT`]
/// times in these chunks (each walked apart), with its count, in no particular order.
fn counted_pairs(chunks: &[&[u16]], symbols: usize) -> Vec<(u32, u32)> {
    let stretches: Vec<Stretch> = chunks.iter().flat_map(|chunk| Stretch::split(chunk, PairWalk::RunsApart)).collect();
    PairGroups::new(&stretches, symbols).counted(|a, seconds, kept| {
        let frequent = seconds.iter().filter(|&&(_, n)| n >= MIN_PAIR_COUNT);
        kept.extend(frequent.map(|&(b, n)| ((a * symbols + usize::from(b)) as u32, n)));
    })
}

/// Every pair's count in a sequence short enough to be counted whole, as
/// [`most_frequent_pairs`] counts it, kept from pass to pass: a pass changes the sequence only
/// around the pairs it replaces, so after one that replaces few, the counts are brought up to
/// date there (see [`PairCounts::replaced`]) instead of counted again.
///
/// The walk of a chunk counts `⌊L/2⌋` pairs `aa` in a run of `L` symbols `a`, and one pair at
/// every change of symbol. Over the sequence taken whole, without chunks, those counts are a
/// sum over its runs; the chunks' ends cut a few of them off.
struct PairCounts {
    /// By pair, `a·MAX_SYMBOLS + b`; only pairs of symbols below `symbols` are ever nonzero,
    /// so only those pages are touched (the rest stay the system's zero pages).
    counts: Vec<u32>,
    /// Symbols when last counted or brought up to date.
    symbols: usize,
    /// The pairs that have reached [`MIN_PAIR_COUNT`], each once (some may have fallen below).
    frequent: Vec<u32>,
    /// Whether a pair is in `frequent`, a bit each.
    listed: Vec<u64>,
}

/// A pass that replaces more than one pair per this many symbols is followed by a count of
/// the whole sequence: bringing the counts up to date around every replaced pair would cost
/// more.
const SYMBOLS_PER_UPDATED_SITE: usize = 8;

impl PairCounts {
    /// The counts of `sequence`, of `symbols` symbols, counted whole.
    fn of(sequence: &[u16], symbols: usize) -> PairCounts {
        let pairs = MAX_SYMBOLS * MAX_SYMBOLS;
        let mut counts =
            PairCounts { counts: vec![0; pairs], symbols: 0, frequent: Vec::new(), listed: vec![0; pairs / 64] };
        counts.count(sequence, symbols);
        counts
    }

    /// Counts `sequence` anew.
    fn count(&mut self, sequence: &[u16], symbols: usize) {
        debug_assert!(counted_whole(sequence.len()), "counted whole, not on a sample");
        for a in 0..self.symbols {
            self.counts[a * MAX_SYMBOLS..][..self.symbols].fill(0);
        }
        self.symbols = symbols;
        self.listed.fill(0);
        self.frequent.clear();
        let stretches: Vec<Stretch> =
            chunks(sequence.len()).flat_map(|c| Stretch::split(&sequence[c], PairWalk::RunsApart)).collect();
        let every = PairGroups::new(&stretches, symbols).counted(|a, seconds, kept| {
            kept.extend(seconds.iter().map(|&(b, n)| (pair_at(a as u16, b), n)));
        });
        for (pair, n) in every {
            self.counts[pair as usize] = n;
            self.list_if_frequent(pair);
        }
    }

    fn list_if_frequent(&mut self, pair: u32) {
        let (word, bit) = (pair as usize / 64, 1u64 << (pair % 64));
        if self.counts[pair as usize] >= MIN_PAIR_COUNT && self.listed[word] & bit == 0 {
            self.listed[word] |= bit;
            self.frequent.push(pair);
        }
    }

    /// Every pair counted at least [`MIN_PAIR_COUNT`] times, as [`counted_pairs`] lists them.
    fn ranked(&mut self, symbols: usize) -> Vec<(u32, u32)> {
        let (counts, listed) = (&self.counts, &mut self.listed);
        self.frequent.retain(|&pair| {
            let frequent = counts[pair as usize] >= MIN_PAIR_COUNT;
            if !frequent {
                listed[pair as usize / 64] &= !(1u64 << (pair % 64));
            }
            frequent
        });
        let ranked = self.frequent.iter().map(|&pair| {
            let (a, b) = (pair as usize / MAX_SYMBOLS, pair as usize % MAX_SYMBOLS);
            ((a * symbols + b) as u32, counts[pair as usize])
        });
        ranked.collect()
    }

    /// The counts of `new`, which a pass made of `old` by replacing the pairs that start at
    /// `sites` (in order), of `symbols` symbols now.
    ///
    /// Only segments around the sites change: each runs between two edges where two different
    /// symbols that no replaced pair touched meet (or an end of the sequence). Such an edge is
    /// a change of symbol before the pass and after it, and a whole walk's counts are the sum
    /// of what it counts between such edges and the pairs across them; so they change by what
    /// each segment counts after the pass less what it counted before. The chunks' ends then
    /// cut other pairs from the new sequence than from the old.
    fn replaced(&mut self, old: &[u16], new: &[u16], sites: &[u32], symbols: usize) {
        if sites.len() * SYMBOLS_PER_UPDATED_SITE > new.len() {
            self.count(new, symbols);
        } else {
            self.update(old, new, sites, symbols);
        }
    }

    /// [`PairCounts::replaced`] by bringing the counts up to date around the sites.
    fn update(&mut self, old: &[u16], new: &[u16], sites: &[u32], symbols: usize) {
        self.symbols = symbols;
        let mut changes = segment_changes(old, new, sites);
        cut_by_chunk_ends(old, |a, b, n| changes.push((pair_at(a, b), n)));
        cut_by_chunk_ends(new, |a, b, n| changes.push((pair_at(a, b), -n)));
        // In any order: a count may pass below zero on the way, never at the end.
        for &(pair, n) in &changes {
            let count = &mut self.counts[pair as usize];
            *count = count.wrapping_add_signed(n as i32);
        }
        for &(pair, _) in &changes {
            debug_assert!(self.counts[pair as usize] as usize <= new.len(), "a count below zero");
            self.list_if_frequent(pair);
        }
    }
}

/// The index of the pair `ab` in [`PairCounts`].
fn pair_at(a: u16, b: u16) -> u32 {
    (usize::from(a) * MAX_SYMBOLS + usize::from(b)) as u32
}

/// What a walk without chunks counts in `run` (see [`PairCounts`]), pair by pair.
fn counted_in(run: &[u16], mut count: impl FnMut(u16, u16, i64)) {
    let mut start = 0;
    while start < run.len() {
        let a = run[start];
        let end = run[start..].iter().position(|&x| x != a).map_or(run.len(), |n| start + n);
        if end - start >= 2 {
            count(a, a, ((end - start) / 2) as i64);
        }
        if end < run.len() {
            count(a, run[end], 1);
        }
        start = end;
    }
}

/// For each chunk's end in `sequence`, what a walk without chunks counts there and the
/// chunks' walks do not: the pair across it, or, inside a run, a pair `aa` when the run's
/// part before it (from the run's start) and its part up to the next chunk's end both have
/// odd lengths. Summed, the parts of a run that crosses several ends lose what they must.
fn cut_by_chunk_ends(sequence: &[u16], mut cut: impl FnMut(u16, u16, i64)) {
    for end in (COUNT_CHUNK..sequence.len()).step_by(COUNT_CHUNK) {
        let (a, b) = (sequence[end - 1], sequence[end]);
        if a != b {
            cut(a, b, 1);
            continue;
        }
        let run_start = sequence[..end].iter().rposition(|&x| x != a).map_or(0, |i| i + 1);
        let next_end = (end + COUNT_CHUNK).min(sequence.len());
        let run_end = sequence[end..next_end].iter().position(|&x| x != a).map_or(next_end, |n| end + n);
        let (before, after) = ((end - run_start) as i64, (run_end - end) as i64);
        let lost = (before + after) / 2 - before / 2 - after / 2;
        if lost > 0 {
            cut(a, a, lost);
        }
    }
}

/// How the counts of a whole walk change around `sites` (see [`PairCounts::replaced`]), as
/// (pair, change) in any order.
fn segment_changes(old: &[u16], new: &[u16], sites: &[u32]) -> Vec<(u32, i64)> {
    let mut touched = vec![0u64; old.len() / 64 + 1];
    for &site in sites {
        for at in [site as usize, site as usize + 1] {
            touched[at / 64] |= 1 << (at % 64);
        }
    }
    let is_touched = |at: usize| touched[at / 64] & (1 << (at % 64)) != 0;
    let is_edge =
        |at: usize| at == 0 || at == old.len() || (!is_touched(at - 1) && !is_touched(at) && old[at - 1] != old[at]);
    // Where a position of `old` that no pair touched stands in `new`.
    let moved = |at: usize| at - sites.partition_point(|&s| (s as usize) < at);
    // Each job takes the segments whose first site is among its own.
    let per_job = sites.len().div_ceil(rayon::current_num_threads() * JOBS_PER_THREAD).max(1);
    (0..sites.len().div_ceil(per_job))
        .into_par_iter()
        .flat_map_iter(|job| {
            let (first, last) = (job * per_job, ((job + 1) * per_job).min(sites.len()));
            let mut changes = Vec::new();
            let mut k = first;
            while k < last {
                let site = sites[k] as usize;
                let start = (0..=site).rev().find(|&at| is_edge(at)).expect("0 is an edge");
                let end = (site + 2..=old.len()).find(|&at| is_edge(at)).expect("the end is an edge");
                let earlier_jobs = k == first && k > 0 && start <= sites[k - 1] as usize;
                if !earlier_jobs {
                    counted_in(&old[start..end], |a, b, n| changes.push((pair_at(a, b), -n)));
                    counted_in(&new[moved(start)..moved(end)], |a, b, n| changes.push((pair_at(a, b), n)));
                }
                k += sites[k..].partition_point(|&s| (s as usize) < end);
            }
            changes
        })
        .collect()
}

/// Per symbol, the symbols that follow it anywhere in the sequence, in symbol order, with
/// how often.
fn followers(sequence: &[u16], symbols: usize) -> Followers {
    let stretches = Stretch::split(sequence, PairWalk::Every);
    PairGroups::new(&stretches, symbols).counted(|_, seconds, kept| {
        let mut row = seconds.to_vec();
        row.sort_unstable();
        kept.push(row);
    })
}

/// The pairs of a walk of some stretches, grouped by their first symbol, so that each first
/// symbol's pairs are counted in an array of one row, which stays in the cache. (Counting into
/// one dense array of every pair, its length squared, missed the cache on most increments
/// and took most of a small table's compression.)
struct PairGroups {
    /// Per stretch, where each first symbol's group ends (after a leading 0), and the groups:
    /// the second symbols of its pairs.
    stretches: Vec<(Vec<u32>, Vec<u16>)>,
    symbols: usize,
}

impl PairGroups {
    fn new(stretches: &[Stretch], symbols: usize) -> PairGroups {
        let stretches = stretches
            .par_iter()
            .map(|stretch| {
                let mut group_end = vec![0u32; symbols + 1];
                stretch.for_each_pair(|a, _| group_end[usize::from(a) + 1] += 1);
                for a in 0..symbols {
                    group_end[a + 1] += group_end[a];
                }
                let mut seconds = vec![0u16; group_end[symbols] as usize];
                let mut next = group_end.clone();
                stretch.for_each_pair(|a, b| {
                    seconds[next[usize::from(a)] as usize] = b;
                    next[usize::from(a)] += 1;
                });
                (group_end, seconds)
            })
            .collect();
        PairGroups { stretches, symbols }
    }

    /// The first symbols cut into runs of about equal numbers of pairs, one parallel job each:
    /// a few symbols hold most pairs in the early passes, when there are too few symbols for
    /// runs of equal length to keep every core busy.
    fn jobs(&self) -> Vec<std::ops::Range<usize>> {
        let pairs_of =
            |a: usize| -> usize { self.stretches.iter().map(|(end, _)| (end[a + 1] - end[a]) as usize).sum() };
        let pairs: Vec<usize> = (0..self.symbols).map(pairs_of).collect();
        let per_job = (pairs.iter().sum::<usize>() / (rayon::current_num_threads() * JOBS_PER_THREAD)).max(1);
        let mut jobs = Vec::new();
        let (mut start, mut taken) = (0, 0);
        for (a, &n) in pairs.iter().enumerate() {
            taken += n;
            if taken >= per_job || a + 1 - start == RANKED_FIRSTS {
                jobs.push(start..a + 1);
                (start, taken) = (a + 1, 0);
            }
        }
        if start < self.symbols {
            jobs.push(start..self.symbols);
        }
        jobs
    }

    /// What `keep` adds to the list for each first symbol's counted pairs (each second symbol
    /// once, with its count, in the order first met), first symbol after first symbol.
    fn counted<T: Send>(&self, keep: impl Fn(usize, &[(u16, u32)], &mut Vec<T>) + Sync) -> Vec<T> {
        self.jobs()
            .into_par_iter()
            .flat_map_iter(|firsts| {
                let mut row = vec![0u32; self.symbols];
                let (mut seconds, mut kept) = (Vec::new(), Vec::new());
                for a in firsts {
                    let groups =
                        || self.stretches.iter().map(|(end, seconds)| &seconds[end[a] as usize..end[a + 1] as usize]);
                    for group in groups() {
                        group.iter().for_each(|&b| row[usize::from(b)] += 1);
                    }
                    seconds.clear();
                    for group in groups() {
                        for &b in group {
                            let n = std::mem::take(&mut row[usize::from(b)]);
                            if n > 0 {
                                seconds.push((b, n));
                            }
                        }
                    }
                    keep(a, &seconds, &mut kept);
                }
                kept
            })
            .collect()
    }
}

/// Which pairs a walk of a stretch visits.
#[derive(Clone, Copy)]
enum PairWalk {
    /// Every pair of adjacent symbols.
    Every,
    /// As the grammar replaces them: within a run, pairs do not overlap (`aaaa` is two `aa`).
    RunsApart,
}

/// Part of a sequence whose pairs can be counted apart from the rest: it starts at the
/// sequence's start or where the symbol changes, so a walk of the whole sequence visits the
/// same pairs in it.
struct Stretch<'a> {
    sequence: &'a [u16],
    start: usize,
    end: usize,
    walk: PairWalk,
}

impl<'a> Stretch<'a> {
    /// The sequence in stretches of about [`STRETCH_SYMBOLS`] symbols, each ending where the
    /// symbol changes (a walk never leaps from within a run over that change).
    fn split(sequence: &'a [u16], walk: PairWalk) -> Vec<Stretch<'a>> {
        let mut start = 0;
        piece_ends(sequence.len(), |end| sequence[end - 1] != sequence[end])
            .into_iter()
            .map(|end| Stretch { sequence, start: std::mem::replace(&mut start, end), end, walk })
            .collect()
    }

    /// Calls `visit` with every pair of the walk that starts in the stretch.
    fn for_each_pair(&self, mut visit: impl FnMut(u16, u16)) {
        let sequence = self.sequence;
        let mut i = self.start;
        while i < self.end && i + 1 < sequence.len() {
            let (a, b) = (sequence[i], sequence[i + 1]);
            visit(a, b);
            i += match self.walk {
                PairWalk::RunsApart if a == b && sequence.get(i + 2) == Some(&a) => 2,
                _ => 1,
            };
        }
    }
}

/// Where `len` symbols are cut into pieces of about [`STRETCH_SYMBOLS`] for parallel work:
/// each piece's end, moved on from its nominal place to the first where `may_end(end)` (a
/// piece ending before symbol `end`) holds, or to `len`.
fn piece_ends(len: usize, may_end: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut start = 0;
    while start < len {
        let mut end = (start + STRETCH_SYMBOLS).min(len);
        while end < len && !may_end(end) {
            end += 1;
        }
        ends.push(end);
        start = end;
    }
    ends
}

/// `slice` cut into consecutive pieces, each ending where `ends` says (rising, the last at
/// most the slice's length), for parallel work on each.
fn cut_at<'a, T>(slice: &'a mut [T], ends: &[usize]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(ends.len());
    let (mut rest, mut at) = (slice, 0);
    for &end in ends {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(end - at);
        pieces.push(piece);
        (rest, at) = (tail, end);
    }
    pieces
}

/// The sequence with every chosen pair replaced by its symbol, left to right within chunks
/// of [`COUNT_CHUNK`] symbols (a pair across two chunks stays apart); `after[a]` is the pair
/// that starts with `a` (no two chosen pairs share a symbol), as (second, new symbol).
fn replace_pairs(sequence: &mut Vec<u16>, after: &[Option<(u16, u16)>]) {
    let ends = replacement_pieces(sequence, after);
    let packed = PackedPairs::new(after);
    let kept: Vec<usize> =
        cut_at(sequence, &ends).into_par_iter().map(|piece| replace_in_piece(piece, &packed, |_| ())).collect();
    close_gaps(sequence, &ends, &kept);
}

/// [`replace_pairs`] of `source` into `out` (its old content dropped); returns where each
/// replaced pair started in `source`, in order.
fn replaced_noting(source: &[u16], after: &[Option<(u16, u16)>], out: &mut Vec<u16>) -> Vec<u32> {
    let ends = replacement_pieces(source, after);
    let packed = PackedPairs::new(after);
    out.clear();
    out.resize(source.len(), 0);
    let (kept, sites): (Vec<usize>, Vec<Vec<u32>>) = cut_at(out, &ends)
        .into_par_iter()
        .enumerate()
        .map(|(i, piece)| {
            let start = if i == 0 { 0 } else { ends[i - 1] };
            // Copied a piece at a time, so that the replacement finds it in the cache.
            piece.copy_from_slice(&source[start..start + piece.len()]);
            let mut sites = Vec::new();
            let kept = replace_in_piece(piece, &packed, |at| sites.push((start + at) as u32));
            (kept, sites)
        })
        .unzip();
    close_gaps(out, &ends, &kept);
    sites.concat()
}

/// Where [`replace_pairs`] cuts a sequence into parallel pieces of about [`STRETCH_SYMBOLS`]
/// symbols within its chunks, each ending after a symbol that starts no chosen pair: a walk
/// of the whole chunk cannot take that symbol and the next one together, so it replaces each
/// piece as the piece's own walk does.
fn replacement_pieces(sequence: &[u16], after: &[Option<(u16, u16)>]) -> Vec<usize> {
    let mut ends = Vec::new();
    for (c, chunk) in sequence.chunks(COUNT_CHUNK).enumerate() {
        let chunk_ends = piece_ends(chunk.len(), |end| after[usize::from(chunk[end - 1])].is_none());
        ends.extend(chunk_ends.into_iter().map(|end| c * COUNT_CHUNK + end));
    }
    ends
}

/// Closes the gaps that pieces ending at `ends` left behind, each having kept its first
/// `kept` symbols.
fn close_gaps(sequence: &mut Vec<u16>, ends: &[usize], kept: &[usize]) {
    let (mut start, mut written) = (0, 0);
    for (&end, &kept) in ends.iter().zip(kept) {
        sequence.copy_within(start..start + kept, written);
        written += kept;
        start = end;
    }
    sequence.truncate(written);
}

/// The chosen pairs as the replacement reads them: per symbol, the second symbol of the pair
/// it starts above the new symbol, or all ones where it starts none (no symbol is `0xffff`),
/// so that one comparison with the next symbol decides. Against the `Option` pairs tested in
/// two steps (alternating runs): `KKCFR` compressed in 1.44–1.82 s instead of 1.89–2.21 s,
/// `KKCFRT` in 30.1 s instead of 38.3 s (47 s of CPU against 63 s), the default set's 31
/// games in 17.0 s instead of 22.0 s; the same bytes.
struct PackedPairs(Vec<u32>);

impl PackedPairs {
    fn new(after: &[Option<(u16, u16)>]) -> PackedPairs {
        PackedPairs(after.iter().map(|a| a.map_or(u32::MAX, |(b, s)| u32::from(b) << 16 | u32::from(s))).collect())
    }
}

/// Replaces the chosen pairs of `piece` in place, left to right; returns how many symbols
/// remain (at its start). `note` is told where each replaced pair started.
fn replace_in_piece(piece: &mut [u16], after: &PackedPairs, mut note: impl FnMut(usize)) -> usize {
    let (mut read, mut write) = (0, 0);
    while read + 1 < piece.len() {
        let symbol = piece[read];
        let pair = after.0[usize::from(symbol)];
        if (pair >> 16) as u16 == piece[read + 1] {
            note(read);
            piece[write] = pair as u16;
            read += 2;
        } else {
            piece[write] = symbol;
            read += 1;
        }
        write += 1;
    }
    if read < piece.len() {
        piece[write] = piece[read];
        write += 1;
    }
    write
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

/// The bits of one block, most significant first.
struct BitWriter {
    /// Eight bytes more than a block, so that a code is always or-ed in as one word.
    bytes: [u8; BLOCK_BYTES + 8],
    bits: u64,
}

impl Default for BitWriter {
    fn default() -> BitWriter {
        BitWriter { bytes: [0; BLOCK_BYTES + 8], bits: 0 }
    }
}

impl BitWriter {
    /// Appends a code of at most [`MAX_CODE_BITS`] bits (the caller keeps within the block).
    fn put(&mut self, code: u32, bits: u32) {
        let byte = (self.bits / 8) as usize;
        let word = &mut self.bytes[byte..byte + 8];
        let value = u64::from_be_bytes(word.try_into().expect("8 bytes"))
            | u64::from(code) << (64 - u64::from(bits) - self.bits % 8);
        word.copy_from_slice(&value.to_be_bytes());
        self.bits += u64::from(bits);
    }

    /// Zero bits up to bit `bits`.
    fn pad_to(&mut self, bits: u64) {
        self.bits = self.bits.max(bits);
    }

    fn finish(self) -> [u8; BLOCK_BYTES] {
        self.bytes[..BLOCK_BYTES].try_into().expect("a block")
    }
}

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

#[cfg(test)]
mod tests {
    //! The grammar's parallel counting and replacing against plain left-to-right walks of each
    //! chunk, on sequences whose runs cross the stretches' and pieces' ends.

    use super::*;

    /// A sequence of `len` symbols below `symbols`, with runs of 1 to 40.
    fn runs(len: usize, symbols: u16, mut seed: u64) -> Vec<u16> {
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut sequence = Vec::with_capacity(len);
        while sequence.len() < len {
            let symbol = (next() % u64::from(symbols)) as u16;
            let run = (1 + next() % 40) as usize;
            sequence.extend(std::iter::repeat_n(symbol, run.min(len - sequence.len())));
        }
        sequence
    }

    /// Every pair's count, one walk per chunk, as [`most_frequent_pairs`] must count them.
    fn counted_plainly(sequence: &[u16], symbols: usize) -> Vec<u32> {
        let mut counts = vec![0u32; symbols * symbols];
        for chunk in sequence.chunks(COUNT_CHUNK).step_by((sequence.len() / COUNTED_SYMBOLS).max(1)) {
            let mut i = 0;
            while i + 1 < chunk.len() {
                let (a, b) = (chunk[i], chunk[i + 1]);
                counts[usize::from(a) * symbols + usize::from(b)] += 1;
                i += if a == b && chunk.get(i + 2) == Some(&a) { 2 } else { 1 };
            }
        }
        counts
    }

    #[test]
    fn pairs_are_counted_as_one_walk_of_each_chunk_would() {
        for (seed, symbols) in [(1, 3usize), (2, 5), (3, 40)] {
            let sequence = runs(2 * COUNT_CHUNK + 12_345, symbols as u16, seed);
            let plain = counted_plainly(&sequence, symbols);
            let mut expected: Vec<(u32, u32)> =
                (0..plain.len()).filter(|&p| plain[p] >= MIN_PAIR_COUNT).map(|p| (p as u32, plain[p])).collect();
            let chunks: Vec<&[u16]> = counted_chunks(sequence.len()).map(|c| &sequence[c]).collect();
            let mut counted = counted_pairs(&chunks, symbols);
            counted.sort_unstable();
            expected.sort_unstable();
            assert!(!expected.is_empty());
            assert_eq!(counted, expected, "seed {seed}");
        }
    }

    #[test]
    fn the_first_pass_made_chunk_by_chunk_is_a_pass_over_the_whole_sequence() {
        // Short enough to be counted whole, and long enough to be counted on a sample.
        for (seed, len) in [(4, 3 * COUNT_CHUNK + 777), (5, 2 * COUNTED_SYMBOLS + 5 * COUNT_CHUNK / 2)] {
            let leaves = 40;
            let whole = runs(len, leaves as u16, seed);
            let lengths = vec![1u64; leaves];
            let chosen = most_frequent_pairs(&whole, &lengths, pairs_per_pass(leaves));
            assert!(chosen.len() > 4, "seed {seed}");
            let mut after = vec![None; leaves];
            for (i, &(a, b)) in chosen.iter().enumerate() {
                after[usize::from(a)] = Some((b, (leaves + i) as u16));
            }
            let mut expected = whole.clone();
            replace_pairs(&mut expected, &after);

            let (mut pairs, mut lengths) = (Vec::new(), lengths);
            let fill = |start: usize, out: &mut [u16]| out.copy_from_slice(&whole[start..start + out.len()]);
            let sequence = first_pass(len, fill, &mut pairs, &mut lengths);
            assert_eq!(pairs, chosen, "seed {seed}");
            assert_eq!(lengths.len(), leaves + chosen.len());
            assert!(sequence == expected, "seed {seed}: the sequences differ");
        }
    }

    /// The most frequent pairs that share no symbol, from a ranking sorted whole.
    fn chosen_plainly(sequence: &[u16], symbols: usize, wanted: usize) -> Vec<(u16, u16)> {
        let counts = counted_plainly(sequence, symbols);
        let mut ranked: Vec<usize> = (0..counts.len()).filter(|&p| counts[p] >= MIN_PAIR_COUNT).collect();
        ranked.sort_by_key(|&p| (std::cmp::Reverse(counts[p]), p));
        let mut taken = vec![false; symbols];
        let mut chosen = Vec::new();
        for p in ranked {
            let (a, b) = (p / symbols, p % symbols);
            if !taken[a] && !taken[b] && chosen.len() < wanted {
                (taken[a], taken[b]) = (true, true);
                chosen.push((a as u16, b as u16));
            }
        }
        chosen
    }

    #[test]
    fn the_most_frequent_pairs_are_chosen_even_past_many_conflicts() {
        // Symbol 0 between every other symbol: hundreds of frequent pairs with 0 come first
        // and conflict once one is taken; the pairs of the runs of 1, 2, ... come after.
        let symbols = 400;
        let mut sequence = Vec::new();
        for round in 0..20 {
            for _ in 0..3 {
                for x in 1..symbols as u16 {
                    sequence.extend([0, x]);
                }
            }
            for x in 1..symbols as u16 / 2 {
                sequence.extend([2 * x, 2 * x + 1, 2 * x, 2 * x + 1]);
            }
            sequence.push(round);
        }
        let chosen = most_frequent_pairs(&sequence, &vec![1; symbols], 8);
        assert_eq!(chosen, chosen_plainly(&sequence, symbols, 8));
        assert_eq!(chosen.len(), 8);
        for (seed, symbols) in [(6, 3usize), (7, 60)] {
            let sequence = runs(COUNT_CHUNK + 4_321, symbols as u16, seed);
            let chosen = most_frequent_pairs(&sequence, &vec![1; symbols], 8);
            assert_eq!(chosen, chosen_plainly(&sequence, symbols, 8), "seed {seed}");
        }
    }

    #[test]
    fn kept_counts_are_each_pass_counted_anew() {
        for (seed, symbols) in [(8, 3u16), (9, 12), (10, 40)] {
            let mut sequence = runs(2 * COUNT_CHUNK + 54_321, symbols, seed);
            // A run longer than a chunk, across two chunks' ends.
            sequence[COUNT_CHUNK / 2..2 * COUNT_CHUNK + 101].fill(1);
            let mut lengths = vec![1u64; usize::from(symbols)];
            let (mut pairs, mut spare) = (Vec::new(), Vec::new());
            let mut counts = PairCounts::of(&sequence, lengths.len());
            for pass in 0..8 {
                let chosen = chosen_pairs(counts.ranked(lengths.len()), &lengths, 4);
                assert_eq!(chosen, most_frequent_pairs(&sequence, &lengths, 4), "seed {seed}, pass {pass}");
                assert!(!chosen.is_empty());
                let after = adopt(&chosen, &mut pairs, &mut lengths);
                let sites = replaced_noting(&sequence, &after, &mut spare);
                let mut in_place = sequence.clone();
                replace_pairs(&mut in_place, &after);
                assert!(spare == in_place, "seed {seed}, pass {pass}: the sequences differ");
                assert!(sites.iter().all(|&s| after[usize::from(sequence[s as usize])].is_some()));
                // Updated whatever the share of sites, so that every pass tests the update.
                counts.update(&sequence, &spare, &sites, lengths.len());
                std::mem::swap(&mut sequence, &mut spare);
                let n = lengths.len();
                let plain = counted_plainly(&sequence, n);
                for (a, b) in (0..n).flat_map(|a| (0..n).map(move |b| (a, b))) {
                    let kept = counts.counts[pair_at(a as u16, b as u16) as usize];
                    assert_eq!(kept, plain[a * n + b], "seed {seed}, pass {pass}: pair {a} {b}");
                }
            }
        }
    }

    #[test]
    fn followers_are_every_adjacent_pair_counted() {
        for (seed, symbols) in [(4, 3usize), (5, 40)] {
            let sequence = runs(3 * STRETCH_SYMBOLS + 777, symbols as u16, seed);
            let mut plain = vec![vec![0u32; symbols]; symbols];
            sequence.windows(2).for_each(|w| plain[usize::from(w[0])][usize::from(w[1])] += 1);
            let plain: Followers = plain
                .iter()
                .map(|row| row.iter().enumerate().filter(|&(_, &n)| n > 0).map(|(y, &n)| (y as u16, n)).collect())
                .collect();
            assert!(followers(&sequence, symbols) == plain, "seed {seed}");
        }
    }

    #[test]
    fn pairs_are_replaced_as_one_walk_of_each_chunk_would() {
        for (seed, symbols) in [(1, 3u16), (2, 5), (3, 40)] {
            let sequence = runs(2 * COUNT_CHUNK + 12_345, symbols, seed);
            let chosen = most_frequent_pairs(&sequence, &vec![1; usize::from(symbols)], 4);
            assert!(!chosen.is_empty());
            let mut after = vec![None; usize::from(symbols)];
            for (i, &(a, b)) in chosen.iter().enumerate() {
                after[usize::from(a)] = Some((b, symbols + i as u16));
            }
            let mut replaced = sequence.clone();
            replace_pairs(&mut replaced, &after);
            let mut plain = Vec::new();
            for chunk in sequence.chunks(COUNT_CHUNK) {
                let mut i = 0;
                while i < chunk.len() {
                    match (after[usize::from(chunk[i])], chunk.get(i + 1)) {
                        (Some((b, s)), Some(&next)) if next == b => {
                            plain.push(s);
                            i += 2;
                        }
                        _ => {
                            plain.push(chunk[i]);
                            i += 1;
                        }
                    }
                }
            }
            assert!(replaced == plain, "seed {seed}: replaced differently");
        }
    }
}
