//! The children of an expanded node, one type per question's search: the prover keeps the
//! vectors of finished expansions for the next ones to fill, so it holds both types, and
//! neither search's module needs the other's.

use shogi4_engine::{Move, Position};

/// A child of an expanded node: its position and key, and its answer when known without
/// expanding it.
pub(crate) struct DepthChild {
    /// The move that leads to it.
    pub(crate) mv: Move,
    pub(crate) position: Position,
    pub(crate) key: u128,
    pub(crate) known: Option<bool>,
    /// Numbers before any expansion, from its mobility and depth (see `initial_numbers`).
    pub(crate) initial: (u32, u32),
}

/// A child of an expanded node.
pub(crate) struct ValueChild {
    /// The move that leads to it.
    pub(crate) mv: Move,
    pub(crate) position: Position,
    pub(crate) key: u128,
    pub(crate) known: Option<Known>,
    /// Its numbers when it was last expanded from here, else those it started with.
    pub(crate) numbers: (u32, u32),
}

/// What is known of a node without expanding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Known {
    /// Proven, within this many plies.
    Proven(u32),
    /// Refuted whatever the path (the opposite result holds).
    Refuted,
    /// Refuted on this path only: a repetition, the horizon, or a refutation built on one.
    RefutedHere,
}
