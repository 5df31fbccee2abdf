//! The proof search proper: two depth-bounded questions answered by AND/OR search, and the
//! iterative deepening that turns them into an exact distance to win.
//!
//! Each question is answered by df-pn (`dfpn.rs`) at the root's iterations; the plain
//! depth-first versions here serve the line of best play and are the simple reference. The
//! value questions, at any distance, are `value.rs`'s; `establish` asks both kinds.
//!
//! `wins_within(P, d)`: some move captures the royal (d ≥ 1), or leads to a position that
//! loses within `d − 1`. `loses_within(P, d)`: `P` has no legal move, or every move leads to a
//! position that wins within `d − 1`. Both are monotone in `d` and depend on the position
//! alone, which is what lets the transposition table keep their answers as bounds. Asking
//! them for `d = 1, 2, 3, …` in turn, the first "yes" comes exactly at the distance to win:
//! every shallower question was answered "no".

use std::time::Instant;

use arrayvec::ArrayVec;
use shogi4_engine::{Move, Position, MAX_MOVES};

use crate::children::{DepthChild, ValueChild};
use crate::limits::Cancel;
use crate::numbers::NumberTable;
use crate::table::{key_of, Bounds, Depth, TranspositionTable, MAX_DEPTH, UNKNOWN};

/// How often (in nodes) the clock is read.
const CLOCK_INTERVAL: u64 = 1 << 12;

/// The budget ran out before a question was answered; nothing half-done is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Aborted;

/// Answers depth-bounded questions within a node and time budget, over a table it borrows.
pub(crate) struct Prover<'t> {
    pub(crate) table: &'t mut TranspositionTable,
    /// Proof and disproof numbers of unresolved nodes (df-pn).
    pub numbers: &'t mut NumberTable,
    /// Nodes (positions) examined so far: every position expanded or generated as a child
    /// and looked up.
    pub nodes: u64,
    pub(crate) max_nodes: u64,
    pub(crate) deadline: Option<Instant>,
    /// Read with the clock: once set, the search ends as if its budget had run out.
    cancel: Option<Cancel>,
    /// The node count at which the clock is next read.
    next_clock: u64,
    /// Children vectors of finished expansions, for the next ones to fill: about one per
    /// level of the deepest path so far, instead of an allocation per expansion (2–9% of a
    /// search's time).
    pub(crate) spare_depth_children: Vec<Vec<DepthChild>>,
    pub(crate) spare_value_children: Vec<Vec<ValueChild>>,
    /// Whether a value search met its path's horizon since [`Prover::prove_either`] began: a
    /// refutation may then rest on the horizon, which proves nothing.
    pub(crate) met_horizon: bool,
}

impl<'t> Prover<'t> {
    pub fn new(
        table: &'t mut TranspositionTable,
        numbers: &'t mut NumberTable,
        max_nodes: u64,
        deadline: Option<Instant>,
        cancel: Option<Cancel>,
    ) -> Prover<'t> {
        Prover {
            table,
            numbers,
            nodes: 0,
            max_nodes,
            deadline,
            cancel,
            next_clock: CLOCK_INTERVAL,
            spare_depth_children: Vec::new(),
            spare_value_children: Vec::new(),
            met_horizon: false,
        }
    }

    /// Sets a new budget (nodes counted from now on, and a deadline).
    pub fn budget(&mut self, max_nodes: u64, deadline: Option<Instant>) {
        self.max_nodes = self.nodes.saturating_add(max_nodes);
        self.deadline = deadline;
    }

    pub(crate) fn tick(&mut self) -> Result<(), Aborted> {
        self.nodes += 1;
        if self.nodes > self.max_nodes {
            return Err(Aborted);
        }
        // Nodes grow by more than one at a time (children count too): read the clock once the
        // count passes the next mark, not on exact multiples.
        if self.nodes >= self.next_clock {
            self.next_clock = self.nodes + CLOCK_INTERVAL;
            let cancelled = self.cancel.as_ref().is_some_and(Cancel::is_cancelled);
            if cancelled || self.deadline.is_some_and(|d| Instant::now() >= d) {
                // Stay aborted: the node count is pinned past the limit.
                self.max_nodes = self.nodes - 1;
                return Err(Aborted);
            }
        }
        Ok(())
    }

    pub(crate) fn record(&mut self, key: u128, update: impl FnOnce(&mut Bounds)) {
        // Read again: the subtree may have stored facts about this very position (a cycle).
        let mut bounds = self.table.get(key);
        update(&mut bounds);
        self.table.put(key, bounds);
    }

    /// "Win within `d`" when the rules or the table settle it without search.
    pub(crate) fn win_known(&mut self, position: &Position, key: u128, d: u32) -> Option<bool> {
        if position.can_capture_royal() {
            return Some(true);
        }
        self.win_known_without_capture(key, d)
    }

    /// [`Prover::win_known`] of a position whose side to move cannot take the royal (a safe
    /// move's position: the move kept the royal safe), which the test of that would only find
    /// again.
    pub(crate) fn win_known_without_capture(&mut self, key: u128, d: u32) -> Option<bool> {
        let d = if d.is_multiple_of(2) { d.saturating_sub(1) } else { d };
        if d < 3 {
            return Some(false);
        }
        let known = self.table.get(key);
        if u32::from(known.win_within) <= d {
            return Some(true);
        }
        // A proven loss, at any distance, excludes every win: played against each other, the
        // two forcing strategies would each end the game first.
        if u32::from(known.no_win_within) >= d || known.loss_within != UNKNOWN {
            return Some(false);
        }
        None
    }

    /// "Loss within `d`" when the rules or the table settle it without search (within 0: no
    /// legal move; within 2: no move that keeps the royal safe).
    pub(crate) fn loss_known(&mut self, position: &Position, key: u128, d: u32) -> Option<bool> {
        if position.can_capture_royal() {
            return Some(false);
        }
        self.loss_known_without_capture(position, key, d)
    }

    /// [`Prover::loss_known`] of a position whose side to move cannot take the royal (see
    /// [`Prover::win_known_without_capture`]).
    pub(crate) fn loss_known_without_capture(&mut self, position: &Position, key: u128, d: u32) -> Option<bool> {
        let d = if d % 2 == 1 { d - 1 } else { d };
        if d < 4 {
            return Some(if d == 2 { !position.has_safe_move() } else { position.has_no_legal_move() });
        }
        let known = self.table.get(key);
        if u32::from(known.loss_within) <= d {
            return Some(true);
        }
        // A proven win excludes every loss (see `win_known`).
        if u32::from(known.no_loss_within_plus_one) > d || known.win_within != UNKNOWN {
            return Some(false);
        }
        // A position without a legal move is left to the caller, which counts or lists the
        // moves anyway (and finds none: a loss in 0).
        None
    }

    /// Whether the side to move can force the royal capture within `d` plies.
    pub fn wins_within(&mut self, position: &Position, d: u32) -> Result<bool, Aborted> {
        let key = key_of(position);
        if let Some(answer) = self.win_known(position, key, d) {
            return Ok(answer);
        }
        // Wins have odd distances; past `win_known`, `d` is at least 3.
        let d = if d.is_multiple_of(2) { d - 1 } else { d };
        let known = self.table.get(key);
        self.tick()?;
        let moves = position.legal_moves();
        // Candidates: moves that do not hand the opponent a royal capture, best guesses first:
        // the last winning move, then moves that threaten the royal, then captures.
        let mut candidates: ArrayVec<(u32, u8, Position), MAX_MOVES> = ArrayVec::new();
        let exposes = position.exposure_test();
        for (i, &mv) in moves.iter().enumerate() {
            if exposes(mv) {
                continue;
            }
            let child = position.play_unchecked(mv);
            let score = u32::from(i == usize::from(known.hint)) * 4
                + u32::from(child.threatens_royal()) * 2
                + u32::from(position.is_capture(mv));
            candidates.push((score, i as u8, child));
        }
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        for (_, i, child) in &candidates {
            if self.loses_within(child, d - 1)? {
                self.record(key, |b| {
                    b.win_within = b.win_within.min(d as Depth);
                    b.hint = *i;
                });
                return Ok(true);
            }
        }
        self.record(key, |b| b.no_win_within = b.no_win_within.max(d as Depth));
        Ok(false)
    }

    /// Whether the opponent can force the capture of the side to move's royal within `d`
    /// plies (or the side to move has no legal move).
    pub fn loses_within(&mut self, position: &Position, d: u32) -> Result<bool, Aborted> {
        let key = key_of(position);
        if let Some(answer) = self.loss_known(position, key, d) {
            return Ok(answer);
        }
        // Losses have even distances; past `loss_known`, `d` is at least 4.
        let d = if d % 2 == 1 { d - 1 } else { d };
        let moves = position.legal_moves();
        let exposing = position.exposure_test();
        let known = self.table.get(key);
        self.tick()?;
        // Moves that expose the royal lose in 2 whatever happens; the others must each be
        // answered by a win within d − 1. Try the defence that held last time first.
        let mut defences: ArrayVec<(u32, u8, Move), MAX_MOVES> = ArrayVec::new();
        for (i, &mv) in moves.iter().enumerate() {
            if !exposing(mv) {
                let score = u32::from(i == usize::from(known.hint)) * 2 + u32::from(position.is_capture(mv));
                defences.push((score, i as u8, mv));
            }
        }
        defences.sort_by_key(|c| std::cmp::Reverse(c.0));
        for &(_, i, mv) in &defences {
            if !self.wins_within(&position.play_unchecked(mv), d - 1)? {
                self.record(key, |b| {
                    b.no_loss_within_plus_one = b.no_loss_within_plus_one.max(d as Depth + 1);
                    b.hint = i;
                });
                return Ok(false);
            }
        }
        self.record(key, |b| b.loss_within = b.loss_within.min(d as Depth));
        Ok(true)
    }

    /// The smallest `d` for which "win within `d`" is known without search (the rules or
    /// the table).
    pub(crate) fn proven_win_within(&self, position: &Position) -> Option<u32> {
        if position.can_capture_royal() {
            return Some(1);
        }
        let known = self.table.get(key_of(position)).win_within;
        (known != UNKNOWN).then_some(u32::from(known))
    }

    /// The smallest `d` for which "loss within `d`" is known without search.
    pub(crate) fn proven_loss_within(&self, position: &Position) -> Option<u32> {
        if position.can_capture_royal() {
            return None;
        }
        if !position.has_safe_move() {
            return Some(if position.has_no_legal_move() { 0 } else { 2 });
        }
        let known = self.table.get(key_of(position)).loss_within;
        (known != UNKNOWN).then_some(u32::from(known))
    }
}

// Every depth a search asks about is below the table's "not established" marker.
const _: () = assert!(UNKNOWN as u32 > MAX_DEPTH);
