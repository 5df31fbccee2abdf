//! `shogi4 probe`, `shogi4 mainline` and `shogi4 search`: answer a position without a server,
//! from its table or else by proof search, as the server does (the same policy,
//! `shogi4_answer`, over the certificates in the tables directory and a proof store if one
//! is named). With `--json` they print exactly the bodies of `GET /probe` and `GET /mainline`.

use std::path::Path;

use shogi4_answer::{Certified, Knowledge, Searcher, CERTIFICATES};
use shogi4_api::{MainlineResponse, ProbeResponse};
use shogi4_engine::Position;
use shogi4_proofs::{Opened, Origin, ProofStore};
use shogi4_search::{Analysis, Limits, Outcome, Recall};
use shogi4_tablebase::{ProbeError, Tablebase};

use crate::error::{parse_position, CliError};
use crate::Query;

/// How a position without a table is searched.
pub struct SearchBudget {
    /// Depth, nodes and time.
    pub limits: Limits,
    /// Transposition table size.
    pub table_bytes: usize,
}

impl SearchBudget {
    /// A search with this budget's table, refused before it is allocated where it would not fit
    /// (see [`tables_fit`]).
    pub fn search(&self) -> Result<Searcher, CliError> {
        tables_fit(self.table_bytes, 1)?;
        Ok(Searcher::new(self.table_bytes))
    }
}

/// Refuses `count` transposition tables of `bytes` each that need more memory than the system
/// has available: an allocation that fails would abort the process instead of saying why.
pub fn tables_fit(bytes: usize, count: usize) -> Result<(), CliError> {
    let needed = (bytes as u64).saturating_mul(count as u64);
    match shogi4_tablebase::available_memory() {
        Some(available) if needed > available => Err(CliError::Usage(format!(
            "transposition tables of {} MiB need more memory than the {} MiB the system has available: ask for \
             a smaller table (--table-mb; --search-table-mb for probe and mainline)",
            needed >> 20,
            available >> 20
        ))),
        _ => Ok(()),
    }
}

pub fn probe(query: &Query, json: bool) -> Result<(), CliError> {
    let (position, budget) = (parse_position(&query.pos)?, query.search.budget());
    let result = match open(&query.tables)?.probe(&position) {
        Ok(result) => result,
        Err(ProbeError::NoTable { .. }) => {
            let certified = certificates(&query.tables);
            return search_position(&position, &budget, open_store(query.store.as_deref())?, &certified, json);
        }
        Err(error) => return Err(error.into()),
    };
    if json {
        println!("{}", serde_json::to_string(&ProbeResponse::new(&position, &result)).expect("serializable"));
    } else {
        println!("{}  {}: {} (table)", position.to_sfen(), result.material, result.value);
        for m in &result.moves {
            let after = m.result.map_or("royal captured".to_string(), |p| p.to_sfen());
            println!("  {:<7} {:<12} {after}", m.mv.to_string(), m.value.to_string());
        }
    }
    Ok(())
}

pub fn mainline(query: &Query, json: bool) -> Result<(), CliError> {
    let (position, budget) = (parse_position(&query.pos)?, query.search.budget());
    let answer = match open(&query.tables)?.mainline(&position) {
        Ok(line) => MainlineResponse::new(&position, &line),
        Err(ProbeError::NoTable { .. }) => {
            let (store, certified) = (open_store(query.store.as_deref())?, certificates(&query.tables));
            let mut search = budget.search()?;
            let known = Knowledge::new(&certified, known(&store));
            let searched = shogi4_answer::mainline(&mut search, &position, &budget.limits, &known);
            record(store.as_ref(), &searched.facts)?;
            searched.answer
        }
        Err(error) => return Err(error.into()),
    };
    if json {
        println!("{}", serde_json::to_string(&answer).expect("serializable"));
    } else {
        let verdict = match (
            answer.verdict.dtw,
            answer.verdict.dtw_at_least.zip(answer.verdict.dtw_at_most),
            answer.verdict.no_result_within,
        ) {
            (Some(dtw), _, _) => format!("{:?} in {dtw}", answer.verdict.category),
            (None, Some((at_least, at_most)), _) => {
                format!(
                    "{:?} in {at_least} to {at_most} (a forced line, not necessarily the shortest)",
                    answer.verdict.category
                )
            }
            (None, None, Some(depth)) => format!("unknown: no forced result within {depth} plies"),
            (None, None, None) => "draw".to_string(),
        };
        println!("{}  {}: {verdict} ({:?})", answer.sfen, answer.material, answer.verdict.source);
        for step in &answer.mainline {
            let left = match (step.dtw, step.dtw_at_most) {
                (Some(dtw), _) => dtw.to_string(),
                (None, Some(at_most)) => format!("≤{at_most}"),
                (None, None) => String::new(),
            };
            println!("  {:<7} {left:>4}  {}", step.notation, step.sfen.as_deref().unwrap_or("royal captured"));
        }
    }
    Ok(())
}

pub fn search(pos: &str, budget: &SearchBudget, json: bool) -> Result<(), CliError> {
    search_position(&parse_position(pos)?, budget, None, &Certified::default(), json)
}

/// A position answered by search (`shogi4 search`, or `probe` without its table), over the
/// certificates and the store if one is given, and recording into it.
fn search_position(
    position: &Position,
    budget: &SearchBudget,
    store: Option<ProofStore>,
    certified: &Certified,
    json: bool,
) -> Result<(), CliError> {
    let mut search = budget.search()?;
    let known = Knowledge::new(certified, known(&store));
    let (searched, analysis) = shogi4_answer::probe(&mut search, position, &budget.limits, &known);
    record(store.as_ref(), &searched.facts)?;
    if json {
        println!("{}", serde_json::to_string(&searched.answer).expect("serializable"));
    } else {
        print_analysis(position, &analysis);
        if let Some(estimate) = &searched.answer.estimate {
            let score = match (estimate.centipawns, estimate.engine_sees_capture_in) {
                (Some(cp), _) => format!("{:+.2}", f64::from(cp) / 100.0),
                (None, Some(plies)) => format!("sees a royal capture in {plies} plies"),
                (None, None) => String::new(),
            };
            println!(
                "  estimate (engine, not proven): {score}, expected score {:.3}, best {}, depth {}: {}",
                estimate.expected_score,
                estimate.best_move,
                estimate.depth,
                estimate.line.join(" ")
            );
        }
    }
    Ok(())
}

/// An outcome in a few words: `win 15`, `win in 15..61`, `unknown (> 14)`.
pub(crate) fn describe(outcome: Outcome) -> String {
    match outcome {
        Outcome::Proven(value) => value.to_string(),
        Outcome::Bounded { win, at_least, at_most } => {
            format!("{} in {at_least}..{at_most}", if win { "win" } else { "loss" })
        }
        Outcome::Unknown { no_result_within } => format!("unknown (> {no_result_within})"),
    }
}

fn print_analysis(position: &Position, analysis: &Analysis) {
    println!(
        "{}  {}: {} (search: {} nodes, {:.0} ms)",
        position.to_sfen(),
        position.material(),
        describe(analysis.outcome),
        analysis.nodes,
        analysis.elapsed.as_secs_f64() * 1000.0
    );
    for m in &analysis.moves {
        let after = m.result.map_or("royal captured".to_string(), |p| p.to_sfen());
        println!("  {:<7} {:<16} {after}", m.mv.to_string(), describe(m.outcome));
    }
}

/// The tables of `dir`, mapped without verifying checksums (an answer's consistency is
/// checked along the way instead); files that fail their header checks are named and skipped.
/// A missing directory is no tables at all: every position is then searched.
pub fn open(dir: &Path) -> Result<Tablebase, CliError> {
    if !dir.exists() {
        return Ok(Tablebase::from_tables([]));
    }
    let (tablebase, rejected) = Tablebase::open_dir(dir, false)?;
    for (path, error) in rejected {
        eprintln!("shogi4: skipping {}: {error}", path.display());
    }
    Ok(tablebase)
}

/// What a rebuilt store lost, for the message that says it was rebuilt.
pub(crate) fn lost_records(lost: Option<u64>) -> String {
    lost.map_or(String::new(), |lost| format!(", {lost} lost"))
}

/// The certificates in the tables directory's `certificates/`, each checked first, as the
/// server serves them; a refused one is named on stderr and left out.
pub fn certificates(tables: &Path) -> Certified {
    let (certified, report) = Certified::load(&tables.join(CERTIFICATES));
    for (path, why) in report.iter().filter_map(|(path, loaded)| Some((path, loaded.as_ref().err()?))) {
        eprintln!("shogi4: skipping {}: {why}", path.display());
    }
    certified
}

/// The named proof store, if any: none without a path, or for the word `none`
/// ([`shogi4_proofs::named_store`], as for the server). A damaged one is repaired as the
/// server would (and said so on stderr).
pub fn open_store(path: Option<&Path>) -> Result<Option<ProofStore>, CliError> {
    let Some(path) = path.and_then(shogi4_proofs::named_store) else { return Ok(None) };
    let (store, opened) = ProofStore::open(path)?;
    if let Opened::Rebuilt { aside, salvaged, lost } = opened {
        eprintln!(
            "shogi4: {} was damaged: moved to {}, {salvaged} readable records carried over{}",
            path.display(),
            aside.display(),
            lost_records(lost)
        );
    }
    Ok(Some(store))
}

/// What a search builds on: the store, or nothing.
fn known(store: &Option<ProofStore>) -> &(dyn Recall + Sync) {
    match store {
        Some(store) => store,
        None => &(),
    }
}

/// Records a search's facts into the store, unless there is none or it is read-only (another
/// process holds it).
fn record(store: Option<&ProofStore>, facts: &[(u128, Outcome)]) -> Result<(), CliError> {
    if let Some(store) = store.filter(|store| !store.is_read_only()) {
        store.record(facts, Origin::Search)?;
    }
    Ok(())
}
