//! `shogi4 analyse`: the engine's best lines for a position, its estimate and how deep it
//! looked; and the oracle it and `shogi4 uci` share (the tables, the certificates beside them,
//! and a proof store if named).

use std::path::Path;
use std::time::Duration;

use shogi4_answer::Certified;
use shogi4_api::cli::{AnalyseLine, AnalyseReport};
use shogi4_engine::Position;
use shogi4_play::score::{expected_score, verdict, Verdict};
use shogi4_play::{Engine, Limits, Oracle, Recalled};
use shogi4_proofs::ProofStore;
use shogi4_search::{Cancel, Outcome};
use shogi4_tablebase::Tablebase;

use crate::commands::probe::{certificates, describe as describe_outcome, open, open_store};
use crate::error::{parse_position, CliError};

/// What the engine takes as proven: the loaded tables, then the certificates in the tables
/// directory (checked, as `probe` and the server check them), then the proof store.
pub struct Known {
    tables: Tablebase,
    certified: Certified,
    store: Option<ProofStore>,
}

impl Known {
    /// The tables and certificates of `tables` and the store at `store` (none if absent or
    /// `none`).
    pub fn open(tables: &Path, store: Option<&Path>) -> Result<Known, CliError> {
        Ok(Known { tables: open(tables)?, certified: certificates(tables), store: open_store(store)? })
    }
}

impl Oracle for Known {
    fn proven(&self, position: &Position) -> Option<Outcome> {
        self.tables
            .proven(position)
            .or_else(|| self.certified.find(position).map(|(_, outcome)| outcome))
            .or_else(|| Recalled(self.store.as_ref()?).proven(position))
    }
}

/// How `analyse` searches.
pub struct Settings {
    /// Depth, nodes, time, threads and lines.
    pub limits: Limits,
    /// Transposition table size in MiB.
    pub table_mb: usize,
}

/// Searches `pos` and prints each iteration's best line, then the result.
pub fn run(pos: &str, settings: &Settings, known: &Known, json: bool) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    crate::commands::probe::tables_fit(settings.table_mb << 20, 1)?;
    let engine = Engine::new(settings.table_mb);
    let analysis = engine.search(&position, &[], &settings.limits, known, &Cancel::default(), |progress| {
        if !json {
            let line = &progress.lines[0];
            let moves: Vec<String> = line.moves.iter().map(|m| m.to_string()).collect();
            println!(
                "depth {:>2}  {:>9}  nodes {:>11}  {:>7.2} s  {}",
                progress.depth,
                describe(line.score),
                progress.nodes,
                progress.elapsed.as_secs_f64(),
                moves.join(" ")
            );
        }
    });
    let report = AnalyseReport {
        sfen: position.to_sfen(),
        lines: analysis
            .lines
            .iter()
            .map(|line| {
                let (score_cp, win_in, loss_in) = match verdict(line.score) {
                    Verdict::Centipawns(cp) => (Some(cp), None, None),
                    Verdict::Win(n) => (None, Some(n), None),
                    Verdict::Loss(n) => (None, None, Some(n)),
                };
                AnalyseLine {
                    score_cp,
                    win_in,
                    loss_in,
                    expected_score: expected_score(line.score),
                    pv: line.moves.iter().map(|m| m.to_string()).collect(),
                }
            })
            .collect(),
        proven: analysis.proven.map(|outcome| format!("{outcome:?}")),
        depth: analysis.depth,
        seldepth: analysis.seldepth,
        nodes: analysis.nodes,
        ms: analysis.elapsed.as_millis() as u64,
    };
    if json {
        println!("{}", serde_json::to_string(&report).expect("serializable"));
        return Ok(());
    }
    for (index, line) in report.lines.iter().enumerate() {
        println!("line {}: {} {}", index + 1, describe(analysis.lines[index].score), line.pv.join(" "));
    }
    let nps = analysis.nodes as f64 / analysis.elapsed.max(Duration::from_micros(1)).as_secs_f64();
    // A proven score stands for a range where the proof bounds the distance: the range is said.
    let source = match analysis.proven {
        Some(outcome) => {
            format!("; the score is proven (table, certificate or proof store): {}", describe_outcome(outcome))
        }
        None => "; an estimate".to_string(),
    };
    println!(
        "best {}; depth {}, {} nodes, {:.0} nodes/s{source}",
        report.lines.first().and_then(|l| l.pv.first()).map_or("none", |m| m.as_str()),
        report.depth,
        report.nodes,
        nps,
    );
    Ok(())
}

/// A score as a person reads it: `+1.25` carps, or `win in 7` / `loss in 6` plies.
fn describe(score: i32) -> String {
    match verdict(score) {
        Verdict::Win(n) => format!("win in {n}"),
        Verdict::Loss(n) => format!("loss in {n}"),
        Verdict::Centipawns(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
    }
}
