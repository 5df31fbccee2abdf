//! The two players and per-player data.

use std::ops::{Index, IndexMut, Not};

/// A player. The first player moves first and owns the tiles pointing up the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Color {
    /// Moves first ("sente", SFEN side `b`, Fairy-Stockfish side `w`); forward is toward rank 4.
    First = 0,
    /// Moves second ("gote", SFEN side `w`, Fairy-Stockfish side `b`); forward is toward rank 1.
    Second = 1,
}

impl Color {
    /// Both colours, first player first.
    pub const BOTH: [Color; 2] = [Color::First, Color::Second];

    /// 0 for the first player, 1 for the second.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        match self {
            Color::First => Color::Second,
            Color::Second => Color::First,
        }
    }
}

/// One value per colour, indexed by [`Color`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByColor<T> {
    /// The first player's value.
    pub first: T,
    /// The second player's value.
    pub second: T,
}

impl<T> ByColor<T> {
    /// Swaps the two values (used by the colour flip).
    pub fn swapped(self) -> ByColor<T> {
        ByColor { first: self.second, second: self.first }
    }

    /// Applies `f` to both values.
    pub fn map_ref<U>(&self, mut f: impl FnMut(&T) -> U) -> ByColor<U> {
        ByColor { first: f(&self.first), second: f(&self.second) }
    }
}

impl<T> Index<Color> for ByColor<T> {
    type Output = T;
    #[inline]
    fn index(&self, color: Color) -> &T {
        match color {
            Color::First => &self.first,
            Color::Second => &self.second,
        }
    }
}

impl<T> IndexMut<Color> for ByColor<T> {
    #[inline]
    fn index_mut(&mut self, color: Color) -> &mut T {
        match color {
            Color::First => &mut self.first,
            Color::Second => &mut self.second,
        }
    }
}
