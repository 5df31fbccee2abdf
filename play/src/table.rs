//! The transposition table: what earlier searches learnt of a position (its best move, a
//! score and whether that score is exact or a bound, the depth it was searched to), in a
//! fixed number of small entries shared by every search thread.
//!
//! Entries are two 64-bit words written without locks; the first holds the position's hash
//! xor-ed with the second, so a torn write (two threads storing at once) reads back as a
//! miss, never as another position's data. A hit is a 64-bit hash match: a rare collision can
//! give a wrong move or score, which the search treats as advice (a table move is played only
//! if it is legal, and proven scores never come from here).

use std::sync::atomic::{AtomicU64, Ordering};

/// What a stored score says of the position's true score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The score is exact (within the searched depth).
    Exact,
    /// The true score is at least this (the search failed high).
    Lower,
    /// The true score is at most this (the search failed low).
    Upper,
}

/// One entry, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The best (or refuting) move found, encoded by `ordering::encode`; 0 for none.
    pub mv: u16,
    /// The score, mate scores counted from this node (`score::to_table`).
    pub score: i32,
    /// The depth searched.
    pub depth: i32,
    /// What the score is.
    pub bound: Bound,
}

/// Bytes in one entry.
const ENTRY_BYTES: usize = 16;

/// A fixed-size table of entries, allocated once.
pub struct Table {
    slots: Box<[[AtomicU64; 2]]>,
    generation: AtomicU64,
}

/// A position key mixed down to 64 bits.
#[inline]
pub fn hash(key: u128) -> u64 {
    let mixed = (key as u64) ^ ((key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed ^ (mixed >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (mixed >> 32)
}

impl Table {
    /// A table of at most `megabytes` MiB (and at least two entries).
    pub fn new(megabytes: usize) -> Table {
        let entries = (megabytes * (1 << 20) / ENTRY_BYTES).max(2) & !1;
        let slots = (0..entries).map(|_| [AtomicU64::new(0), AtomicU64::new(0)]).collect();
        Table { slots, generation: AtomicU64::new(0) }
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        for slot in self.slots.iter() {
            slot[0].store(0, Ordering::Relaxed);
            slot[1].store(0, Ordering::Relaxed);
        }
    }

    /// Marks the start of a new search: older entries are replaced first.
    pub fn new_search(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    /// The two slots a hash may live in.
    #[inline]
    fn bucket(&self, hash: u64) -> usize {
        let index = ((u128::from(hash) * self.slots.len() as u128) >> 64) as usize;
        index & !1
    }

    /// The entry stored for `hash`, if any.
    pub fn probe(&self, hash: u64) -> Option<Entry> {
        let first = self.bucket(hash);
        for slot in &self.slots[first..first + 2] {
            let data = slot[1].load(Ordering::Relaxed);
            if data != 0 && slot[0].load(Ordering::Relaxed) ^ data == hash {
                return Some(unpack(data));
            }
        }
        None
    }

    /// Stores an entry for `hash`: over the same position's entry, else over the shallower or
    /// older of the bucket's two. A new entry without a move keeps the old one's move.
    pub fn store(&self, hash: u64, mut entry: Entry) {
        let first = self.bucket(hash);
        let generation = self.generation.load(Ordering::Relaxed) & 0x3F;
        let mut victim = first;
        let mut victim_worth = i64::MAX;
        for index in first..first + 2 {
            let slot = &self.slots[index];
            let data = slot[1].load(Ordering::Relaxed);
            if data != 0 && slot[0].load(Ordering::Relaxed) ^ data == hash {
                let old = unpack(data);
                if entry.mv == 0 {
                    entry.mv = old.mv;
                }
                if old.depth > entry.depth + 2 && entry.bound != Bound::Exact {
                    return;
                }
                victim = index;
                break;
            }
            let age = (generation + 64 - ((data >> 42) & 0x3F)) & 0x3F;
            let worth = if data == 0 { i64::MIN } else { unpack(data).depth as i64 - 4 * age as i64 };
            if worth < victim_worth {
                victim_worth = worth;
                victim = index;
            }
        }
        let data = pack(entry, generation);
        self.slots[victim][0].store(hash ^ data, Ordering::Relaxed);
        self.slots[victim][1].store(data, Ordering::Relaxed);
    }
}

fn pack(entry: Entry, generation: u64) -> u64 {
    let bound = match entry.bound {
        Bound::Exact => 1,
        Bound::Lower => 2,
        Bound::Upper => 3,
    };
    u64::from(entry.mv)
        | (u64::from(entry.score as i16 as u16) << 16)
        | (u64::from(entry.depth.clamp(0, 255) as u8) << 32)
        | (bound << 40)
        | (generation << 42)
}

fn unpack(data: u64) -> Entry {
    let bound = match (data >> 40) & 3 {
        1 => Bound::Exact,
        2 => Bound::Lower,
        _ => Bound::Upper,
    };
    Entry { mv: data as u16, score: i32::from((data >> 16) as u16 as i16), depth: i32::from((data >> 32) as u8), bound }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_and_other_hashes_miss() {
        let table = Table::new(1);
        let entry = Entry { mv: 0x1234, score: -31_990, depth: 7, bound: Bound::Lower };
        table.store(hash(42), entry);
        assert_eq!(table.probe(hash(42)), Some(entry));
        assert_eq!(table.probe(hash(43)), None);
        // A shallower, moveless entry for the same position keeps the move.
        table.store(hash(42), Entry { mv: 0, score: 5, depth: 6, bound: Bound::Exact });
        assert_eq!(table.probe(hash(42)).map(|e| (e.mv, e.score)), Some((0x1234, 5)));
    }
}
