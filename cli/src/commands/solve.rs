//! `shogi4 solve` and `shogi4 bench`.

use std::path::Path;

use shogi4_api::cli::{BenchFigures, SolveReport};
use shogi4_engine::{Material, MaterialIndex};
use shogi4_tablebase::{
    audit, peak_rss_bytes, refuse_too_large, solve, solve_memory_needed, Solution, SolveEvent, SolveMode, Statistics,
    Table, TableDir,
};

use super::{grouped, print_outcomes};
use crate::error::CliError;
use crate::progress::Bar;

/// Which closed games to solve.
pub struct Selection {
    /// Named on the command line.
    pub materials: Vec<String>,
    /// `--all --max-pieces N`.
    pub all_up_to: Option<u32>,
}

impl Selection {
    fn resolve(&self) -> Result<Vec<Material>, CliError> {
        let mut materials: Vec<Material> = self.materials.iter().map(|m| m.parse()).collect::<Result<_, _>>()?;
        if let Some(max) = self.all_up_to {
            materials.extend(Material::all_up_to(max));
        }
        if materials.is_empty() {
            return Err(CliError::Usage("name closed games to solve (e.g. KKCF), or use --all --max-pieces N".into()));
        }
        // Smallest first, so a long run produces the quick tables early; no duplicates.
        materials.sort();
        materials.dedup();
        Ok(materials)
    }
}

pub fn run(
    selection: Selection,
    out: &Path,
    missing: bool,
    max_memory: Option<u64>,
    checkpoints: Option<std::time::Duration>,
    compress: bool,
    json: bool,
) -> Result<(), CliError> {
    let materials = selection.resolve()?;
    let mut written_paths = Vec::new();
    let mode = if missing { SolveMode::Missing } else { SolveMode::Replace };
    let mut total = Statistics::default();
    let mut solved = 0;
    TableDir::new(out).solve(&materials, mode, max_memory, checkpoints, &Bar::new(), |event| match event {
        SolveEvent::Present(material, path) if !json => eprintln!("{material}: present in {}", path.display()),
        SolveEvent::Present(..) => {}
        SolveEvent::Replacing(material, error) => eprintln!("{material}: solving again ({error})"),
        SolveEvent::Solved(solution, written) => {
            total.positions += solution.table.statistics.positions;
            solved += 1;
            written_paths.push(written.to_path_buf());
            if json {
                super::print_json(&solve_report(solution, Some(written)));
            } else {
                print_solution(solution);
                println!("  written     {}", written.display());
            }
        }
    })?;
    if !json && solved > 1 {
        println!("solved {solved} closed games, {} positions in all", grouped(total.positions));
    }
    // Each table just written is replaced by its compressed form, checked against it first.
    if compress {
        for path in &written_paths {
            super::compress::compress_file(path, out, super::compress::Form::DEFAULT, json)?;
        }
    }
    Ok(())
}

pub fn bench(material: &str, max_memory: Option<u64>, json: bool) -> Result<(), CliError> {
    let material: Material = material.parse()?;
    // The solve, and then the table's bytes copied for the audit.
    let slots = MaterialIndex::new(material).slots();
    refuse_too_large(material, solve_memory_needed(slots) + slots, max_memory)?;
    let solution = solve(material, &Bar::new());
    let table = Table::new(solution.table.to_bytes())?;
    let report = audit(&table, &Bar::new());
    let peak = peak_rss_bytes();
    if json {
        let mut figures = solve_report(&solution, None);
        figures.bench = Some(BenchFigures {
            audit_seconds: report.seconds,
            audit_violations: report.violations,
            audit_to_solve_ratio: report.seconds / solution.seconds,
            table_bytes: table.size(),
            threads: rayon::current_num_threads(),
        });
        figures.peak_rss_bytes = peak;
        super::print_json(&figures);
    } else {
        print_solution(&solution);
        println!("  threads     {}", rayon::current_num_threads());
        println!(
            "  audit       {:.2} s ({:.2} of the solve time), {} violations",
            report.seconds,
            report.seconds / solution.seconds,
            report.violations
        );
        println!(
            "  table       {} bytes, {:.3} bytes per slot, {:.4} bytes per position",
            grouped(table.size()),
            table.size() as f64 / slots as f64,
            table.size() as f64 / (4 * slots) as f64
        );
    }
    if report.violations > 0 {
        return Err(CliError::AuditFailed(1));
    }
    Ok(())
}

fn solve_report(solution: &Solution, path: Option<&Path>) -> SolveReport {
    SolveReport {
        material: solution.table.material.to_string(),
        slots: solution.table.values.len() as u64,
        seconds: solution.seconds,
        edges: solution.edges,
        ns_per_edge: solution.ns_per_edge(),
        peak_rss_bytes: peak_rss_bytes(),
        path: path.map(|p| p.display().to_string()),
        outcomes: (&solution.table.statistics).into(),
        bench: None,
    }
}

fn print_solution(solution: &Solution) {
    let s = &solution.table.statistics;
    println!("{}: {} positions", solution.table.material, grouped(s.positions));
    print_outcomes(s, "  ");
    let histogram: Vec<String> =
        s.histogram.iter().enumerate().filter(|(_, &n)| n > 0).map(|(d, n)| format!("{d}:{n}")).collect();
    println!("  histogram   {}", histogram.join(" "));
    println!(
        "  time        {:.2} s, {} edges, {:.1} ns/edge",
        solution.seconds,
        grouped(solution.edges),
        solution.ns_per_edge()
    );
    if let Some(peak) = peak_rss_bytes() {
        println!("  peak RSS    {:.1} MiB", peak as f64 / (1 << 20) as f64);
    }
}

/// Reads a memory size: bytes, or a number with a K, M, G or T suffix (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("unknown size suffix in {text:?}: use K, M, G or T")),
            };
            (&text[..i], shift)
        }
        _ => (text, 0),
    };
    let number: u64 = digits.trim().parse().map_err(|_| format!("{text:?} is not a size like 512M or 20G"))?;
    number.checked_mul(1 << shift).ok_or_else(|| format!("{text:?} is too large"))
}
