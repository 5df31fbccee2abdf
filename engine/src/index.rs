//! The dense position index of a closed game: a bijection between its positions, folded by
//! both exact symmetries, and `0..slots`.
//!
//! # Layout
//!
//! Every slot stands for four positions: a canonical one and its images under the colour
//! flip and the left-right mirror. The canonical position has the first player to move and
//! the first player's royal on file a or b; no position is its own mirror, so this folds
//! exactly by 4. Within a closed game the slots are ordered by
//!
//! 1. the royal pair (120: 8 squares for the mover's royal × 15 for the other),
//! 2. a *split*: for each kind, how many pieces are on the board and how the rest divide
//!    between the two hands,
//! 3. `f`, how many board pieces stand on the two far ranks (ranks 1 and 4),
//!
//! and inside such a segment by a mixed-radix number: which free far squares and which free
//! middle squares hold pieces (colex rank of each subset), which kind stands on each
//! (ranked kind by kind), and each piece's owner and promotion — 3 states on a far rank
//! (the unpromoted piece of the player whose far rank it is cannot stand there), 4 in the
//! middle. Every integer below `slots` is therefore a legal position: no slot is wasted.
//!
//! The size of a segment depends on the royal pair only through how many royals stand on far
//! ranks (its *class*), which keeps the offset tables small even for the full game.

use crate::{Bitboard, ByColor, Color, Hand, Kind, Material, Move, Piece, Position, Square, UnMove};

const fn binomial_table() -> [[u64; 17]; 17] {
    let mut t = [[0u64; 17]; 17];
    let mut n = 0;
    while n < 17 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    t
}

/// `BINOMIAL[n][k]` = n choose k.
const BINOMIAL: [[u64; 17]; 17] = binomial_table();

/// Colex rank of every 8-bit subset among subsets of the same size.
const COLEX_RANK: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut rank = 0u64;
        let mut i = 0;
        let mut bit = 0;
        while bit < 8 {
            if mask & (1 << bit) != 0 {
                i += 1;
                rank += BINOMIAL[bit][i];
            }
            bit += 1;
        }
        t[mask] = rank as u8;
        mask += 1;
    }
    t
};

/// `COLEX_UNRANK[k][r]`: the `r`-th k-subset of `0..8` in colex order.
const COLEX_UNRANK: [[u8; 70]; 9] = {
    let mut t = [[0u8; 70]; 9];
    let mut mask = 0;
    while mask < 256 {
        let k = (mask as u8).count_ones() as usize;
        t[k][COLEX_RANK[mask] as usize] = mask as u8;
        mask += 1;
    }
    t
};

/// `PEXT8[mask][x]`: the bits of `x` at the set positions of `mask`, packed to the bottom
/// (what BMI2's `pext` does, for 8 bits, portably).
static PEXT8: [[u8; 256]; 256] = bit_gather_table(true);

/// `PDEP8[mask][x]`: the low bits of `x` spread onto the set positions of `mask` (the inverse
/// of [`PEXT8`]).
static PDEP8: [[u8; 256]; 256] = bit_gather_table(false);

/// Pairs the `k`-th set bit of each mask with bit `k`: packing (`extract`) or spreading.
const fn bit_gather_table(extract: bool) -> [[u8; 256]; 256] {
    let mut t = [[0u8; 256]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut x = 0;
        while x < 256 {
            let (mut out, mut k, mut bit) = (0u8, 0, 0);
            while bit < 8 {
                if mask & (1 << bit) != 0 {
                    let (from, to) = if extract { (bit, k) } else { (k, bit) };
                    if x & (1 << from) != 0 {
                        out |= 1 << to;
                    }
                    k += 1;
                }
                bit += 1;
            }
            t[mask][x] = out;
            x += 1;
        }
        mask += 1;
    }
    t
}

/// Removes the bit positions in `gaps` from `bits` (which has none of them set), shifting the
/// higher bits down: `PEXT8[!gaps][bits]` for the one or two gaps the royals leave, by
/// arithmetic instead of a 64 KiB table lookup.
#[inline]
fn close_gaps(mut bits: u8, mut gaps: u8) -> u8 {
    // Highest gap first, so the lower gap's position is still valid after the shift.
    while gaps != 0 {
        let gap = 7 - gaps.leading_zeros();
        let low = (1u16 << gap) as u8 - 1;
        bits = (bits & low) | ((bits >> 1) & !low);
        gaps &= !(1 << gap);
    }
    bits
}

/// The far-rank squares of a board set as 8 bits: a1–d1 are bits 0–3, a4–d4 bits 4–7.
#[inline]
fn far_bits(set: u16) -> usize {
    usize::from((set & 0xF) as u8 | ((set >> 8) & 0xF0) as u8)
}

/// The middle squares of a board set as 8 bits: a2 … d3 are bits 0–7.
#[inline]
fn middle_bits(set: u16) -> usize {
    usize::from((set >> 4) as u8)
}

/// Inverse of [`far_bits`].
#[inline]
fn far_squares(bits: u8) -> Bitboard {
    Bitboard(u16::from(bits & 0xF) | (u16::from(bits & 0xF0) << 8))
}

/// Inverse of [`middle_bits`].
#[inline]
fn middle_squares(bits: u8) -> Bitboard {
    Bitboard(u16::from(bits) << 4)
}

const POW3: [u64; 9] = [1, 3, 9, 27, 81, 243, 729, 2187, 6561];
const POW4: [u64; 9] = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536];

/// The canonical squares of the mover's royal: files a and b.
const CANONICAL_ROYAL_SQUARES: [u8; 8] = [0, 1, 4, 5, 8, 9, 12, 13];

/// How the pieces of one closed game are divided between board and hands.
#[derive(Clone, Debug)]
struct Split {
    /// Per kind (C, F, R, T): pieces on the board.
    on_board: [u8; 4],
    /// Per kind: pieces in the hand of the player to move (the rest of the off-board ones are
    /// in the other hand).
    in_mover_hand: [u8; 4],
    /// Pieces on the board in total.
    board_total: u8,
    /// Ways to assign the kinds to `board_total` ordered squares.
    kind_arrangements: u64,
}

/// A segment: one split with `far` of its board pieces on far ranks.
#[derive(Clone, Copy, Debug)]
struct Segment {
    start: u64,
    split: u32,
    far: u8,
}

/// A position as the index sees it: turned and mirrored into the canonical orientation of
/// `mover` (the side to move of the position being indexed).
#[derive(Clone, Copy, Debug)]
struct View {
    /// The square map into the canonical orientation: `s ^ xor`.
    xor: u8,
    /// The mover's royal, canonical (file a or b).
    a: Square,
    /// The other royal, canonical.
    b: Square,
    /// Per canonical square: the non-royal piece's kind index << 2 | its state.
    canonical: [u8; 16],
    /// Canonical squares holding non-royal pieces.
    occupied: u16,
    /// Pieces on the board per kind, one byte each (a register, not an array: an array counter
    /// in memory made every piece wait for the previous increment).
    on_board: u32,
    /// The mover's hand.
    mover_hand: [u8; 4],
}

impl View {
    fn new(position: &Position, mover: Color) -> View {
        // Turn the board if the second player moves, then mirror if the mover's royal is on
        // file c or d.
        let mut xor = if mover == Color::Second { 15u8 } else { 0 };
        if (position.royals[mover].index() as u8 ^ xor) & 3 >= 2 {
            xor ^= 3;
        }
        let canon = |s: Square| Square::from_index(s.index() as u8 ^ xor);
        let mut view = View {
            xor,
            a: canon(position.royals[mover]),
            b: canon(position.royals[!mover]),
            canonical: [0u8; 16],
            occupied: 0,
            on_board: 0,
            mover_hand: position.hands[mover].0,
        };
        let pieces = position.occupied()
            ^ Bitboard::from_square(position.royals.first)
            ^ Bitboard::from_square(position.royals.second);
        for square in pieces {
            let piece = position.board[square.index()].expect("occupied");
            view.put(canon(square), piece.kind, piece_state(piece.color == mover, piece.promoted));
        }
        view
    }

    #[inline]
    fn canon(&self, square: Square) -> Square {
        Square::from_index(square.index() as u8 ^ self.xor)
    }

    /// Puts a non-royal piece on an empty canonical square.
    #[inline]
    fn put(&mut self, square: Square, kind: Kind, state: u8) {
        let kind = kind.hand_index().expect("not a royal");
        self.on_board += 1 << (8 * kind);
        self.canonical[square.index()] = (kind as u8) << 2 | state;
        self.occupied |= 1 << square.index();
    }

    /// Mirrors the view (files a↔d, b↔c): the orientation for a mover's royal that moved to
    /// the other half of the board.
    fn mirror(&mut self) {
        self.xor ^= 3;
        let mirror = |s: Square| Square::from_index(s.index() as u8 ^ 3);
        self.a = mirror(self.a);
        self.b = mirror(self.b);
        let mut canonical = [0u8; 16];
        let mut occupied = 0u16;
        for square in Bitboard(self.occupied) {
            let to = square.index() ^ 3;
            canonical[to] = self.canonical[square.index()];
            occupied |= 1 << to;
        }
        self.canonical = canonical;
        self.occupied = occupied;
    }

    /// Takes the non-royal piece off a canonical square.
    #[inline]
    fn take(&mut self, square: Square) {
        let kind = self.canonical[square.index()] >> 2;
        self.on_board -= 1 << (8 * kind);
        self.occupied &= !(1 << square.index());
    }
}

/// The children of one position, indexed move by move: see [`MaterialIndex::children_of`].
pub struct Children<'a> {
    index: &'a MaterialIndex,
    parent: &'a Position,
    /// The parent in the children's orientation (their side to move is the parent's opponent).
    view: View,
}

impl Children<'_> {
    /// The slot of the position after `mv`, a legal move of the parent that does not capture
    /// the royal: `index_of(&parent.play_unchecked(mv))`, without building that position.
    pub fn index_after(&self, mv: Move) -> u64 {
        let mut view = self.view;
        match mv {
            Move::Board { from, to, promotes } => {
                let piece = self.parent.board[from.index()].expect("a board move starts on a piece");
                let target = view.canon(to);
                if self.parent.board[to.index()].is_some() {
                    view.take(target);
                }
                if piece.kind == Kind::Royal {
                    view.b = target;
                } else {
                    view.take(view.canon(from));
                    view.put(target, piece.kind, piece_state(false, piece.promoted || promotes));
                }
            }
            Move::Drop { kind, to } => view.put(view.canon(to), kind, piece_state(false, false)),
        }
        // The children's mover hand is the parent's opponent's, which the move leaves alone.
        self.index.index_of_view(&view)
    }
}

/// The predecessors of one position, indexed un-move by un-move: see
/// [`MaterialIndex::parents_of`].
pub struct Parents<'a> {
    index: &'a MaterialIndex,
    /// The child in the predecessors' orientation (their side to move is the child's opponent).
    view: View,
}

impl Parents<'_> {
    /// The slot of the predecessor an un-move of the child leads back to:
    /// `index_of(&child.before(unmove))`, without building that position.
    pub fn index_before(&self, unmove: &UnMove) -> u64 {
        let mut view = self.view;
        match unmove.mv {
            Move::Board { from, to, .. } => {
                if unmove.piece.kind == Kind::Royal {
                    // The mover's royal goes back: if that crosses the mirror line, the
                    // canonical orientation mirrors with it.
                    if (from.index() as u8 ^ view.xor) & 3 >= 2 {
                        view.mirror();
                    }
                    view.a = view.canon(from);
                } else {
                    view.take(view.canon(to));
                    view.put(view.canon(from), unmove.piece.kind, piece_state(true, unmove.piece.promoted));
                }
                let target = view.canon(to);
                if let Some(captured) = unmove.captured {
                    view.put(target, captured.kind, piece_state(false, captured.promoted));
                    view.mover_hand[captured.kind.hand_index().expect("a royal is never captured back")] -= 1;
                }
            }
            Move::Drop { kind, to } => {
                view.take(view.canon(to));
                view.mover_hand[kind.hand_index().expect("royals are not dropped")] += 1;
            }
        }
        self.index.index_of_view(&view)
    }
}

/// Decodes slots, remembering the segment of the last one: see [`MaterialIndex::cursor`].
pub struct Cursor<'a> {
    index: &'a MaterialIndex,
    located: Option<Located>,
    /// The last slot decoded, its position and lowest digit.
    last: Option<(u64, Position, LowestDigit)>,
}

impl Cursor<'_> {
    /// The canonical position of `slot`, as [`MaterialIndex::position_at`] gives it.
    pub fn position_at(&mut self, slot: u64) -> Position {
        // A slot a few above the last one often differs from it in the lowest digit only.
        if let Some((last, position, digit)) = &mut self.last {
            if slot > *last && digit.skip(position, slot - *last) {
                *last = slot;
                return *position;
            }
        }
        let located = match self.located {
            Some(here) if here.start <= slot && slot < here.end => here,
            _ => *self.located.insert(self.index.locate(slot)),
        };
        let position = self.index.decode(slot, &located);
        self.last = LowestDigit::of(&position).map(|digit| (slot, position, digit));
        position
    }
}

/// Where a slot lies: its royal pair and segment, and the segment's absolute slot range.
#[derive(Clone, Copy, Debug)]
struct Located {
    pair: usize,
    segment: Segment,
    start: u64,
    end: u64,
}

/// The dense index of one closed game. Building it costs microseconds to milliseconds (the
/// full game has 1,296 splits); lookups are O(1) and allocation-free.
#[derive(Clone, Debug)]
pub struct MaterialIndex {
    material: Material,
    splits: Vec<Split>,
    /// The split number of each (pieces on the board, mover's hand) pair, by [`split_key`].
    split_by_key: Vec<u16>,
    /// The rank of each sequence of kinds (two bits a place, first place lowest) among the
    /// arrangements of the same pieces, at [`sequence_offset`] of its length: what
    /// [`rank_arrangement`] computes, looked up.
    arrangement_rank: Vec<u16>,
    /// `segment_offset[class][split * 9 + far]`: start of the segment inside a royal pair.
    segment_offset: [Vec<u64>; 3],
    /// Non-empty segments per class, ordered by start, for decoding.
    segments: [Vec<Segment>; 3],
    /// Slots per royal pair, by class.
    class_size: [u64; 3],
    /// Start of each of the 120 royal pairs; entry 120 is the total.
    royal_offset: [u64; 121],
}

/// Class of a royal pair: how many of the two royals stand on a far rank (0, 1 or 2).
#[inline]
fn class_of(a: Square, b: Square) -> usize {
    usize::from(Bitboard::FAR_RANKS.contains(a)) + usize::from(Bitboard::FAR_RANKS.contains(b))
}

/// States of one kind with `count` pieces: (on board, in the mover's hand), in index order.
fn kind_states(count: u8) -> Vec<(u8, u8)> {
    let mut states = Vec::new();
    for on_board in 0..=count {
        for in_mover_hand in 0..=(count - on_board) {
            states.push((on_board, in_mover_hand));
        }
    }
    states
}

/// Every count of a kind (on the board, in a hand, in all) is at most 2: base 3.
const SPLIT_KEYS: usize = 81 * 81;

/// A number below [`SPLIT_KEYS`] for a split's pieces on the board per kind (one byte each)
/// and the mover's hand: their counts as base-3 digits, gathered by one multiplication each.
#[inline]
fn split_key(on_board: u32, mover_hand: [u8; 4]) -> usize {
    // Byte 3 of the product is b0 + 3 b1 + 9 b2 + 27 b3; no lower byte carries (each is at most 78).
    let digits = |bytes: u32| (bytes.wrapping_mul(0x0103_091B) >> 24) as usize;
    digits(on_board) * 81 + digits(u32::from_le_bytes(mover_hand))
}

/// Where the ranks of kind sequences of `len` places start in `arrangement_rank`: after the
/// 4^l sequences of each shorter length l.
#[inline]
fn sequence_offset(len: usize) -> usize {
    ((1usize << (2 * len)) - 1) / 3
}

/// Number of slots in one segment: subsets × kind arrangements × piece states.
fn segment_size(class: usize, split: &Split, far: u8) -> u64 {
    let free_far = 8 - class;
    let free_middle = 6 + class;
    let total = split.board_total;
    if far > total || usize::from(far) > free_far || usize::from(total - far) > free_middle {
        return 0;
    }
    let middle = usize::from(total - far);
    BINOMIAL[free_far][usize::from(far)]
        * BINOMIAL[free_middle][middle]
        * split.kind_arrangements
        * POW3[usize::from(far)]
        * POW4[middle]
}

/// Owner-and-promotion state of a piece: mover unpromoted 0, mover promoted 1, other 2, 3.
#[inline]
fn piece_state(mover_owns: bool, promoted: bool) -> u8 {
    (u8::from(!mover_owns) << 1) | u8::from(promoted)
}

/// The state that cannot occur on a far-rank square (the unpromoted piece of the player
/// whose far rank it is): rank 4 is the mover's far rank, rank 1 the other player's.
#[inline]
fn forbidden_state(square: Square) -> u8 {
    if square.rank() == 3 {
        0
    } else {
        2
    }
}

impl MaterialIndex {
    /// Builds the index of a closed game.
    pub fn new(material: Material) -> MaterialIndex {
        let counts = material.counts();
        let state_radix = counts.map(|c| kind_states(c).len() as u32);
        let split_count: u32 = state_radix.iter().product();
        let per_kind: Vec<Vec<(u8, u8)>> = counts.iter().map(|&c| kind_states(c)).collect();
        let splits: Vec<Split> = (0..split_count)
            .map(|number| {
                let mut rest = number;
                let mut on_board = [0u8; 4];
                let mut in_mover_hand = [0u8; 4];
                for kind in (0..4).rev() {
                    let (b, h) = per_kind[kind][(rest % state_radix[kind]) as usize];
                    rest /= state_radix[kind];
                    on_board[kind] = b;
                    in_mover_hand[kind] = h;
                }
                let board_total: u8 = on_board.iter().sum();
                let mut remaining = usize::from(board_total);
                let mut kind_arrangements = 1;
                for &b in &on_board {
                    kind_arrangements *= BINOMIAL[remaining][usize::from(b)];
                    remaining -= usize::from(b);
                }
                Split { on_board, in_mover_hand, board_total, kind_arrangements }
            })
            .collect();
        let mut segment_offset: [Vec<u64>; 3] = Default::default();
        let mut segments: [Vec<Segment>; 3] = Default::default();
        let mut class_size = [0u64; 3];
        for class in 0..3 {
            let mut start = 0u64;
            for (number, split) in splits.iter().enumerate() {
                for far in 0..9u8 {
                    segment_offset[class].push(start);
                    let size = segment_size(class, split, far);
                    if size > 0 {
                        segments[class].push(Segment { start, split: number as u32, far });
                        start += size;
                    }
                }
            }
            class_size[class] = start;
        }
        let mut royal_offset = [0u64; 121];
        for pair in 0..120 {
            let (a, b) = royal_pair(pair);
            royal_offset[pair + 1] = royal_offset[pair] + class_size[class_of(a, b)];
        }
        let mut split_by_key = vec![u16::MAX; SPLIT_KEYS];
        for (number, split) in splits.iter().enumerate() {
            split_by_key[split_key(u32::from_le_bytes(split.on_board), split.in_mover_hand)] = number as u16;
        }
        let most_on_board = usize::from(counts.iter().sum::<u8>());
        let mut arrangement_rank = vec![0u16; sequence_offset(most_on_board + 1)];
        for len in 0..=most_on_board {
            for sequence in 0..1usize << (2 * len) {
                let (mut places, mut on_board) = ([0u8; 4], [0u8; 4]);
                for place in 0..len {
                    let kind = sequence >> (2 * place) & 3;
                    places[kind] |= 1 << place;
                    on_board[kind] += 1;
                }
                // Sequences with more of a kind than the game has never occur; rank them anyway.
                arrangement_rank[sequence_offset(len) + sequence] = rank_arrangement(&places, len, &on_board) as u16;
            }
        }
        MaterialIndex {
            material,
            splits,
            split_by_key,
            arrangement_rank,
            segment_offset,
            segments,
            class_size,
            royal_offset,
        }
    }

    /// The closed game this index covers.
    pub fn material(&self) -> Material {
        self.material
    }

    /// Number of slots: positions folded by the colour flip and the mirror.
    pub fn slots(&self) -> u64 {
        self.royal_offset[120]
    }

    /// Number of positions in the published convention (both sides to move, nothing
    /// folded), counted independently of the folding over all 240 ordered royal pairs.
    pub fn positions(&self) -> u64 {
        let mut total = 0;
        for a in Square::all() {
            for b in Square::all().filter(|&b| b != a) {
                total += self.class_size[class_of(a, b)];
            }
        }
        2 * total
    }

    /// The slot of `position`, which must belong to this closed game (checked in debug
    /// builds). Any of the four symmetric images of a position gives the same slot.
    pub fn index_of(&self, position: &Position) -> u64 {
        debug_assert_eq!(position.material(), self.material, "position of another closed game");
        self.index_of_view(&View::new(position, position.turn))
    }

    /// Indexes the children of `parent` (the positions after each of its moves) by applying
    /// each move to one shared view of the parent, without building the children.
    pub fn children_of<'a>(&'a self, parent: &'a Position) -> Children<'a> {
        debug_assert_eq!(parent.material(), self.material, "position of another closed game");
        Children { index: self, parent, view: View::new(parent, !parent.turn) }
    }

    /// Indexes the predecessors of `child` (the positions before each of its un-moves) by
    /// applying each un-move to one shared view of the child, without building them: the
    /// retrograde solver's inner loop.
    pub fn parents_of(&self, child: &Position) -> Parents<'_> {
        debug_assert_eq!(child.material(), self.material, "position of another closed game");
        Parents { index: self, view: View::new(child, !child.turn) }
    }

    /// The slot of a position seen in its canonical orientation.
    fn index_of_view(&self, view: &View) -> u64 {
        let View { a, b, canonical, occupied, on_board, mover_hand, .. } = *view;
        let class = class_of(a, b);
        let a_number = usize::from(a.rank() * 2 + a.file());
        let b_number = b.index() - usize::from(b > a);
        let pair = a_number * 15 + b_number;
        let split = self.split_by_key[split_key(on_board, mover_hand)];
        // The subsets among the free squares: close the (at most two) gaps the royals leave.
        let royals = (Bitboard::from_square(a) | Bitboard::from_square(b)).0;
        let far_subset = close_gaps(far_bits(occupied) as u8, far_bits(royals) as u8);
        let middle_subset = close_gaps(middle_bits(occupied) as u8, middle_bits(royals) as u8);

        // Far pieces then middle pieces, each by square: the sequence of kinds, state digits.
        let mut sequence = 0usize;
        let mut len = 0;
        let mut far_digits = 0u64;
        let mut middle_digits = 0u64;
        for square in Bitboard(occupied) & Bitboard::FAR_RANKS {
            let code = canonical[square.index()];
            sequence |= usize::from(code >> 2) << (2 * len);
            len += 1;
            let state = code & 3;
            far_digits = far_digits * 3 + u64::from(state - u8::from(state > forbidden_state(square)));
        }
        let far = len;
        for square in Bitboard(occupied) & Bitboard::MIDDLE_RANKS {
            let code = canonical[square.index()];
            sequence |= usize::from(code >> 2) << (2 * len);
            len += 1;
            middle_digits = middle_digits * 4 + u64::from(code & 3);
        }
        let middle = len - far;
        let free_middle_count = 8 - middle_bits(royals).count_ones() as usize;
        let split_info = &self.splits[split as usize];
        let arrangement = u64::from(self.arrangement_rank[sequence_offset(len) + sequence]);

        let mut inner = u64::from(COLEX_RANK[far_subset as usize]);
        inner = inner * BINOMIAL[free_middle_count][middle] + u64::from(COLEX_RANK[middle_subset as usize]);
        inner = inner * split_info.kind_arrangements + arrangement;
        inner = inner * POW3[far] + far_digits;
        inner = inner * POW4[middle] + middle_digits;
        self.royal_offset[pair] + self.segment_offset[class][split as usize * 9 + far] + inner
    }

    /// The canonical position of `slot` (first player to move, its royal on file a or b).
    ///
    /// # Panics
    /// If `slot >= self.slots()`.
    pub fn position_at(&self, slot: u64) -> Position {
        self.decode(slot, &self.locate(slot))
    }

    /// A decoder for slots visited in increasing order with gaps (a level's slots within a
    /// chunk): like [`MaterialIndex::position_at`], but a slot in the same segment as the one
    /// before is decoded without looking its segment up again.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor { index: self, located: None, last: None }
    }

    /// Calls `visit` with each slot of a range and its canonical position, in order: faster
    /// than [`MaterialIndex::position_at`] for each, since a segment is looked up once, and most
    /// slots are the one before with the state of one piece changed in place.
    ///
    /// # Panics
    /// If the range reaches past `self.slots()`.
    pub fn for_each_position(&self, slots: std::ops::Range<u64>, mut visit: impl FnMut(u64, &Position)) {
        let mut located: Option<Located> = None;
        let mut slot = slots.start;
        while slot < slots.end {
            let here = match located {
                Some(l) if l.start <= slot && slot < l.end => l,
                _ => *located.insert(self.locate(slot)),
            };
            let mut position = self.decode(slot, &here);
            visit(slot, &position);
            slot += 1;
            // Until the lowest digit carries, the next slot needs no decoding.
            let Some(mut digit) = LowestDigit::of(&position) else { continue };
            while slot < slots.end && digit.advance(&mut position) {
                visit(slot, &position);
                slot += 1;
            }
        }
    }

    /// Finds the royal pair and segment of `slot`.
    fn locate(&self, slot: u64) -> Located {
        assert!(slot < self.slots(), "slot {slot} out of range 0..{}", self.slots());
        let pair = self.royal_offset.partition_point(|&o| o <= slot) - 1;
        let (a, b) = royal_pair(pair);
        let segments = &self.segments[class_of(a, b)];
        let within = slot - self.royal_offset[pair];
        let number = segments.partition_point(|seg| seg.start <= within) - 1;
        let segment = segments[number];
        let start = self.royal_offset[pair] + segment.start;
        let size =
            segments.get(number + 1).map_or(self.royal_offset[pair + 1], |next| self.royal_offset[pair] + next.start)
                - start;
        Located { pair, segment, start, end: start + size }
    }

    /// The position of `slot`, inside the segment `located`.
    fn decode(&self, slot: u64, located: &Located) -> Position {
        let (a, b) = royal_pair(located.pair);
        let segment = located.segment;
        let within = slot - self.royal_offset[located.pair];
        let split = &self.splits[segment.split as usize];
        let far = usize::from(segment.far);
        let middle = usize::from(split.board_total) - far;
        let free = !(Bitboard::from_square(a) | Bitboard::from_square(b)).0;
        let (free_far, free_middle) = (far_bits(free), middle_bits(free));

        let mut rest = within - segment.start;
        let mut middle_digits = rest % POW4[middle];
        rest /= POW4[middle];
        let mut far_digits = rest % POW3[far];
        rest /= POW3[far];
        let arrangement = rest % split.kind_arrangements;
        rest /= split.kind_arrangements;
        let middle_count = BINOMIAL[free_middle.count_ones() as usize][middle];
        let middle_subset = COLEX_UNRANK[middle][(rest % middle_count) as usize];
        let far_subset = COLEX_UNRANK[far][(rest / middle_count) as usize];

        let mut sequence = [0u8; 8];
        unrank_arrangement(arrangement, &split.on_board, &mut sequence[..far + middle]);
        // Digits were written most significant first: peel them off last piece first.
        let mut states = [0u8; 8];
        for i in (0..far).rev() {
            states[i] = (far_digits % 3) as u8;
            far_digits /= 3;
        }
        for i in (far..far + middle).rev() {
            states[i] = (middle_digits % 4) as u8;
            middle_digits /= 4;
        }

        let mut board: [Option<Piece>; 16] = [None; 16];
        board[a.index()] = Some(Piece::new(Color::First, Kind::Royal, false));
        board[b.index()] = Some(Piece::new(Color::Second, Kind::Royal, false));
        let mut occupied = ByColor { first: Bitboard::from_square(a), second: Bitboard::from_square(b) };
        let far_set = far_squares(PDEP8[free_far][usize::from(far_subset)]);
        let middle_set = middle_squares(PDEP8[free_middle][usize::from(middle_subset)]);
        for (i, square) in far_set.chain(middle_set).enumerate() {
            let code = states[i];
            let state = if i < far { code + u8::from(code >= forbidden_state(square)) } else { code };
            let piece = piece_from(sequence[i], state);
            board[square.index()] = Some(piece);
            occupied[piece.color] |= Bitboard::from_square(square);
        }
        let counts = self.material.counts();
        let other_hand: [u8; 4] = std::array::from_fn(|k| counts[k] - split.on_board[k] - split.in_mover_hand[k]);
        let hands = ByColor { first: Hand(split.in_mover_hand), second: Hand(other_hand) };
        Position::assemble(board, occupied, ByColor { first: a, second: b }, hands, Color::First)
    }
}

/// The lowest digit of a slot's number: the state of the board piece on the highest middle
/// square (or, with none in the middle, the highest far-rank square). The next slots, until
/// this digit carries, are the same position with that piece's state stepped through the
/// states its square allows.
#[derive(Clone, Copy)]
struct LowestDigit {
    square: Square,
    kind: u8,
    /// The states the square allows, in index order (see [`forbidden_state`]).
    states: &'static [u8],
    /// Where the piece's state is in `states`.
    at: usize,
}

impl LowestDigit {
    /// The lowest digit of a canonical position; `None` with no piece on the board.
    fn of(position: &Position) -> Option<LowestDigit> {
        let royals = Bitboard::from_square(position.royals.first) | Bitboard::from_square(position.royals.second);
        let pieces = position.occupied() ^ royals;
        let middle = (pieces & Bitboard::MIDDLE_RANKS).0;
        let far = (pieces & Bitboard::FAR_RANKS).0;
        let (square, states): (Square, &'static [u8]) = match (middle, far) {
            (0, 0) => return None,
            (0, far) => {
                let square = Square::from_index(15 - far.leading_zeros() as u8);
                (square, if forbidden_state(square) == 0 { &[1, 2, 3] } else { &[0, 1, 3] })
            }
            (middle, _) => (Square::from_index(15 - middle.leading_zeros() as u8), &[0, 1, 2, 3]),
        };
        let piece = position.board[square.index()]?;
        // Canonical positions have the first player to move.
        let state = piece_state(piece.color == Color::First, piece.promoted);
        let at = states.iter().position(|&s| s == state)?;
        Some(LowestDigit { square, kind: piece.kind.hand_index()? as u8, states, at })
    }

    /// Steps the piece to its next state in `position`; false when the digit would carry.
    #[inline]
    fn advance(&mut self, position: &mut Position) -> bool {
        self.skip(position, 1)
    }

    /// Steps the piece `steps` states on in `position`; false (and `position` unchanged) when
    /// the digit would carry.
    #[inline]
    fn skip(&mut self, position: &mut Position, steps: u64) -> bool {
        if steps >= (self.states.len() - self.at) as u64 {
            return false;
        }
        self.at += steps as usize;
        let moved = piece_from(self.kind, self.states[self.at]);
        let square = self.square.index();
        if let Some(before) = position.board[square].filter(|before| before.color != moved.color) {
            position.occupied[before.color] ^= Bitboard::from_square(self.square);
            position.occupied[moved.color] |= Bitboard::from_square(self.square);
        }
        position.put(self.square, Some(moved));
        true
    }
}

/// The royal squares of pair number `pair` (0..120): the mover's on file a/b, then the other.
fn royal_pair(pair: usize) -> (Square, Square) {
    let a = Square::from_index(CANONICAL_ROYAL_SQUARES[pair / 15]);
    let b_number = (pair % 15) as u8;
    let b = Square::from_index(b_number + u8::from(b_number >= a.index() as u8));
    (a, b)
}

fn piece_from(kind: u8, state: u8) -> Piece {
    let color = if state & 2 == 0 { Color::First } else { Color::Second };
    Piece::new(color, Kind::HAND_KINDS[usize::from(kind)], state & 1 == 1)
}

/// Rank of an arrangement of kinds on `len` ordered places, given as `places[k]`, the bit set
/// of the places holding kind `k`: kind by kind, the colex rank of its places among the places
/// not yet taken (table lookups only, no loops over places).
#[inline]
fn rank_arrangement(places: &[u8; 4], len: usize, on_board: &[u8; 4]) -> u64 {
    let mut rank = 0u64;
    let mut remaining = ((1u16 << len) - 1) as u8;
    for kind in 0..4 {
        let count = on_board[kind];
        if count == 0 {
            continue;
        }
        let among = PEXT8[usize::from(remaining)][usize::from(places[kind])];
        rank = rank * BINOMIAL[remaining.count_ones() as usize][usize::from(count)]
            + u64::from(COLEX_RANK[usize::from(among)]);
        remaining ^= places[kind];
    }
    rank
}

/// Inverse of [`rank_arrangement`]: writes the kind of each place into `sequence`.
fn unrank_arrangement(mut rank: u64, on_board: &[u8; 4], sequence: &mut [u8]) {
    // Each kind's radix depends on how many places the kinds before it left.
    let mut lens = [0usize; 4];
    let mut len = sequence.len();
    for kind in 0..4 {
        lens[kind] = len;
        len -= usize::from(on_board[kind]);
    }
    let mut digits = [0u64; 4];
    for kind in (0..4).rev() {
        let count = usize::from(on_board[kind]);
        if count > 0 {
            let radix = BINOMIAL[lens[kind]][count];
            digits[kind] = rank % radix;
            rank /= radix;
        }
    }
    let mut remaining = ((1u16 << sequence.len()) - 1) as u8;
    for kind in 0..4 {
        let count = usize::from(on_board[kind]);
        if count == 0 {
            continue;
        }
        let among = COLEX_UNRANK[count][digits[kind] as usize];
        let places = PDEP8[usize::from(remaining)][usize::from(among)];
        for place in Bitboard(u16::from(places)) {
            sequence[place.index()] = kind as u8;
        }
        remaining ^= places;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_published_small_games() {
        let count = |name: &str| MaterialIndex::new(name.parse().unwrap()).positions();
        assert_eq!(count("KK"), 480);
        assert_eq!(count("KKC"), 24_480);
        assert_eq!(count("KKCC"), 582_832);
        assert_eq!(count("KKCF"), 1_164_704);
        assert_eq!(count("KKCCFFRRTT"), 146_855_796_943_200);
    }

    /// Decoded positions carry their board's direction masks, whether decoded whole or stepped
    /// from the slot before (`LowestDigit::skip`).
    #[test]
    fn decoded_positions_keep_their_direction_masks() {
        let index = MaterialIndex::new("KKCFR".parse().unwrap());
        let mut cursor = index.cursor();
        let mut checked = 0;
        for slot in (0..index.slots()).step_by(997).flat_map(|s| s..(s + 40).min(index.slots())) {
            let position = cursor.position_at(slot);
            assert!(position.masks_agree(), "slot {slot}: {position}");
            checked += 1;
        }
        assert!(checked > 400_000, "{checked}");
    }

    #[test]
    fn slots_fold_by_four() {
        for material in Material::all_up_to(8) {
            let index = MaterialIndex::new(material);
            assert_eq!(index.positions(), 4 * index.slots(), "{material}");
        }
    }

    #[test]
    fn closing_gaps_is_pext_of_the_complement() {
        for gaps in (0..=255u8).filter(|g| g.count_ones() <= 2) {
            for bits in (0..=255u8).filter(|b| b & gaps == 0) {
                assert_eq!(close_gaps(bits, gaps), PEXT8[usize::from(!gaps)][usize::from(bits)]);
            }
        }
    }

    #[test]
    fn arrangements_round_trip() {
        let on_board = [2, 1, 0, 2];
        let mut seen = std::collections::HashSet::new();
        let total = 5 * 4 * 3 * 2 / (2 * 2);
        for rank in 0..total {
            let mut sequence = [0u8; 5];
            unrank_arrangement(rank, &on_board, &mut sequence);
            let mut places = [0u8; 4];
            for (place, &kind) in sequence.iter().enumerate() {
                places[usize::from(kind)] |= 1 << place;
            }
            assert_eq!(rank_arrangement(&places, sequence.len(), &on_board), rank);
            assert!(seen.insert(sequence));
        }
    }
}
