//! The transposition table: what has been established about positions, keyed exactly.
//!
//! Every fact stored is a truth about the position alone (values ignore history), so entries
//! stay valid across iterations, searches and requests: a table can be reused for as long
//! as one likes. Each entry holds four depth bounds on two monotone questions:
//! "does the side to move win within `d` plies?" and "does it lose within `d`?" (if yes for
//! `d`, yes for every larger `d`). Keys are exact ([`Position::key`]), so a lookup never
//! answers for another position by mistake.
//!
//! **Hand dominance.** A lookup also reads what is known of the same board with other hands:
//! a piece more in the mover's hand, or one less in the opponent's, never hurts the mover
//! (it only adds moves for the one and removes moves for the other, and a player without a
//! move loses), so a win within `d` of a weaker hand is a win within `d` here, and a loss
//! within `d` of a stronger hand is a loss within `d` here (and so for the refutations, the
//! other way round). The hands of one board share a bucket, so the lookup costs no extra
//! memory access. Tested against the tables: `search/tests/against_tables.rs`.

use std::cmp::Ordering;

use shogi4_engine::Position;

/// Bounds known for one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Largest `d` for which "no win within `d`" is established (0: nothing beyond the
    /// trivial).
    pub no_win_within: Depth,
    /// Smallest `d` for which "win within `d`" is established; [`UNKNOWN`] if none.
    pub win_within: Depth,
    /// One more than the largest `d` for which "no loss within `d`" is established (0:
    /// nothing known; a loss within 0 is possible, so 0 itself is a fact worth storing).
    pub no_loss_within_plus_one: Depth,
    /// Smallest `d` for which "loss within `d`" is established; [`UNKNOWN`] if none.
    pub loss_within: Depth,
    /// The move (its index in generation order) that last decided a question here: the
    /// winning move, or the defence that refuted a loss. Tried first next time.
    pub hint: u8,
}

/// A distance as the table stores it: wide enough for the upper bounds of value proofs,
/// which may lie past the deepest question asked ([`crate::MAX_DEPTH`]), at no cost (an
/// entry's 16-byte key sets its size).
pub(crate) type Depth = u16;

/// "Not established" for the upper bounds.
pub(crate) const UNKNOWN: Depth = Depth::MAX;

/// The deepest distance a search may ask about: every depth stays below `UNKNOWN`, the
/// table's "not established" marker.
pub const MAX_DEPTH: u32 = 250;

impl Bounds {
    const NOTHING: Bounds =
        Bounds { no_win_within: 0, win_within: UNKNOWN, no_loss_within_plus_one: 0, loss_within: UNKNOWN, hint: 0 };

    /// Both sets of facts together (the hint of `self`).
    fn with(self, other: Bounds) -> Bounds {
        Bounds {
            no_win_within: self.no_win_within.max(other.no_win_within),
            win_within: self.win_within.min(other.win_within),
            no_loss_within_plus_one: self.no_loss_within_plus_one.max(other.no_loss_within_plus_one),
            loss_within: self.loss_within.min(other.loss_within),
            hint: self.hint,
        }
    }
}

/// How the hands of two keys of one board and side to move compare for the side to move:
/// `Less` if `a`'s are weaker (no piece more in the mover's hand, none less in the
/// opponent's), `Greater` if stronger, `Equal` if the same, `None` if neither.
fn dominance(a: u128, b: u128) -> Option<Ordering> {
    let mover = Position::turn_in_key(b);
    let (a_mover, b_mover) = (Position::hand_in_key(a, mover), Position::hand_in_key(b, mover));
    let (a_other, b_other) = (Position::hand_in_key(a, !mover), Position::hand_in_key(b, !mover));
    let mut order = Ordering::Equal;
    for kind in 0..4 {
        // More in the mover's hand is stronger, more in the opponent's weaker.
        for this in [a_mover.0[kind].cmp(&b_mover.0[kind]), b_other.0[kind].cmp(&a_other.0[kind])] {
            match (order, this) {
                (_, Ordering::Equal) => {}
                (Ordering::Equal, _) => order = this,
                (seen, this) if seen != this => return None,
                _ => {}
            }
        }
    }
    Some(order)
}

#[derive(Clone, Copy)]
struct Entry {
    key: u128,
    bounds: Bounds,
}

const EMPTY: Entry = Entry { key: 0, bounds: Bounds::NOTHING };
/// Entries per bucket: a new position replaces the one with least established. A bucket holds
/// the positions of one board (all hands), or of boards that share its hash.
const WAYS: usize = 2;

/// A fixed-size table: its memory is allocated once, at creation, and never grows.
pub struct TranspositionTable {
    buckets: Vec<[Entry; WAYS]>,
}

impl TranspositionTable {
    /// A table of about `bytes` bytes (at least one bucket).
    pub fn with_bytes(bytes: usize) -> TranspositionTable {
        let bucket = std::mem::size_of::<[Entry; WAYS]>();
        // The largest power of two that fits, so a bucket is found by masking.
        let fitting = (bytes / bucket).max(1);
        let buckets = if fitting.is_power_of_two() { fitting } else { fitting.next_power_of_two() / 2 };
        TranspositionTable { buckets: shogi4_tablebase::huge_vec([EMPTY; WAYS], buckets) }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<[Entry; WAYS]>()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.buckets.fill([EMPTY; WAYS]);
    }

    fn bucket(&self, key: u128) -> usize {
        // By board and side to move alone, so that every hand of a board meets in one bucket.
        mix(key & !Position::KEY_HANDS, 0) as usize & (self.buckets.len() - 1)
    }

    /// What is known about `position` (keyed by `key`): its own entry, and what the entries of
    /// the same board with weaker or stronger hands imply.
    ///
    /// Always inlined: the value search reads every child's entry, and as a call this took
    /// about 5% of its time (see `docs/measurements.md`, "The search's budget split and the cost of a node").
    #[inline(always)]
    pub(crate) fn get(&self, key: u128) -> Bounds {
        let mut bounds = Bounds::NOTHING;
        // The empty key 0 is no legal position (every position has two royals).
        for entry in &self.buckets[self.bucket(key)] {
            if entry.key == key {
                let hint = entry.bounds.hint;
                bounds = bounds.with(entry.bounds);
                bounds.hint = hint;
            } else if entry.key != 0 && (entry.key ^ key) & !Position::KEY_HANDS == 0 {
                bounds = match dominance(entry.key, key) {
                    Some(Ordering::Less) => bounds.with(Bounds {
                        win_within: entry.bounds.win_within,
                        no_loss_within_plus_one: entry.bounds.no_loss_within_plus_one,
                        ..Bounds::NOTHING
                    }),
                    Some(Ordering::Greater) => bounds.with(Bounds {
                        no_win_within: entry.bounds.no_win_within,
                        loss_within: entry.bounds.loss_within,
                        ..Bounds::NOTHING
                    }),
                    _ => bounds,
                };
            }
        }
        bounds
    }

    /// Asks the CPU to fetch the bucket of `key`, for a lookup soon after.
    #[inline]
    pub(crate) fn prefetch(&self, key: u128) {
        shogi4_tablebase::prefetch(&self.buckets[self.bucket(key)]);
    }

    /// Records `bounds` for `key`, replacing what was there.
    pub(crate) fn put(&mut self, key: u128, bounds: Bounds) {
        let index = self.bucket(key);
        let bucket = &mut self.buckets[index];
        let worth = |e: &Entry| e.bounds.no_win_within.max(e.bounds.no_loss_within_plus_one);
        let slot = match bucket.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => (0..WAYS).min_by_key(|&i| (bucket[i].key != 0, worth(&bucket[i]))).expect("WAYS > 0"),
        };
        bucket[slot] = Entry { key, bounds };
    }
}

impl TranspositionTable {
    /// Records what an outcome says about the two questions, for every depth.
    pub(crate) fn remember(&mut self, key: u128, outcome: crate::Outcome) {
        let deepest = crate::MAX_DEPTH as Depth;
        // A lower bound may be lowered to what the table holds, never an upper one.
        let depth = |d: u32| d.min(crate::MAX_DEPTH) as Depth;
        let upper = |d: u32| if d < u32::from(UNKNOWN) { d as Depth } else { UNKNOWN };
        let mut bounds = self.get(key);
        match (outcome.proven_win(), outcome.distance_bounds()) {
            (Some(true), Some((at_least, at_most))) => {
                bounds.win_within = bounds.win_within.min(upper(at_most));
                // No win within at_least − 2; a win excludes every loss.
                bounds.no_win_within = bounds.no_win_within.max(depth(at_least.saturating_sub(2)));
                bounds.no_loss_within_plus_one = deepest + 1;
            }
            (Some(false), Some((at_least, at_most))) => {
                bounds.loss_within = bounds.loss_within.min(upper(at_most));
                // No loss within at_least − 2 (or none at all known for a loss in 0).
                bounds.no_loss_within_plus_one = bounds.no_loss_within_plus_one.max(depth(at_least.saturating_sub(1)));
                bounds.no_win_within = deepest;
            }
            _ => match outcome {
                crate::Outcome::Unknown { no_result_within } => {
                    let d = depth(no_result_within);
                    bounds.no_win_within = bounds.no_win_within.max(d);
                    bounds.no_loss_within_plus_one = bounds.no_loss_within_plus_one.max(d + 1);
                }
                // A draw (a table's, or one a search proved): neither side wins, at any depth.
                _ => {
                    bounds.no_win_within = deepest;
                    bounds.no_loss_within_plus_one = deepest + 1;
                }
            },
        }
        self.put(key, bounds);
    }
}

/// A well-spread 32-bit hash of a position key and a salt (the depth, for tables keyed by
/// both): the key's low bits alone are the side to move and the hands, far from uniform.
pub(crate) fn mix(key: u128, salt: u32) -> u64 {
    let folded = (key as u64) ^ ((key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(salt) << 57;
    let mixed = (folded ^ (folded >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    mixed >> 32
}

/// The key of a position (see [`Position::key`]).
#[inline]
pub(crate) fn key_of(position: &Position) -> u128 {
    position.key()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_within_its_size_and_remembers() {
        let mut table = TranspositionTable::with_bytes(1 << 20);
        assert!(table.bytes() <= 1 << 20 && table.bytes() > 1 << 19, "{}", table.bytes());
        let key = key_of(&Position::start());
        assert_eq!(table.get(key), Bounds::NOTHING);
        let known = Bounds { no_win_within: 5, ..Bounds::NOTHING };
        table.put(key, known);
        assert_eq!(table.get(key), known);
        // Another board: nothing known.
        assert_eq!(table.get(key ^ 1 << 100), Bounds::NOTHING);
        // The same board with a piece more in the opponent's hand: no stronger for the mover,
        // so no win within 5 holds there too, but not the other way round.
        let weaker = key + (1 << 1);
        assert_eq!(table.get(weaker), Bounds { no_win_within: 5, hint: 0, ..Bounds::NOTHING });
        let win = Bounds { win_within: 7, ..Bounds::NOTHING };
        table.put(weaker, win);
        assert_eq!(table.get(key), Bounds { win_within: 7, ..known });
        assert_eq!(table.get(weaker).win_within, 7);
        table.clear();
        assert_eq!(table.get(key), Bounds::NOTHING);
    }
}
