//! The search: iterative deepening over a principal-variation alpha-beta search, with
//! aspiration windows at the root, a quiescence search at the horizon, and as many threads
//! as the caller asks for sharing one transposition table (lazy SMP).
//!
//! At every node, in order: a royal capture available is a win in 1; a position met before
//! on the line (or in the game that led to the root) is a draw, as the rules' repetition
//! makes it; what the [`Oracle`] proves is taken as exact; then the table, then the moves.
//! Only *safe* moves are searched (after them the opponent cannot capture the royal at once):
//! a position whose every legal move is unsafe is a loss in 2, one with no legal move a loss.
//!
//! Invariants: a search always has a move to return once depth 1 is done (it is not stopped
//! before); the scores it reports are estimates unless they came from the oracle or from a
//! royal capture on every line the search considered; the oracle's answers are never
//! stored where they could be mistaken for search results beyond the score itself.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as Atomic};
use std::time::{Duration, Instant};

use shogi4_engine::{Move, Position};
use shogi4_search::{Cancel, Outcome, Recall};

use crate::eval::evaluate;
use crate::ordering::{captured, encode, sort, MoveBuffer, Ordering, MAX_PLY};
use crate::score::{self, from_table, loss_in, to_table, win_in, INFINITY, MATE_BOUND};
use crate::table::{hash, Bound, Entry, Table as TranspositionTable};
use shogi4_tablebase::{Table, Tablebase};

/// What the search may take as proven: the tables, the proof store, the certificates.
pub trait Oracle: Sync {
    /// The proven outcome of `position`, or `None` (an [`Outcome::Unknown`] counts as none).
    fn proven(&self, position: &Position) -> Option<Outcome>;
}

/// Knows nothing.
impl Oracle for () {
    fn proven(&self, _: &Position) -> Option<Outcome> {
        None
    }
}

/// Anything the proof search can recall from is an oracle.
pub struct Recalled<'a, R: ?Sized>(pub &'a R);

impl<R: Recall + Sync + ?Sized> Oracle for Recalled<'_, R> {
    fn proven(&self, position: &Position) -> Option<Outcome> {
        let outcome = self.0.recall(std::slice::from_ref(position)).pop().flatten()?;
        (!matches!(outcome, Outcome::Unknown { .. })).then_some(outcome)
    }
}

/// A table's value is proven (a position of a closed game whose table is loaded).
impl<B: AsRef<[u8]> + Sync> Oracle for Tablebase<Table<B>> {
    fn proven(&self, position: &Position) -> Option<Outcome> {
        self.value(position).ok().map(Outcome::Proven)
    }
}

/// Two oracles: the first that knows.
impl<A: Oracle, B: Oracle> Oracle for (A, B) {
    fn proven(&self, position: &Position) -> Option<Outcome> {
        self.0.proven(position).or_else(|| self.1.proven(position))
    }
}

/// When a search stops, and how it may spend the machine.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The deepest iteration to run (plies, before quiescence).
    pub depth: Option<u32>,
    /// Nodes, summed over threads.
    pub nodes: Option<u64>,
    /// Wall time from the search's start.
    pub time: Option<Duration>,
    /// Search threads (at least 1).
    pub threads: usize,
    /// How many best lines to report (at least 1).
    pub lines: usize,
    /// Which reductions and pruning to use.
    pub pruning: Pruning,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { depth: None, nodes: None, time: None, threads: 1, lines: 1, pruning: Pruning::default() }
    }
}

/// The selective parts of the search, each kept because a match measured it to gain (see
/// `docs/measurements.md`); switchable so that the next match can measure again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pruning {
    /// Late move reductions: quiet moves late in the order are searched shallower first.
    pub late_move_reductions: bool,
    /// Reverse futility: a node whose evaluation is far above beta near the horizon cuts.
    pub reverse_futility: bool,
    /// Null move: a node that stays above beta after passing cuts.
    pub null_move: bool,
    /// Threat extension: a move that threatens the opponent's royal is searched a ply deeper.
    pub threat_extension: bool,
    /// Move-count pruning: near the horizon, quiet moves late in the order are not searched.
    pub move_count_pruning: bool,
    /// Futility: near the horizon, quiet moves of a node whose evaluation is far below alpha
    /// are not searched.
    pub futility: bool,
    /// Internal iterative reduction: a node deep enough with no move from the table is
    /// searched a ply shallower (its order is a guess; the shallower search costs less and
    /// leaves a move in the table for the node's next visit).
    pub internal_reduction: bool,
    /// Singular extension: where the table's move, stored as at least a score from a search
    /// nearly as deep, is the only move that reaches near that score (the others, searched
    /// at half the depth while it is left out, all stay below it by a margin), it is searched a
    /// ply deeper. A forced line is then read deeper than the quiet lines around it.
    pub singular: bool,
}

/// A pruning switch: its name and its field.
pub type Switch = (&'static str, fn(&mut Pruning) -> &mut bool);

impl Default for Pruning {
    fn default() -> Self {
        Pruning::PLAY
    }
}

impl Pruning {
    /// The switches for play (the default): each one on was measured to gain in matches.
    pub const PLAY: Pruning = Pruning {
        late_move_reductions: true,
        reverse_futility: true,
        null_move: false,
        threat_extension: false,
        move_count_pruning: true,
        futility: true,
        internal_reduction: true,
        singular: true,
    };

    /// The switches of the steered prover's guide: the search it was measured with, and
    /// found the weak solution with. The later prunings were measured in games, where only
    /// the best move counts, not on the guide's work of scoring every move on a small budget.
    pub const GUIDE: Pruning = Pruning {
        move_count_pruning: false,
        futility: false,
        internal_reduction: false,
        singular: false,
        ..Pruning::PLAY
    };

    /// Each switch's name (as UCI options name it) and its field, so that a front end lists
    /// and sets them all from one place.
    pub const SWITCHES: [Switch; 8] = [
        ("LateMoveReductions", |p| &mut p.late_move_reductions),
        ("ReverseFutility", |p| &mut p.reverse_futility),
        ("NullMove", |p| &mut p.null_move),
        ("ThreatExtension", |p| &mut p.threat_extension),
        ("MoveCountPruning", |p| &mut p.move_count_pruning),
        ("Futility", |p| &mut p.futility),
        ("InternalReduction", |p| &mut p.internal_reduction),
        ("Singular", |p| &mut p.singular),
    ];
}

/// One line of the result: a root move, its score and the line the search expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The score for the side to move at the root (see [`score`](crate::score)).
    pub score: i32,
    /// The expected line, its first move the root move.
    pub moves: Vec<Move>,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The best lines, best first (one unless [`Limits::lines`] asked for more); empty only
    /// when the root has no legal move.
    pub lines: Vec<Line>,
    /// The deepest iteration completed.
    pub depth: u32,
    /// The deepest ply a line reached (quiescence included).
    pub seldepth: u32,
    /// Nodes searched, all threads.
    pub nodes: u64,
    /// Wall time spent.
    pub elapsed: Duration,
    /// The root's proven outcome, when the oracle knew it: then the first line's score is
    /// this outcome's, not an estimate.
    pub proven: Option<Outcome>,
}

impl Analysis {
    /// The best move, if the root has a legal move.
    pub fn best_move(&self) -> Option<Move> {
        self.lines.first().and_then(|line| line.moves.first().copied())
    }

    /// The best line's score.
    pub fn score(&self) -> Option<i32> {
        self.lines.first().map(|line| line.score)
    }
}

/// Progress after each completed iteration, for a caller that shows it (UCI's `info`).
pub struct Progress<'a> {
    /// The depth just completed.
    pub depth: u32,
    /// The deepest ply reached.
    pub seldepth: u32,
    /// Nodes so far.
    pub nodes: u64,
    /// Time so far.
    pub elapsed: Duration,
    /// The lines as they stand.
    pub lines: &'a [Line],
}

/// The engine: a transposition table that persists across searches (of one game, or one
/// worker's requests), and the searches run over it.
pub struct Engine {
    table: TranspositionTable,
}

/// The deepest iteration the search runs to by itself.
const MAX_DEPTH: u32 = 100;
/// How many nodes a thread searches between looks at the clock and the shared counters.
const CHECK_EVERY: u64 = 1024;

/// What every thread of one search shares.
struct Shared<'a> {
    table: &'a TranspositionTable,
    oracle: &'a dyn Oracle,
    cancel: &'a Cancel,
    stop: AtomicBool,
    nodes: AtomicU64,
    start: Instant,
    limits: &'a Limits,
}

impl Shared<'_> {
    fn out_of_budget(&self) -> bool {
        self.cancel.is_cancelled()
            || self.limits.nodes.is_some_and(|n| self.nodes.load(Atomic::Relaxed) >= n)
            || self.limits.time.is_some_and(|t| self.start.elapsed() >= t)
    }
}

impl Engine {
    /// An engine with a transposition table of `table_mb` MiB.
    pub fn new(table_mb: usize) -> Engine {
        Engine { table: TranspositionTable::new(table_mb) }
    }

    /// Forgets what earlier searches learnt (a new game).
    pub fn clear(&self) {
        self.table.clear();
    }

    /// Searches `root` within `limits`. `history` holds the keys of the positions of the game
    /// before the root (oldest first), so that the search scores returning to one as a draw.
    /// `progress` is called after each completed iteration. A cancelled search returns what
    /// it has, like one whose budget ran out.
    pub fn search(
        &self,
        root: &Position,
        history: &[u128],
        limits: &Limits,
        oracle: &dyn Oracle,
        cancel: &Cancel,
        mut progress: impl FnMut(&Progress<'_>),
    ) -> Analysis {
        self.table.new_search();
        let shared = Shared {
            table: &self.table,
            oracle,
            cancel,
            stop: AtomicBool::new(false),
            nodes: AtomicU64::new(0),
            start: Instant::now(),
            limits,
        };
        let proven = oracle.proven(root);
        let threads = limits.threads.max(1);
        let mut analysis = std::thread::scope(|scope| {
            for helper in 1..threads {
                let shared = &shared;
                scope.spawn(move || {
                    let mut worker = Worker::new(shared, root, history, helper);
                    worker.deepen(root, &mut |_| {});
                });
            }
            let mut worker = Worker::new(&shared, root, history, 0);
            let analysis = worker.deepen(root, &mut progress);
            shared.stop.store(true, Atomic::Relaxed);
            analysis
        });
        analysis.nodes = shared.nodes.load(Atomic::Relaxed);
        analysis.elapsed = shared.start.elapsed();
        if let (Some(outcome), Some(line)) = (proven, analysis.lines.first_mut()) {
            if let Some(score) = score::from_outcome(outcome, 0) {
                line.score = score;
            }
        }
        analysis.proven = proven;
        analysis
    }
}

/// One search thread.
struct Worker<'a> {
    shared: &'a Shared<'a>,
    id: usize,
    /// Keys of the game before the root and of the line from the root to the current node.
    path: Vec<u128>,
    ordering: Ordering,
    /// Nodes not yet added to the shared count.
    local_nodes: u64,
    /// The principal variation at each ply (triangular).
    pv: Vec<Vec<Move>>,
    seldepth: u32,
    /// The move each ply's node leaves out (a singular test's search), 0 for none.
    skip: Vec<u16>,
    /// Root moves to skip (the earlier lines of a multi-line search).
    excluded: Vec<Move>,
    /// The iteration being searched: the first is never stopped.
    iteration: u32,
}

impl<'a> Worker<'a> {
    fn new(shared: &'a Shared<'a>, root: &Position, history: &[u128], id: usize) -> Worker<'a> {
        let mut path = history.to_vec();
        path.push(root.key());
        Worker {
            shared,
            id,
            path,
            ordering: Ordering::default(),
            local_nodes: 0,
            pv: vec![Vec::new(); MAX_PLY + 2],
            seldepth: 0,
            skip: vec![0; MAX_PLY + 2],
            excluded: Vec::new(),
            iteration: 0,
        }
    }

    /// Counts a node and whether the search must stop now (the budget is looked at every
    /// [`CHECK_EVERY`] nodes).
    #[inline]
    fn stopped(&mut self) -> bool {
        self.local_nodes += 1;
        if self.local_nodes >= CHECK_EVERY {
            self.shared.nodes.fetch_add(self.local_nodes, Atomic::Relaxed);
            self.local_nodes = 0;
            if self.shared.out_of_budget() {
                self.shared.stop.store(true, Atomic::Relaxed);
            }
        }
        self.halted()
    }

    /// Whether the search was stopped and this iteration may be abandoned (any but the first).
    #[inline]
    fn halted(&self) -> bool {
        self.iteration > 1 && self.shared.stop.load(Atomic::Relaxed)
    }

    /// Iterative deepening: depth 1, 2, … until a limit, each with an aspiration window
    /// around the score before. Depth 1 always completes.
    fn deepen(&mut self, root: &Position, progress: &mut dyn FnMut(&Progress<'_>)) -> Analysis {
        let limits = self.shared.limits;
        let wanted = limits.lines.max(1);
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let mut lines: Vec<Line> = Vec::new();
        let mut completed = 0;
        // Helpers start one ply deeper on odd threads, so that the threads spread out.
        let first = 1 + (self.id % 2) as u32;
        for depth in first..=max_depth {
            self.iteration = depth;
            let mut found: Vec<Line> = Vec::new();
            self.excluded.clear();
            for index in 0..wanted {
                let previous = lines.get(index).map(|l| l.score);
                let Some(line) = self.aspirate(root, depth as i32, previous) else { break };
                if self.halted() {
                    found.push(line);
                    break;
                }
                self.excluded.push(line.moves[0]);
                found.push(line);
            }
            if self.halted() {
                // A partial iteration's first line is kept when its move was searched in full
                // and beat the line before (the window's first move is the old best).
                if let (Some(new), Some(old)) = (found.first(), lines.first()) {
                    if new.moves[0] != old.moves[0] && new.score > old.score {
                        lines[0] = new.clone();
                    }
                }
                break;
            }
            found.sort_by_key(|line| std::cmp::Reverse(line.score));
            if found.is_empty() {
                break;
            }
            lines = found;
            completed = depth;
            if self.id == 0 {
                self.shared.nodes.fetch_add(self.local_nodes, Atomic::Relaxed);
                self.local_nodes = 0;
                progress(&Progress {
                    depth,
                    seldepth: self.seldepth,
                    nodes: self.shared.nodes.load(Atomic::Relaxed),
                    elapsed: self.shared.start.elapsed(),
                    lines: &lines,
                });
                // A forced result needs no deeper search.
                if lines[0].score.abs() > MATE_BOUND && depth as i32 > mate_depth(lines[0].score) {
                    break;
                }
            }
            if self.shared.out_of_budget() {
                self.shared.stop.store(true, Atomic::Relaxed);
                break;
            }
        }
        self.shared.nodes.fetch_add(self.local_nodes, Atomic::Relaxed);
        self.local_nodes = 0;
        Analysis { lines, depth: completed, seldepth: self.seldepth, nodes: 0, elapsed: Duration::ZERO, proven: None }
    }

    /// One root search at `depth` in a window around `previous`, widened until the score
    /// falls inside; `None` if the root has no move left to search (all excluded, or none).
    fn aspirate(&mut self, root: &Position, depth: i32, previous: Option<i32>) -> Option<Line> {
        let mut delta = 30;
        let (mut alpha, mut beta) = match previous {
            Some(score) if depth >= 4 && score.abs() < MATE_BOUND => (score - delta, score + delta),
            _ => (-INFINITY, INFINITY),
        };
        loop {
            self.pv[0].clear();
            let score = self.search(root, root.key(), depth, 0, alpha, beta, true);
            if self.pv[0].is_empty() {
                return None;
            }
            if self.halted() || (score > alpha && score < beta) {
                return Some(Line { score, moves: self.pv[0].clone() });
            }
            delta *= 3;
            if score <= alpha {
                alpha = (score - delta).max(-INFINITY);
            } else {
                beta = (score + delta).min(INFINITY);
            }
            if delta > 1_000 {
                (alpha, beta) = (-INFINITY, INFINITY);
            }
        }
    }

    /// Whether the position last pushed on the path, whose key is `key`, repeats one before
    /// it with the same side to move (two, four, … plies back).
    fn repeats(&self, key: u128) -> bool {
        let here = self.path.len() - 1;
        let mut at = here;
        while at >= 2 {
            at -= 2;
            if self.path[at] == key {
                return true;
            }
        }
        false
    }

    /// The principal-variation search of `position` (whose key is `key`) at `ply` from the
    /// root with `depth` plies left, in the window (`alpha`, `beta`).
    #[allow(clippy::too_many_arguments)]
    fn search(
        &mut self,
        position: &Position,
        key: u128,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
        pv_node: bool,
    ) -> i32 {
        self.pv[ply].clear();
        if position.can_capture_royal() {
            if ply == 0 {
                let capture = position
                    .legal_moves()
                    .iter()
                    .copied()
                    .find(|&mv| position.captures_royal(mv) && !self.excluded.contains(&mv));
                match capture {
                    Some(mv) => self.pv[0].push(mv),
                    None => return -INFINITY,
                }
            }
            return win_in(ply as u32 + 1);
        }
        if ply > 0 {
            if self.repeats(key) {
                return 0;
            }
            // Mate distance: nothing here can beat a win already found nearer the root.
            let (low, high) = (loss_in(ply as u32), win_in(ply as u32 + 1));
            if low >= beta {
                return low;
            }
            if high <= alpha {
                return high;
            }
        }
        if depth <= 0 || ply >= MAX_PLY {
            return self.quiesce(position, key, ply, alpha, beta, 0);
        }
        if self.stopped() && ply > 0 {
            return 0;
        }
        // Asked where a node still has plies to search (fewer lookups than nodes), and always
        // for a root move's position, which a reduction may leave a single ply: a root move the
        // oracle proves must not be judged by the evaluation instead.
        if ply > 0 && (depth >= 2 || ply == 1) {
            if let Some(score) = self.shared.oracle.proven(position).and_then(|o| score::from_outcome(o, ply as u32)) {
                return score;
            }
        }
        let hashed = hash(key);
        let entry = self.shared.table.probe(hashed);
        let table_move = entry.map_or(0, |e| e.mv);
        let skipped = self.skip[ply];
        if let Some(e) = entry {
            if !pv_node && ply > 0 && e.depth >= depth && skipped == 0 {
                let score = from_table(e.score, ply as u32);
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if cut {
                    return score;
                }
            }
        }
        // Internal reduction (see `Pruning::internal_reduction`).
        let depth = if self.shared.limits.pruning.internal_reduction
            && depth >= 4
            && table_move == 0
            && ply > 0
            && skipped == 0
        {
            depth - 1
        } else {
            depth
        };
        let (moves, unsafe_exists) = position.safe_moves();
        if moves.is_empty() {
            if ply == 0 {
                // Every move loses the royal; play one (the first) all the same.
                let all = position.legal_moves();
                match all.iter().find(|mv| !self.excluded.contains(mv)) {
                    Some(&mv) => self.pv[0].push(mv),
                    None => return -INFINITY,
                }
            }
            return if unsafe_exists { loss_in(ply as u32 + 2) } else { loss_in(ply as u32) };
        }
        let threatened = position.threatens_royal();
        let pruning = self.shared.limits.pruning;
        let mut eval = None;
        if !pv_node && !threatened && ply > 0 {
            let eval = *eval.insert(evaluate(position));
            if pruning.reverse_futility && depth <= 3 && eval - 150 * depth >= beta && beta.abs() < MATE_BOUND {
                return eval;
            }
            if pruning.null_move && depth >= 3 && eval >= beta && beta.abs() < MATE_BOUND {
                if let Some(passed) = pass(position) {
                    self.path.push(passed.key());
                    let score = -self.search(&passed, passed.key(), depth - 3, ply + 1, -beta, -beta + 1, false);
                    self.path.pop();
                    if score >= beta && score.abs() < MATE_BOUND {
                        return score;
                    }
                }
            }
        }
        let mut moves: MoveBuffer = moves.iter().copied().collect();
        let mut scores = self.ordering.score(position, &moves, table_move, ply);
        sort(&mut moves, &mut scores);

        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move: Option<Move> = None;
        let mut quiets_tried = MoveBuffer::new();
        let mut searched = 0;
        for (index, &mv) in moves.iter().enumerate() {
            if ply == 0 && self.excluded.contains(&mv) {
                continue;
            }
            if skipped != 0 && encode(mv) == skipped {
                continue;
            }
            let quiet = captured(position, mv).is_none() && !mv.promotes();
            // Near the horizon, a quiet move that threatens nothing is passed over late in
            // the order, or where the evaluation is far below alpha; never the first move,
            // nor while every move so far loses, nor once a royal capture is in the window (a
            // move passed over could capture sooner, and a forced result's distance is told).
            if quiet && searched > 0 && best > -MATE_BOUND && alpha.abs() < MATE_BOUND && depth <= 3 {
                let late = pruning.move_count_pruning && quiets_tried.len() >= (3 + depth * depth) as usize;
                let futile = pruning.futility && eval.is_some_and(|e| e + 100 + 150 * depth <= alpha);
                if (late || futile) && !position.threatens_after(mv) {
                    quiets_tried.push(mv);
                    continue;
                }
            }
            let child = position.play_unchecked(mv);
            let child_key = position.key_after(key, mv);
            // Extensions stop at twice the iteration's depth, so that a forced line cannot run away.
            let extendable = ply < 2 * self.iteration as usize;
            let mut extension = i32::from(pruning.threat_extension && extendable && child.threatens_royal());
            // Singular extension (see `Pruning::singular`): the table's move, first in the
            // order, is tested against the rest: this node searched again at half the depth
            // without it (`skip`), in a null window below its stored score. The test's line is
            // not this node's, so it is cleared.
            if pruning.singular
                && searched == 0
                && ply > 0
                && extendable
                && depth >= 6
                && skipped == 0
                && extension == 0
            {
                if let Some(e) = entry.filter(|e| {
                    e.mv == encode(mv) && e.bound != Bound::Upper && e.depth >= depth - 3 && e.score.abs() < MATE_BOUND
                }) {
                    let singular_beta = e.score - 2 * depth;
                    self.skip[ply] = e.mv;
                    let score =
                        self.search(position, key, (depth - 1) / 2, ply, singular_beta - 1, singular_beta, false);
                    self.skip[ply] = 0;
                    self.pv[ply].clear();
                    if score < singular_beta {
                        extension = 1;
                    }
                }
            }
            self.path.push(child_key);
            let mut score;
            if searched == 0 {
                score = -self.search(&child, child_key, depth - 1 + extension, ply + 1, -beta, -alpha, pv_node);
            } else {
                let mut reduction = 0;
                if pruning.late_move_reductions
                    && depth >= 3
                    && index >= 3
                    && quiet
                    && !threatened
                    && !child.threatens_royal()
                {
                    reduction = 1 + i32::from(depth >= 6 && index >= 8);
                }
                let full = depth - 1 + extension;
                score = -self.search(&child, child_key, full - reduction, ply + 1, -alpha - 1, -alpha, false);
                if score > alpha && reduction > 0 {
                    score = -self.search(&child, child_key, full, ply + 1, -alpha - 1, -alpha, false);
                }
                if score > alpha && score < beta {
                    score = -self.search(&child, child_key, full, ply + 1, -beta, -alpha, true);
                }
            }
            self.path.pop();
            searched += 1;
            if self.halted() {
                if ply == 0 && best_move.is_some() {
                    break;
                }
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(mv);
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(mv);
                    head[ply].extend_from_slice(&tail[0]);
                    if score >= beta {
                        if quiet {
                            self.ordering.reward(position.turn(), mv, depth, ply, &quiets_tried);
                        }
                        break;
                    }
                    alpha = score;
                }
            }
            if quiet {
                quiets_tried.push(mv);
            }
        }
        if searched == 0 {
            return -INFINITY;
        }
        if ply == 0 && best_move.is_none() {
            // Every root move failed low: report the first searched, with its bound.
            if let Some(&mv) = moves.iter().find(|mv| !self.excluded.contains(mv)) {
                self.pv[0].clear();
                self.pv[0].push(mv);
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        if (ply > 0 || self.excluded.is_empty()) && skipped == 0 {
            self.shared.table.store(
                hashed,
                Entry { mv: best_move.map_or(0, encode), score: to_table(best, ply as u32), depth, bound },
            );
        }
        best
    }

    /// The quiescence search: the side to move may stand on the evaluation, or capture; when
    /// its royal is threatened it must answer the threat (every safe move is tried); at the
    /// first quiescence ply, moves that threaten the opponent's royal are tried too.
    fn quiesce(&mut self, position: &Position, key: u128, ply: usize, mut alpha: i32, beta: i32, qply: u32) -> i32 {
        self.pv[ply].clear();
        self.seldepth = self.seldepth.max(ply as u32);
        if position.can_capture_royal() {
            return win_in(ply as u32 + 1);
        }
        if self.stopped() {
            return 0;
        }
        let (moves, unsafe_exists) = position.safe_moves();
        if moves.is_empty() {
            return if unsafe_exists { loss_in(ply as u32 + 2) } else { loss_in(ply as u32) };
        }
        let mut moves: MoveBuffer = moves.iter().copied().collect();
        let threatened = position.threatens_royal();
        let mut best = -INFINITY;
        if !threatened || ply >= MAX_PLY || qply >= 8 {
            let stand = evaluate(position);
            if stand >= beta || ply >= MAX_PLY || qply >= 8 {
                return stand;
            }
            best = stand;
            alpha = alpha.max(stand);
        }
        let mut scores = self.ordering.score(position, &moves, 0, ply);
        sort(&mut moves, &mut scores);
        for &mv in moves.iter() {
            let capture = captured(position, mv).is_some();
            if !(threatened || capture || (qply == 0 && position.threatens_after(mv))) {
                continue;
            }
            let child_key = position.key_after(key, mv);
            // A move back to a position of the line is a draw, as in the main search.
            self.path.push(child_key);
            let score = if self.repeats(child_key) {
                0
            } else {
                -self.quiesce(&position.play_unchecked(mv), child_key, ply + 1, -beta, -alpha, qply + 1)
            };
            self.path.pop();
            if score > best {
                best = score;
                if score > alpha {
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }
        best
    }
}

/// The plies a mate score's line needs: iterations deeper than this one cannot find it nearer.
fn mate_depth(score: i32) -> i32 {
    score::MATE - score.abs() + 1
}

/// The position with the other side to move (the null move), if that is a legal position
/// whose side to move cannot capture the royal at once.
fn pass(position: &Position) -> Option<Position> {
    let mut setup = position.to_setup();
    setup.turn = !setup.turn;
    let passed = Position::try_from(setup).ok()?;
    (!passed.can_capture_royal()).then_some(passed)
}
