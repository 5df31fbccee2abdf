//! The dataflow's timestamp: the level of the solve, then the round, ordered
//! lexicographically. The level only grows and rounds are counted over the whole solve, so a
//! worker's time only moves forward; an update carries its level in the time it was sent at,
//! and one that arrives early (its sender already in the next level) is still applied as its
//! own level's. Timely's own `(A, B)` and `Product` cannot be a top-level dataflow's time (they
//! do not refine `()`), hence this type.

use serde::{Deserialize, Serialize};
use timely::order::{PartialOrder, TotalOrder};
use timely::progress::timestamp::{PathSummary, Refines};
use timely::progress::Timestamp;

/// A level and a round; the derived order compares the level first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct Time {
    /// The level whose updates are sent at this time.
    pub level: u32,
    /// Rounds since the solve began.
    pub round: u64,
}

impl PartialOrder for Time {
    fn less_equal(&self, other: &Time) -> bool {
        self <= other
    }
}

impl TotalOrder for Time {}

impl Timestamp for Time {
    type Summary = Advance;

    fn minimum() -> Time {
        Time::default()
    }
}

impl Refines<()> for Time {
    fn to_inner(_: ()) -> Time {
        Time::default()
    }

    fn to_outer(self) {}

    fn summarize(_: Advance) {}
}

/// How far a time moves along a dataflow edge. The dataflow has no loops, so every edge's is
/// the default: no move at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Advance {
    levels: u32,
    rounds: u64,
}

impl PartialOrder for Advance {
    fn less_equal(&self, other: &Advance) -> bool {
        self <= other
    }
}

impl PathSummary<Time> for Advance {
    fn results_in(&self, time: &Time) -> Option<Time> {
        Some(Time { level: time.level.checked_add(self.levels)?, round: time.round.checked_add(self.rounds)? })
    }

    fn followed_by(&self, other: &Advance) -> Option<Advance> {
        Some(Advance { levels: self.levels.checked_add(other.levels)?, rounds: self.rounds.checked_add(other.rounds)? })
    }
}
