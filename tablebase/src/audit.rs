//! The audit: an independent check that a table is the solution of its closed game.
//!
//! Every slot's value is recomputed from the stored values of its children, one ply deep
//! (children that can capture the royal are wins in 1 by the rules), and must equal the
//! stored value: a win in `n` has a move to a loss in `n − 1` and none to
//! a shorter loss (a win in 1 is exactly a royal capture); a loss in `n` has only moves to
//! wins, the longest a win in `n − 1` (a loss in 0 has no legal move); a draw has no royal
//! capture and no move to a loss, and a move to a draw. Together with the checksum this
//! proves the table consistent everywhere, distances included.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

use arrayvec::ArrayVec;
use rayon::prelude::*;
use shogi4_engine::{Position, MAX_MOVES};

use crate::format::CorruptValue;
use crate::progress::Progress;
use crate::table::Table;
use crate::value::Value;

/// How many offending slots an audit reports in full.
pub const REPORTED_VIOLATIONS: usize = 10;

/// A slot whose stored value disagrees with its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The slot.
    pub slot: u64,
    /// Its canonical position.
    pub position: Position,
    /// The value in the table, or why its byte cannot be decoded.
    pub stored: Result<Value, CorruptValue>,
    /// The value its children's stored values imply, or the child whose byte cannot be
    /// decoded.
    pub implied: Result<Value, CorruptValue>,
}

/// The outcome of an audit.
#[derive(Clone, Debug)]
pub struct AuditReport {
    /// Slots checked.
    pub slots: u64,
    /// Slots whose value disagrees with their children.
    pub violations: u64,
    /// The first offending slots, by slot number.
    pub first: Vec<Violation>,
    /// Moves looked at.
    pub edges: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The value a position must have, given the stored values of its children, and how many
/// moves that took.
///
/// A child whose side to move can capture the royal is a win in 1 by the rules, so its value
/// is taken from the rules rather than read: the child's own stored value is checked when its
/// slot is audited, so every stored value is still checked exactly once against the rules and
/// its children.
pub fn implied_value<B: AsRef<[u8]>>(table: &Table<B>, position: &Position) -> (Result<Value, CorruptValue>, u64) {
    if position.can_capture_royal() {
        return (Ok(Value::Win(1)), 0);
    }
    let moves = position.legal_moves();
    // The other children's slots first, their bytes prefetched, so the table reads overlap.
    let index = table.index().children_of(position);
    let mut children = ArrayVec::<u64, MAX_MOVES>::new();
    let mut best = None;
    for &mv in moves.iter() {
        if position.exposes_royal(mv) {
            best = best.max(Some(Value::Win(1).for_mover()));
        } else {
            let slot = index.index_after(mv);
            table.prefetch(slot);
            children.push(slot);
        }
    }
    // Each child read here does not leave the royal en prise, so the table (not the rules)
    // holds its value, compressed or not.
    let implied =
        children.iter().try_fold(best, |best, &slot| Ok(best.max(Some(table.stored_value(slot)?.for_mover()))));
    (implied.map(|best| best.unwrap_or(Value::Loss(0))), moves.len() as u64)
}

/// Checks every slot of `table` against its children, in parallel.
///
/// A compressed table is decoded whole first (in parallel, block by block) and its plain form
/// audited: each slot's children lie in other blocks, and decoding a block per read would
/// cost many times the audit itself. A table that cannot be decoded is reported as one
/// violation at the first damaged slot.
pub fn audit<B: AsRef<[u8]> + Sync>(table: &Table<B>, progress: &dyn Progress) -> AuditReport {
    const CHUNK: u64 = 1 << 14;
    let started = Instant::now();
    if table.is_compressed() {
        progress.phase(&format!("decompress {}", table.header().material), 1);
        let plain = table.to_plain().and_then(Table::new);
        progress.finish_phase();
        match plain {
            Ok(plain) => {
                let mut report = audit(&plain, progress);
                report.seconds = started.elapsed().as_secs_f64();
                return report;
            }
            Err(_) => {
                let slot = (0..table.header().slots).find(|&s| table.value(s).is_err()).unwrap_or(0);
                let position = table.index().position_at(slot);
                let (implied, _) = implied_value(table, &position);
                let violation = Violation { slot, position, stored: table.value(slot), implied };
                return AuditReport {
                    slots: table.header().slots,
                    violations: 1,
                    first: vec![violation],
                    edges: 0,
                    seconds: started.elapsed().as_secs_f64(),
                };
            }
        }
    }
    let slots = table.header().slots;
    let index = table.index();
    let violations = AtomicU64::new(0);
    let edges = AtomicU64::new(0);
    let first = Mutex::new(Vec::new());
    progress.phase(&format!("audit {}", table.header().material), slots);
    (0..slots.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
        let range = c * CHUNK..((c + 1) * CHUNK).min(slots);
        let (mut bad, mut chunk_edges) = (Vec::new(), 0);
        let mut count = 0;
        index.for_each_position(range.clone(), |slot, position| {
            let stored = table.value_at(slot, position);
            let (implied, n) = implied_value(table, position);
            chunk_edges += n;
            if stored != implied {
                count += 1;
                if bad.len() < REPORTED_VIOLATIONS {
                    bad.push(Violation { slot, position: *position, stored, implied });
                }
            }
        });
        violations.fetch_add(count, Relaxed);
        edges.fetch_add(chunk_edges, Relaxed);
        if !bad.is_empty() {
            first.lock().expect("not poisoned").extend(bad);
        }
        progress.advance(range.end - range.start);
    });
    progress.finish_phase();
    let mut first = first.into_inner().expect("not poisoned");
    first.sort_by_key(|v| v.slot);
    first.truncate(REPORTED_VIOLATIONS);
    AuditReport {
        slots,
        violations: violations.into_inner(),
        first,
        edges: edges.into_inner(),
        seconds: started.elapsed().as_secs_f64(),
    }
}
