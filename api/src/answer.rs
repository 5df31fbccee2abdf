//! The answer policy for a position no table holds, in one place for the server and the CLI:
//! recall what is known of it and of its moves' positions (a proof store, certificates),
//! search on top of that, say where the value came from, and hand back what to record.
//!
//! The order around it is the callers' one lookup: [`shogi4_tablebase::Tablebase::table`]
//! first (a table answers exactly, and nothing is recorded), these functions when it has no
//! table for the position's closed game.

use shogi4_engine::Position;
use shogi4_search::{Analysis, Limits, Outcome, Recall, Search};

use crate::{MainlineResponse, ProbeResponse, Source};

/// A searched answer and what the search established, to be recorded by the caller (the
/// server through its store writer, the CLI into its store), per [`Analysis::facts`].
pub struct Searched<A> {
    /// The API's answer.
    pub answer: A,
    /// Facts by position key.
    pub facts: Vec<(u128, Outcome)>,
}

/// `GET /probe` for a position no table holds; the analysis comes back too (the server
/// queues what it left unfinished).
pub fn probe(
    search: &mut Search,
    position: &Position,
    limits: &Limits,
    known: &dyn Recall,
) -> (Searched<ProbeResponse>, Analysis) {
    let (analysis, before) = search.analyse_recalling(position, limits, known);
    let answer = ProbeResponse::searched(position, &analysis, source_after(before, analysis.outcome));
    (Searched { answer, facts: analysis.facts(position) }, analysis)
}

/// `GET /mainline` for a position no table holds.
pub fn mainline(
    search: &mut Search,
    position: &Position,
    limits: &Limits,
    known: &dyn Recall,
) -> Searched<MainlineResponse> {
    let (line, before) = search.mainline_recalling(position, limits, known);
    let answer = MainlineResponse::searched(position, &line, source_after(before, line.outcome));
    Searched { answer, facts: vec![(position.key(), line.outcome)] }
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
