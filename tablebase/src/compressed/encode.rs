//! The encoder, offline: the grammar's sequence coded by context into checksummed blocks,
//! with the indexes a read starts from.

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::format::*;
use super::grammar::*;

/// Blocks per sparse index entry, about.
const BLOCKS_PER_ENTRY: u64 = 16;

/// The class counts the compressor tries (0: one code, no contexts).
const CLASS_CHOICES: [usize; 4] = [0, 4, 8, 16];

/// Rounds of regrouping the classes.
const CLUSTER_ROUNDS: usize = 10;

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
