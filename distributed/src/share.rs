//! One worker's share of a solve: a contiguous range of slots, their value bytes and
//! undecided-move counters, and the overflow entries among them. No communication here: the
//! share turns its slots decided at a level into predecessor slots (which the dataflow routes
//! to their owners) and applies the predecessor updates it receives.
//!
//! The rules are the in-memory solver's (`shogi4_tablebase::solve`), split by owner: init
//! decides each slot alone; at level `n`, every slot decided at distance `n` names its
//! predecessors; an update of level `n` makes an undecided predecessor a win in `n + 1` (`n`
//! even) or counts it down, a loss in `n + 1` at zero (`n` odd). Within a level, updates only
//! ever write distance `n + 1` and counting down commutes, so the result is the same whatever
//! the order in which updates arrive and however the slots are split.

use std::ops::Range;

use shogi4_engine::MaterialIndex;
use shogi4_tablebase::{level_rule, FirstLook, Value, OVERFLOW_CODE};

/// Which worker owns which slots: `peers` contiguous ranges of (nearly) equal size, in worker
/// order, so that the table is the shares laid end to end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    slots: u64,
    /// Slots per share (the last may be shorter, and with more workers than slots some are
    /// empty).
    share: u64,
}

impl Partition {
    /// Splits `slots` among `peers` workers.
    pub fn new(slots: u64, peers: usize) -> Partition {
        Partition { slots, share: slots.div_ceil(peers as u64).max(1) }
    }

    /// The worker that owns `slot`.
    #[inline]
    pub fn owner(&self, slot: u64) -> usize {
        (slot / self.share) as usize
    }

    /// The slots of `worker`.
    pub fn range(&self, worker: usize) -> Range<u64> {
        let start = (worker as u64 * self.share).min(self.slots);
        start..(start + self.share).min(self.slots)
    }
}

/// What init found in a share.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InitCounts {
    /// Moves generated.
    pub edges: u64,
    /// Slots whose side to move captures the royal (level 1, which init settles).
    pub wins_in_one: u64,
}

/// What a scan of part of a level produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scanned {
    /// Slots of this level found.
    pub found: u64,
    /// Predecessor updates produced (un-moves).
    pub edges: u64,
    /// The whole share has been scanned for this level.
    pub done: bool,
}

/// A worker's slots and their state (1.125 bytes a slot): a state byte per slot, the value
/// code once the slot is decided and its undecided-move counter before, and a decided bit per
/// slot, as in the in-memory solver (which also keeps a frontier bit).
pub struct Share {
    /// The slots owned.
    pub range: Range<u64>,
    /// One state byte per slot; after [`Share::settle`], the table's value bytes.
    pub state: Vec<u8>,
    /// One bit per slot, set once it is decided.
    pub decided: Vec<u64>,
    /// Distances above `max_inline` (their byte is [`OVERFLOW_CODE`]), by slot, in the order
    /// they were decided.
    pub overflow: Vec<(u64, u32)>,
    max_inline: u32,
}

impl Share {
    /// An undecided share of `range`; distances above `max_inline` go to the overflow list.
    pub fn new(range: Range<u64>, max_inline: u32) -> Share {
        let len = (range.end - range.start) as usize;
        Share { range, state: vec![0; len], decided: vec![0; len.div_ceil(64)], overflow: Vec::new(), max_inline }
    }

    #[inline]
    fn is_decided(&self, i: usize) -> bool {
        self.decided[i / 64] & 1 << (i % 64) != 0
    }

    #[inline]
    fn decide(&mut self, i: usize, code: u8) {
        self.decided[i / 64] |= 1 << (i % 64);
        self.state[i] = code;
    }

    /// Ends the solve: the slots still undecided are draws (byte 0), and the state bytes are
    /// the share's part of the table.
    pub fn settle(&mut self) {
        for i in 0..self.state.len() {
            if !self.is_decided(i) {
                self.state[i] = 0;
            }
        }
    }

    /// Decides what each slot settles alone (wins in 1, losses in 0 and 2) and sets the
    /// counters of the others to their moves not into a win in 1 for the opponent.
    pub fn init(&mut self, index: &MaterialIndex) -> InitCounts {
        let mut counts = InitCounts::default();
        let start = self.range.start;
        index.for_each_position(self.range.clone(), |slot, position| {
            let i = (slot - start) as usize;
            let (look, moves) = FirstLook::of(position);
            counts.edges += moves;
            match look {
                FirstLook::Settled(value) => {
                    counts.wins_in_one += u64::from(value == Value::Win(1));
                    self.decide(i, value.encode());
                }
                FirstLook::Open(open) => self.state[i] = open,
            }
        });
        counts
    }

    /// Scans for slots decided at distance `level`, from `*next` (an offset into the share, or
    /// into the overflow list above `max_inline`), and pushes their predecessors' slots to
    /// `out` (all but the wins in 1, which are never updated) until it holds at least `limit`
    /// or the share is done.
    pub fn scan(
        &self,
        index: &MaterialIndex,
        level: u32,
        next: &mut usize,
        limit: usize,
        out: &mut Vec<u64>,
    ) -> Scanned {
        let mut scanned = Scanned::default();
        let mut predecessors_of = |out: &mut Vec<u64>, position: shogi4_engine::Position| {
            let parents = index.parents_of(&position);
            position.unmoves(|unmove| {
                scanned.edges += 1;
                // A predecessor that can capture the royal is a win in 1, decided by init:
                // no update is sent for it (about 40% of all un-moves).
                if !position.before_can_capture_royal(&unmove) {
                    out.push(parents.index_before(&unmove));
                }
            });
            scanned.found += 1;
        };
        if level <= self.max_inline {
            let code = Value::from_dtw(level).encode();
            let mut cursor = index.cursor();
            while *next < self.state.len() && out.len() < limit {
                // An undecided slot's byte is a counter, which may equal the code.
                if self.state[*next] == code && self.is_decided(*next) {
                    let slot = self.range.start + *next as u64;
                    predecessors_of(out, cursor.position_at(slot));
                }
                *next += 1;
            }
            scanned.done = *next == self.state.len();
        } else {
            while *next < self.overflow.len() && out.len() < limit {
                let (slot, dtw) = self.overflow[*next];
                if dtw == level {
                    predecessors_of(out, index.position_at(slot));
                }
                *next += 1;
            }
            scanned.done = *next == self.overflow.len();
        }
        scanned
    }

    /// Applies one predecessor update of level `n` to `slot`, one of this share's.
    #[inline]
    pub fn apply(&mut self, slot: u64, n: u32) {
        let i = (slot - self.range.start) as usize;
        if self.is_decided(i) {
            return;
        }
        let count_down = || {
            let before = self.state[i];
            self.state[i] -= 1;
            before
        };
        if level_rule::decides(n, count_down) {
            let dtw = n + 1;
            let code = level_rule::code_for(dtw, self.max_inline);
            if code == OVERFLOW_CODE {
                self.overflow.push((slot, dtw));
            }
            self.decide(i, code);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shogi4_tablebase::{solve_with_inline_limit, Silent, MAX_INLINE_DTW};

    /// The whole distributed algorithm without the dataflow: `peers` shares, every level's
    /// updates shuffled and delivered to their owners, until a level decides nothing.
    fn solve_in_shares(material: &str, peers: usize, max_inline: u32, seed: u64) -> (Vec<u8>, Vec<(u64, u32)>) {
        let index = MaterialIndex::new(material.parse().unwrap());
        let partition = Partition::new(index.slots(), peers);
        let mut shares: Vec<Share> = (0..peers).map(|w| Share::new(partition.range(w), max_inline)).collect();
        let wins_in_one: u64 = shares.iter_mut().map(|s| s.init(&index).wins_in_one).sum();
        let mut state = seed | 1;
        let mut random = move |below: usize| {
            // xorshift64: any fixed scrambling of the delivery order will do.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        for level in 0.. {
            let mut updates = Vec::new();
            let mut found = 0;
            if level == 1 {
                found = wins_in_one;
            } else {
                for share in &shares {
                    let mut next = 0;
                    // Small batches, as a worker under memory pressure would send them.
                    let mut batch = Vec::new();
                    loop {
                        let scanned = share.scan(&index, level, &mut next, 7, &mut batch);
                        found += scanned.found;
                        updates.append(&mut batch);
                        if scanned.done {
                            break;
                        }
                    }
                }
            }
            for i in (1..updates.len()).rev() {
                updates.swap(i, random(i + 1));
            }
            for slot in updates {
                shares[partition.owner(slot)].apply(slot, level);
            }
            if found == 0 && level >= 1 {
                break;
            }
        }
        shares.iter_mut().for_each(Share::settle);
        let values = shares.iter().flat_map(|s| s.state.iter().copied()).collect();
        let mut overflow: Vec<(u64, u32)> = shares.iter().flat_map(|s| s.overflow.iter().copied()).collect();
        overflow.sort_unstable();
        (values, overflow)
    }

    #[test]
    fn partitions_cover_every_slot_once_in_order() {
        for (slots, peers) in [(10, 3), (3, 8), (1 << 20, 16), (7, 7), (1, 1)] {
            let partition = Partition::new(slots, peers);
            let mut next = 0;
            for worker in 0..peers {
                let range = partition.range(worker);
                assert_eq!(range.start, next);
                assert!(range.clone().all(|slot| partition.owner(slot) == worker));
                next = range.end;
            }
            assert_eq!(next, slots);
        }
    }

    #[test]
    fn shares_in_any_order_give_the_in_memory_tables() {
        for material in ["KK", "KKC", "KKF", "KKR", "KKT", "KKCF"] {
            let reference = shogi4_tablebase::solve(material.parse().unwrap(), &Silent).table;
            for (peers, seed) in [(1, 1), (3, 2), (8, 3), (64, 4)] {
                let (values, overflow) = solve_in_shares(material, peers, MAX_INLINE_DTW, seed);
                assert!(values == reference.values, "{material} on {peers} shares");
                assert_eq!(overflow, reference.overflow);
            }
        }
    }

    #[test]
    fn overflow_levels_match_the_in_memory_solver() {
        // Distances above 5 kept in the overflow list, as 254 and more are in big games.
        let reference = solve_with_inline_limit("KKC".parse().unwrap(), &Silent, None, 5).unwrap().table;
        assert!(!reference.overflow.is_empty());
        let (values, overflow) = solve_in_shares("KKC", 5, 5, 9);
        assert!(values == reference.values);
        assert_eq!(overflow, reference.overflow);
    }
}
