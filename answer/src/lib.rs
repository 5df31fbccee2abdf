//! The answer policy for a position no table holds, in one place for the server and the CLI:
//! recall what is known of it and of its moves' positions (a proof store, certificates),
//! search on top of that, say where the value came from, add the engine's estimate where no
//! value is proven, and hand back what to record.
//!
//! A request's budget is shared: the proof search gets [`ESTIMATE_SHARE`]'s complement of its
//! time and nodes, and the engine the rest, only when the proof search leaves the value
//! unknown. The engine runs on the searcher's own table (cleared for each request, so that an
//! estimate depends on the position and the budget alone) and takes what the store and the
//! certificates prove as exact.
//!
//! The order around it is the callers' one lookup: `shogi4_tablebase::Tablebase::table`
//! first (a table answers exactly, and nothing is recorded), these functions when it has no
//! table for the position's closed game.

mod certified;

pub use certified::{certificate_files, Certified, Check, Knowledge, Loaded, Served, CERTIFICATES, CHECKED};

use shogi4_api::{Estimate, MainlineResponse, ProbeResponse, Source};
use shogi4_engine::Position;
use shogi4_play::score::{expected_score, verdict, Verdict};
use shogi4_play::{Engine, Recalled};
use shogi4_search::{Analysis, Cancel, Limits, Outcome, Recall, Search};

/// The share of a request's budget (time and nodes) that the engine's estimate gets, when the
/// proof search leaves the value unknown; the proof search gets the rest.
pub const ESTIMATE_SHARE: f64 = 0.25;

/// The engine's transposition table beside a proof search table of `table_bytes`: a quarter
/// of it, from 1 to 16 MiB.
fn engine_table_mb(table_bytes: usize) -> usize {
    (table_bytes >> 22).clamp(1, 16)
}

/// The bytes a [`Searcher`] holds with a proof search table of `table_bytes`: that table and
/// the engine's.
pub fn searcher_bytes(table_bytes: usize) -> usize {
    table_bytes + (engine_table_mb(table_bytes) << 20)
}

/// What answers one request at a time: the proof search and the engine, each with its fixed
/// table, allocated once.
pub struct Searcher {
    /// The proof search.
    pub search: Search,
    engine: Engine,
    cancel: Cancel,
}

impl Searcher {
    /// A searcher whose proof search has a table of `table_bytes` (and the engine a smaller one,
    /// see [`searcher_bytes`]).
    pub fn new(table_bytes: usize) -> Searcher {
        Searcher {
            search: Search::new(table_bytes),
            engine: Engine::new(engine_table_mb(table_bytes)),
            cancel: Cancel::default(),
        }
    }

    /// Ends this searcher's searches when `cancel` is cancelled (`None`: never).
    pub fn watch(&mut self, cancel: Option<Cancel>) {
        self.cancel = cancel.clone().unwrap_or_default();
        self.search.watch(cancel);
    }
}

/// A searched answer and what the search established, to be recorded by the caller (the
/// server through its store writer, the CLI into its store), per [`Analysis::facts`].
pub struct Searched<A> {
    /// The API's answer.
    pub answer: A,
    /// Facts by position key.
    pub facts: Vec<(u128, Outcome)>,
    /// Whether what was recalled contradicted itself, so that the answer was searched again
    /// from the rules alone (see [`contradicts_itself`]).
    pub conflict: bool,
}

/// `GET /probe` for a position no table holds; the analysis comes back too (the server
/// queues what it left unfinished).
pub fn probe(
    searcher: &mut Searcher,
    position: &Position,
    limits: &Limits,
    known: &Knowledge,
) -> (Searched<ProbeResponse>, Analysis) {
    let proof_limits = Limits {
        max_nodes: scaled(limits.max_nodes, 1.0 - ESTIMATE_SHARE),
        time: limits.time.map(|t| t.mul_f64(1.0 - ESTIMATE_SHARE)),
        ..*limits
    };
    let (mut analysis, mut before) = searcher.search.analyse_recalling(position, &proof_limits, known);
    let contradicted = |analysis: &Analysis, before: Option<Outcome>| {
        contradicts_itself(analysis) || before.is_some_and(|b| b.conflicts(analysis.outcome))
    };
    let conflict = contradicted(&analysis, before);
    if conflict {
        // Something forged or corrupt was recalled, now or by an earlier request into the
        // table: searched again on a cleared table with what is known now (where a certificate
        // outranks the store), and if that still contradicts itself, from the rules alone.
        // Each try has the same budget, so a conflict costs at most three searches.
        searcher.search.clear();
        (analysis, before) = searcher.search.analyse_recalling(position, &proof_limits, known);
        if contradicted(&analysis, before) {
            searcher.search.clear();
            analysis = searcher.search.analyse(position, &proof_limits);
            before = None;
        }
    }
    let mut answer = ProbeResponse::searched(position, &analysis, source_after(before, analysis.outcome));
    if !analysis.outcome.is_settled() {
        if let Some(estimate) = estimate(searcher, position, limits, known) {
            answer = answer.with_estimate(estimate);
        }
    }
    // A certificate is named only for its own value, never for what the answer says beyond
    // it or instead of it.
    match known.certified().find(position) {
        Some((file, proven)) if analysis.outcome.is_settled() && !analysis.outcome.conflicts(proven) => {
            answer = answer.certified_by(file);
        }
        _ => {}
    }
    (Searched { answer, facts: analysis.facts(position), conflict }, analysis)
}

/// Whether an analysis's value of its position disagrees with what its moves' values prove.
/// A search from the rules never does; one that recalled a forged or corrupt record can (a
/// position proven lost although one of its moves is proven to win).
pub fn contradicts_itself(analysis: &Analysis) -> bool {
    Outcome::from_moves(analysis.moves.iter().map(|m| m.outcome)).is_some_and(|m| m.conflicts(analysis.outcome))
}

/// `share` of a node budget (no budget stays none).
fn scaled(nodes: u64, share: f64) -> u64 {
    if nodes == u64::MAX {
        nodes
    } else {
        (nodes as f64 * share) as u64
    }
}

/// The engine's estimate of `position` within its share of `limits`.
fn estimate(
    searcher: &mut Searcher,
    position: &Position,
    limits: &Limits,
    known: &(dyn Recall + Sync),
) -> Option<Estimate> {
    let engine_limits = shogi4_play::Limits {
        nodes: Some(scaled(limits.max_nodes, ESTIMATE_SHARE).max(1)),
        time: limits.time.map(|t| t.mul_f64(ESTIMATE_SHARE)),
        ..shogi4_play::Limits::default()
    };
    searcher.engine.clear();
    let analysis = searcher.engine.search(position, &[], &engine_limits, &Recalled(known), &searcher.cancel, |_| {});
    let line = analysis.lines.first()?;
    let (centipawns, engine_sees_capture_in) = match verdict(line.score) {
        Verdict::Centipawns(cp) => (Some(cp), None),
        Verdict::Win(plies) => (None, Some(plies as i32)),
        Verdict::Loss(plies) => (None, Some(-(plies as i32))),
    };
    Some(Estimate {
        expected_score: (expected_score(line.score) * 1000.0).round() / 1000.0,
        centipawns,
        engine_sees_capture_in,
        best_move: line.moves.first()?.to_string(),
        line: line.moves.iter().map(ToString::to_string).collect(),
        depth: analysis.depth,
        nodes: analysis.nodes,
    })
}

/// `GET /mainline` for a position no table holds.
pub fn mainline(
    searcher: &mut Searcher,
    position: &Position,
    limits: &Limits,
    known: &Knowledge,
) -> Searched<MainlineResponse> {
    let (line, before) = searcher.search.mainline_recalling(position, limits, known);
    let mut answer = MainlineResponse::searched(position, &line, source_after(before, line.outcome));
    // A certificate is named only with the line it proves: a winner is never stated without
    // its line.
    if let Some((file, _)) = known.certified().find(position).filter(|_| answer.winner.is_some()) {
        answer = answer.certified_by(file);
    }
    Searched { answer, facts: vec![(position.key(), line.outcome)], conflict: false }
}

/// Where a searched answer comes from, given what was known of the position before and what
/// the answer says: the store if both are a proven value (a line that the search could not
/// prove again is the search's own unknown, whatever was known).
fn source_after(known: Option<Outcome>, answered: Outcome) -> Source {
    if known.is_some_and(Outcome::is_settled) && answered.is_settled() {
        Source::Store
    } else {
        Source::Search
    }
}
