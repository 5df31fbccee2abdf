//! The format's facts, shared by the encoder and the decoder: its limits, where each field
//! lies, how small integers are packed, what a context is and which canonical code lengths
//! give.

/// Bytes per block.
pub const BLOCK_BYTES: usize = 512;

/// Symbols at most: value bytes and pairs together.
pub const MAX_SYMBOLS: usize = 4096;

/// The longest Huffman code.
pub(super) const MAX_CODE_BITS: u32 = 24;

/// Bits of a block.
pub(super) const BLOCK_BITS: usize = BLOCK_BYTES * 8;

/// Parts of a block unless the caller chooses: each part starts afresh, so a read walks at
/// most one; more parts make shorter reads and cost 12 bits more per block each.
pub const DEFAULT_PARTS: usize = 8;

/// The most parts per block.
pub const MAX_PARTS: usize = 16;

/// Bits of a part's start, counted in slots from the previous part's start: a part that would
/// start further on ends the block instead.
pub(super) const START_BITS: u32 = 12;

/// Bits of a stored code length (at most [`MAX_CODE_BITS`]).
pub(super) const LENGTH_BITS: u32 = 5;

/// Bits of the first-level decoding table of each context.
pub(super) const FAST_BITS: u32 = 10;

/// The most slots one symbol may stand for: with at most one symbol per bit, the blocks of a
/// group of [`GROUP_BLOCKS`] then start fewer than 2^32 slots after its first.
pub(super) const MAX_SYMBOL_SLOTS: u64 = 1 << 15;

/// Blocks per group: each group has its first slot in full, each block its offset from it.
pub(super) const GROUP_BLOCKS: usize = 32;

/// The most classes a file may declare.
pub(super) const MAX_CLASSES: usize = 16;

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

/// `values` of `bits` bits each (each below `2^bits`), packed from the lowest bit of the first
/// byte on, the last byte padded with zeros.
pub(super) fn pack(values: impl Iterator<Item = u32>, bits: u32) -> Vec<u8> {
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
pub(super) fn packed_bytes(count: usize, bits: u32) -> usize {
    (count * bits as usize).div_ceil(8)
}

/// The `index`-th value of `bits` bits (at most 25) packed by [`pack`] from `at` on.
pub(super) fn unpack(bytes: &[u8], at: usize, index: usize, bits: u32) -> u32 {
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
pub(super) fn context_of(since_reset: u32, previous: u16, before: u16, class_of: &[u8], classes: usize) -> usize {
    if since_reset < 2 || classes == 0 {
        0
    } else {
        1 + usize::from(class_of[usize::from(previous)]) * classes + usize::from(class_of[usize::from(before)])
    }
}

/// Slots each symbol stands for.
pub(super) fn symbol_lengths(leaves: usize, pairs: &[(u16, u16)]) -> Vec<u64> {
    let mut lengths = vec![1u64; leaves];
    for &(a, b) in pairs {
        // Saturating: a hostile file's grammar could double a length past any integer.
        let length = lengths[usize::from(a)].saturating_add(lengths[usize::from(b)]);
        lengths.push(length);
    }
    lengths
}

/// Canonical codes (code, bits) for these lengths: by length, then by symbol.
pub(super) fn canonical_codes(lengths: &[u32]) -> Vec<(u32, u32)> {
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

/// `slice` cut into consecutive pieces, each ending where `ends` says (rising, the last at
/// most the slice's length), for parallel work on each.
pub(super) fn cut_at<'a, T>(slice: &'a mut [T], ends: &[usize]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(ends.len());
    let (mut rest, mut at) = (slice, 0);
    for &end in ends {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(end - at);
        pieces.push(piece);
        (rest, at) = (tail, end);
    }
    pieces
}
