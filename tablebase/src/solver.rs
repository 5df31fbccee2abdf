//! Retrograde analysis: every slot of a closed game gets its value and exact distance to win.
//!
//! Memory: 1.25 bytes per slot, plus the overflow list for distances above 253. Each slot
//! has one **state byte** and two **marks**, a decided bit and a frontier bit: a decided slot's
//! byte is its value code (the byte the table will hold), an undecided slot's byte counts its
//! undecided moves (a position has fewer than 256 moves). The frontier bit marks a slot that
//! a level decided and the next has yet to walk. At the end the undecided slots' bytes become 0
//! (draw), and the state bytes are the table.
//!
//! 1. **Init**: a slot whose side to move can capture the royal is a win in 1. Otherwise it
//!    generates its moves: none makes it a loss in 0; each move into a win in 1 for the
//!    opponent (checked forward, cheaply) is settled at once, and the counter holds the rest;
//!    if none is left it is a loss in 2. Level 1 then has nothing to do, which saves walking the
//!    predecessors of most slots (56% of `KKCFRT` are wins in 1).
//! 2. **Levels**: for `n = 0, 1, 2, …` the slots decided at distance `n` are walked, and each
//!    predecessor (un-move, indexed from the slot's own view: `parents_of`) is updated, except
//!    the wins in 1, which init decided and the un-move shows without indexing (a piece of the
//!    predecessor's mover attacks the other royal). If the slot is a loss in `n`,
//!    an undecided predecessor becomes a win in `n + 1` (the first level that reaches it is the
//!    shortest win). If it is a win in `n`, the predecessor's counter drops by one; at zero all
//!    its moves lead to wins for the opponent, the last of them at `n`, so it is a loss in
//!    `n + 1` (the longest resistance).
//! 3. What stays undecided is a draw.
//!
//! A level only ever writes distance `n + 1` and, by parity, only wins or only losses, so the
//! result does not depend on the order in which threads visit slots: tables are
//! byte-identical for any thread count. Distinct moves of a position always lead to distinct
//! slots (a move never changes the other royal's square, so two children are never mirror
//! images), which makes "one un-move = one counted move" exact under the folding.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use std::sync::Mutex;
use std::time::Instant;

use arrayvec::ArrayVec;
use rayon::prelude::*;
use shogi4_engine::{Material, MaterialIndex, Position};

use crate::checkpoint::{self, CheckpointError, Checkpoints};
use crate::format::{SolvedTable, Statistics};
use crate::memory::{advise_huge_pages, prefetch};
use crate::progress::Progress;
use crate::value::{Value, MAX_INLINE_DTW, OVERFLOW_CODE};

/// Slots handled per parallel task.
const CHUNK: u64 = 1 << 14;
// A level's scan walks a chunk's decided bits a word at a time.
const _: () = assert!(CHUNK.is_multiple_of(64));

/// More un-moves than any position has: at most 9 pieces × 8 directions × 2 prior promotion
/// states as sources, each with or without one of 8 kinds of captured piece, plus drops.
const MAX_UNMOVES: usize = 2048;

/// A solved table with the figures of the run that produced it.
#[derive(Debug)]
pub struct Solution {
    /// The table.
    pub table: SolvedTable,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Moves generated in init plus un-moves generated in the levels.
    pub edges: u64,
}

impl Solution {
    /// Wall-clock nanoseconds per edge.
    pub fn ns_per_edge(&self) -> f64 {
        self.seconds * 1e9 / self.edges.max(1) as f64
    }
}

/// What init learns of a slot from its own moves, before any level runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstLook {
    /// Settled alone: a win in 1 (the royal can be captured), a loss in 0 (no move) or a loss
    /// in 2 (every move lets the opponent capture the royal).
    Settled(Value),
    /// Undecided, with this many open moves: those not into a win in 1 for the opponent
    /// (fewer than 256), which the levels count down.
    Open(u8),
}

impl FirstLook {
    /// The first look at `position`, and how many legal moves it has (the edges it accounts
    /// for; they are counted, not listed).
    pub fn of(position: &Position) -> (FirstLook, u64) {
        if position.can_capture_royal() {
            return (FirstLook::Settled(Value::Win(1)), 0);
        }
        // Moves into a win in 1 for the opponent are settled here, forward and cheaply, so
        // level 1 (most of all slots) never walks its predecessors.
        let counts = position.move_counts();
        let look = match (counts.legal, counts.safe) {
            (0, _) => FirstLook::Settled(Value::Loss(0)),
            (_, 0) => FirstLook::Settled(Value::Loss(2)),
            (_, open) => FirstLook::Open(open as u8),
        };
        (look, counts.legal as u64)
    }
}

/// The level rule both solvers apply (this one and the distributed one): what an update of
/// level `n` does to an undecided predecessor, and the byte a decided slot gets.
pub mod level_rule {
    use crate::value::{Value, OVERFLOW_CODE};

    /// Whether an update of level `n` decides its undecided predecessor. Level `n` holds
    /// losses when `n` is even, so every predecessor wins; and wins when `n` is odd, so a
    /// predecessor loses once its last open move is accounted for. `count_down` takes one
    /// open move off the predecessor's counter and returns the counter as it was: it is only
    /// called at odd levels, and a counter reaches zero exactly once, on its last open move,
    /// so no decrement ever lands on a byte that already holds a value.
    #[inline]
    pub fn decides(n: u32, count_down: impl FnOnce() -> u8) -> bool {
        n.is_multiple_of(2) || count_down() == 1
    }

    /// The byte of a slot decided at distance `dtw`: its value's code, or [`OVERFLOW_CODE`]
    /// past `max_inline` (the distance then goes to the overflow list).
    #[inline]
    pub fn code_for(dtw: u32, max_inline: u32) -> u8 {
        if dtw <= max_inline {
            Value::from_dtw(dtw).encode()
        } else {
            OVERFLOW_CODE
        }
    }
}

/// Slots per word of marks: each has a decided bit (even) and a frontier bit (odd) beside it,
/// so that deciding a slot sets both in one atomic operation on one cache line.
const SLOTS_PER_MARK_WORD: u64 = 32;
// Chunks start on a word of marks.
const _: () = assert!(CHUNK.is_multiple_of(SLOTS_PER_MARK_WORD));
/// The decided bits of a word of marks.
const DECIDED_MARKS: u64 = 0x5555_5555_5555_5555;

/// The word of marks that holds `slot`'s.
#[inline]
fn mark_word(slot: u64) -> usize {
    (slot / SLOTS_PER_MARK_WORD) as usize
}

/// `slot`'s decided bit in its word of marks; its frontier bit is the next one up.
#[inline]
fn decided_mark(slot: u64) -> u64 {
    1 << (2 * (slot % SLOTS_PER_MARK_WORD))
}

/// Words of marks for `slots` slots.
pub(crate) fn mark_words(slots: u64) -> usize {
    slots.div_ceil(SLOTS_PER_MARK_WORD) as usize
}

/// Views words as atomics for the parallel passes.
fn as_atomic_words(words: &mut [u64]) -> &[AtomicU64] {
    // SAFETY: `AtomicU64` has the same size and bit validity as `u64` and, on every target
    // with 64-bit atomics, the same alignment; the exclusive borrow guarantees no non-atomic
    // access for the lifetime of the view.
    unsafe { &*(words as *mut [u64] as *const [AtomicU64]) }
}

/// Views a byte buffer as atomics for the parallel passes.
fn as_atomic(bytes: &mut [u8]) -> &[AtomicU8] {
    // SAFETY: `AtomicU8` has the same size, alignment and bit validity as `u8`, and the
    // exclusive borrow guarantees no non-atomic access for the lifetime of the view.
    unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) }
}

/// Solves one closed game on the current rayon thread pool.
pub fn solve(material: Material, progress: &dyn Progress) -> Solution {
    solve_resumable(material, progress, None).expect("without checkpoints a solve does no I/O")
}

/// Solves one closed game like [`solve`], and with `checkpoints` also resumes from the
/// checkpoint there (if any) and writes one after a level whenever `checkpoints.every` has
/// passed since the last. The table is the same, byte for byte, however often it stopped.
pub fn solve_resumable(
    material: Material,
    progress: &dyn Progress,
    checkpoints: Option<&Checkpoints>,
) -> Result<Solution, CheckpointError> {
    solve_with_inline_limit(material, progress, checkpoints, MAX_INLINE_DTW)
}

/// [`solve_resumable`] with distances above `max_inline` (instead of [`MAX_INLINE_DTW`]) kept
/// in the overflow list: how the tests drive small games through the path that distances of
/// 254 plies and more take in large ones. Such a table decodes to the same values but is not
/// a valid file (its overflow entries are too short).
#[doc(hidden)]
pub fn solve_with_inline_limit(
    material: Material,
    progress: &dyn Progress,
    checkpoints: Option<&Checkpoints>,
    max_inline: u32,
) -> Result<Solution, CheckpointError> {
    assert!((2..=MAX_INLINE_DTW).contains(&max_inline), "init writes distances up to 2 inline");
    let started = Instant::now();
    let index = MaterialIndex::new(material);
    let slots = index.slots();
    let mut state_bytes = vec![0u8; slots as usize];
    let mut mark_words = vec![0u64; mark_words(slots)];
    advise_huge_pages(&mut state_bytes);
    advise_huge_pages(&mut mark_words);
    let restored = match checkpoints {
        Some(c) => checkpoint::read(&c.path, &index, &mut state_bytes, &mut mark_words)?,
        None => None,
    };
    let state = as_atomic(&mut state_bytes);
    let marks = as_atomic_words(&mut mark_words);
    // Acquire pairs with the Release in `set_decided`: a set bit shows the value stored before it.
    let is_decided = |slot: u64| marks[mark_word(slot)].load(Acquire) & decided_mark(slot) != 0;
    let edges = AtomicU64::new(0);
    let chunks = slots.div_ceil(CHUNK);
    let chunk_range = |c: u64| c * CHUNK..((c + 1) * CHUNK).min(slots);
    let wins_in_one = AtomicU64::new(0);
    // Distances above `max_inline`: the byte says OVERFLOW_CODE, the list has the distance.
    let overflow = Mutex::new(Vec::<(u64, u32)>::new());

    let first_level = match restored {
        None => {
            progress.phase(&format!("{material}: moves"), slots);
            (0..chunks).into_par_iter().for_each(|c| {
                let (mut chunk_edges, mut chunk_wins) = (0, 0);
                // Chunks start on a word and no other thread writes this chunk's words during
                // init: gather each word's decided bits and store it once (no frontier yet).
                let mut word = 0u64;
                index.for_each_position(chunk_range(c), |slot, position| {
                    let (look, moves) = FirstLook::of(position);
                    chunk_edges += moves;
                    match look {
                        FirstLook::Settled(value) => {
                            chunk_wins += u64::from(value == Value::Win(1));
                            state[slot as usize].store(value.encode(), Relaxed);
                            word |= decided_mark(slot);
                        }
                        // An undecided slot's byte is its counter.
                        FirstLook::Open(open) => state[slot as usize].store(open, Relaxed),
                    }
                    if slot % SLOTS_PER_MARK_WORD == SLOTS_PER_MARK_WORD - 1 || slot + 1 == chunk_range(c).end {
                        marks[mark_word(slot)].store(word, Relaxed);
                        word = 0;
                    }
                });
                edges.fetch_add(chunk_edges, Relaxed);
                wins_in_one.fetch_add(chunk_wins, Relaxed);
                progress.advance(chunk_range(c).end - chunk_range(c).start);
            });
            progress.finish_phase();
            0
        }
        Some(restored) => {
            *overflow.lock().expect("not poisoned") = restored.overflow;
            restored.level + 1
        }
    };

    // The frontier bits: set when a level decides a slot (inline distances from 3 on), cleared
    // once the next level has walked it. A level then finds its slots in the frontier's few set
    // bits instead of testing the code of every decided slot (late levels decide a few slots
    // among billions), and skips the chunks that, by the parity of the distance written, hold
    // none. A checkpoint keeps the frontier, but not which chunks hold it: after a resume, its
    // first level visits every chunk.
    let has_frontier: [Vec<AtomicBool>; 2] = std::array::from_fn(|parity| {
        (0..chunks).map(|_| AtomicBool::new(parity == first_level as usize % 2 && first_level > 0)).collect()
    });
    // Decides an undecided slot; several threads may reach the same slot in one level (wins),
    // and all of them write the same value, but only the first to set its bit counts it.
    // The value is stored before the bit is set: a slot whose bit is set must never show its
    // old counter, which a concurrent scan of this level could mistake for the level's code.
    // (At a loss level only the decrement that reached zero gets here, and no decrement can
    // follow it.)
    let set_decided = |slot: u64, dtw: u32| {
        let code = level_rule::code_for(dtw, max_inline);
        state[slot as usize].store(code, Relaxed);
        let decided = decided_mark(slot);
        let on_frontier = code != OVERFLOW_CODE && dtw >= 3;
        // Both bits at once: a scan that sees the frontier bit sees the code (Release). A
        // second thread deciding the same slot in the same level sets the same bits.
        let set = if on_frontier { decided | decided << 1 } else { decided };
        let first = marks[mark_word(slot)].fetch_or(set, Release) & decided == 0;
        if first {
            if code == OVERFLOW_CODE {
                overflow.lock().expect("no panics while held").push((slot, dtw));
            } else if on_frontier {
                // A plain load first: most slots land in chunks already marked, and a store to
                // a shared flag on every one would bounce its cache line between the cores.
                let marked = &has_frontier[dtw as usize % 2][(slot / CHUNK) as usize];
                if !marked.load(Relaxed) {
                    marked.store(true, Relaxed);
                }
            }
        }
    };
    let retro = |position: Position, n: u32| -> u64 {
        // Each predecessor is indexed from one shared view of the position and the un-move,
        // never built. Gather their slots and prefetch their bytes first, so that the cache
        // misses of the updates below overlap instead of following one another.
        let parents = index.parents_of(&position);
        let mut predecessors = ArrayVec::<u64, MAX_UNMOVES>::new();
        let mut edges = 0;
        position.unmoves(|unmove| {
            edges += 1;
            // A predecessor that can capture the royal is a win in 1, decided by init: skip it
            // without indexing it or touching its bytes (about 40% of all un-moves).
            if position.before_can_capture_royal(&unmove) {
                return;
            }
            let p = parents.index_before(&unmove);
            prefetch(&marks[mark_word(p)]);
            if !n.is_multiple_of(2) {
                prefetch(&state[p as usize]);
            }
            predecessors.push(p);
        });
        for &p in &predecessors {
            if is_decided(p) {
                continue;
            }
            if level_rule::decides(n, || state[p as usize].fetch_sub(1, Relaxed)) {
                set_decided(p, n + 1);
            }
        }
        edges
    };

    progress.phase(&format!("{material}: levels"), slots);
    if first_level > 0 {
        progress.advance(marks.par_iter().map(|w| u64::from((w.load(Relaxed) & DECIDED_MARKS).count_ones())).sum());
    }
    let mut last_checkpoint = Instant::now();
    let mut last_write = std::time::Duration::ZERO;
    let mut n = first_level;
    loop {
        let decided = AtomicU64::new(0);
        if n == 1 {
            // Wins in 1 only decrement counters, and init already did that.
            decided.store(wins_in_one.load(Relaxed), Relaxed);
        } else if n <= max_inline {
            let code = (n + 1) as u8;
            // From 3 on, the frontier holds this level's slots (init writes distances up to 2).
            let from_frontier = n >= 3;
            (0..chunks).into_par_iter().for_each(|c| {
                let (mut found, mut chunk_edges) = (0, 0);
                if from_frontier && !has_frontier[n as usize % 2][c as usize].load(Relaxed) {
                    return;
                }
                let mut cursor = index.cursor();
                // Word by word, visiting only the set bits: a slot-by-slot test of bits that are
                // set at random would mispredict a branch on every other slot.
                let bits_wanted = if from_frontier { DECIDED_MARKS << 1 } else { DECIDED_MARKS };
                let words = mark_word(chunk_range(c).start)..mark_word(chunk_range(c).end - 1) + 1;
                for word in words {
                    // An undecided slot's byte is a counter, which may equal the code: read the
                    // bits first, and a byte only behind its bit (see `set_decided`). A slot
                    // decided after this load belongs to the next level, and so does a frontier
                    // bit whose byte is not this level's code.
                    let mut bits = marks[word].load(Acquire) & bits_wanted;
                    let mut walked = 0u64;
                    while bits != 0 {
                        let bit = bits & bits.wrapping_neg();
                        bits ^= bit;
                        let slot = word as u64 * SLOTS_PER_MARK_WORD + u64::from(bit.trailing_zeros() / 2);
                        if state[slot as usize].load(Relaxed) == code {
                            walked |= bit;
                            found += 1;
                            chunk_edges += retro(cursor.position_at(slot), n);
                        }
                    }
                    if from_frontier && walked != 0 {
                        marks[word].fetch_and(!walked, Relaxed);
                    }
                }
                decided.fetch_add(found, Relaxed);
                edges.fetch_add(chunk_edges, Relaxed);
            });
        } else {
            let level: Vec<u64> =
                overflow.lock().expect("not poisoned").iter().filter(|e| e.1 == n).map(|e| e.0).collect();
            decided.store(level.len() as u64, Relaxed);
            let level_edges: u64 = level.par_iter().map(|&slot| retro(index.position_at(slot), n)).sum();
            edges.fetch_add(level_edges, Relaxed);
        }
        has_frontier[n as usize % 2].par_iter().for_each(|marked| marked.store(false, Relaxed));
        let decided = decided.into_inner();
        progress.advance(decided);
        // Levels above 1 are only ever created by the level before them.
        if decided == 0 && n >= 1 {
            break;
        }
        // Level 1 is a formality (its count comes from init), so the first checkpoint that a
        // resume can use follows it.
        // At most every `c.every`, and never more often than 20 times the last write took, so
        // that checkpoints of a big game (5 GB for KKCCFFR) cost at most a twentieth of it.
        let due = |c: &&Checkpoints| n >= 1 && last_checkpoint.elapsed() >= c.every.max(20 * last_write);
        if let Some(c) = checkpoints.filter(due) {
            let writing = Instant::now();
            // SAFETY: between levels no thread writes, so the bytes can be read plainly.
            let (bytes, words) = unsafe {
                (
                    std::slice::from_raw_parts(state.as_ptr() as *const u8, state.len()),
                    std::slice::from_raw_parts(marks.as_ptr() as *const u64, marks.len()),
                )
            };
            checkpoint::write(&c.path, &index, n, bytes, words, &overflow.lock().expect("not poisoned"))?;
            last_write = writing.elapsed();
            last_checkpoint = Instant::now();
        }
        n += 1;
    }
    progress.finish_phase();

    // What stays undecided is a draw: its counter byte becomes 0, and the state bytes are the
    // table's values.
    state.par_chunks(SLOTS_PER_MARK_WORD as usize).zip(marks.par_iter()).for_each(|(bytes, word)| {
        let word = word.load(Relaxed);
        for (i, byte) in bytes.iter().enumerate() {
            if word & 1 << (2 * i) == 0 {
                byte.store(0, Relaxed);
            }
        }
    });
    drop(mark_words);
    let mut overflow = overflow.into_inner().expect("not poisoned");
    overflow.sort_unstable();
    let statistics = Statistics::of_values(&state_bytes, &overflow);
    Ok(Solution {
        table: SolvedTable { material, values: state_bytes, overflow, statistics },
        seconds: started.elapsed().as_secs_f64(),
        edges: edges.into_inner(),
    })
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The process's resident memory now, where the system reports it (Linux).
pub fn resident_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// A size in kB from `/proc/self/status`, by its field's name.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
