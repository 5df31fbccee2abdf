//! A player's hand ("farm"): how many of each non-royal kind it holds.

use crate::Kind;

/// Counts of captured pieces by kind, in material order C, F, R, T.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hand(pub [u8; 4]);

impl Hand {
    /// An empty hand.
    pub const EMPTY: Hand = Hand([0; 4]);

    /// How many pieces of `kind` the hand holds (0 for the royal, which is never in hand).
    #[inline]
    pub fn count(self, kind: Kind) -> u8 {
        kind.hand_index().map_or(0, |i| self.0[i])
    }

    /// Adds one piece of a non-royal `kind`.
    #[inline]
    pub fn add(&mut self, kind: Kind) {
        if let Some(i) = kind.hand_index() {
            self.0[i] += 1;
        }
    }

    /// Removes one piece of a non-royal `kind`.
    #[inline]
    pub fn remove(&mut self, kind: Kind) {
        if let Some(i) = kind.hand_index() {
            self.0[i] -= 1;
        }
    }

    /// Whether the hand holds nothing.
    pub fn is_empty(self) -> bool {
        self.0 == [0; 4]
    }

    /// Total number of pieces held.
    pub fn total(self) -> u32 {
        self.0.iter().map(|&c| u32::from(c)).sum()
    }
}
