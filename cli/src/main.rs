//! `shogi4`: the offline tool. Perft, position counts, solving closed games into tables,
//! auditing tables, reading their headers, and probing them without a server (with `--json`,
//! in the API's own words).

mod commands;
mod error;
mod progress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use error::CliError;

/// Shogi4 tablebase tools.
#[derive(Parser)]
#[command(name = "shogi4", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count leaf nodes of the move tree: one line `DEPTH NODES` per depth from 1 to DEPTH.
    Perft {
        /// Maximum depth in plies.
        depth: u32,
        /// Start position, SFEN or Fairy-Stockfish FEN (`_` may replace spaces).
        #[arg(long, default_value = "trfk/3c/C3/KFRT b - 1")]
        pos: String,
        /// Print `{"pos": ..., "nodes": [...]}` instead.
        #[arg(long)]
        json: bool,
    },
    /// Count the positions of a closed game (published convention) and its folded slots.
    Count {
        /// Closed game, e.g. KKCF or KKCCFFRRTT.
        material: String,
        /// Print `{"material", "positions", "slots"}` instead.
        #[arg(long)]
        json: bool,
    },
    /// Solve closed games by retrograde analysis and write their tables.
    Solve {
        /// Closed games to solve, e.g. KKC KKCF.
        materials: Vec<String>,
        /// Solve every closed game with at most --max-pieces non-royal pieces.
        #[arg(long, requires = "max_pieces")]
        all: bool,
        /// Largest number of non-royal pieces for --all.
        #[arg(long, requires = "all")]
        max_pieces: Option<u32>,
        /// Directory for the tables.
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        /// Skip closed games whose table already exists and passes its checksum.
        #[arg(long)]
        missing: bool,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object of statistics per table (JSON Lines) instead.
        #[arg(long)]
        json: bool,
    },
    /// Solve one closed game in memory, audit it, and print speed and memory figures.
    Bench {
        /// Closed game, e.g. KKCFR.
        material: String,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print the figures as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Verify tables: checksum, and every slot's value against its children's values.
    Audit {
        /// Table files or directories of tables.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object per table instead.
        #[arg(long)]
        json: bool,
    },
    /// Print a table's header and statistics.
    Info {
        /// Table file.
        file: PathBuf,
        /// Print JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Look up a position: its value, distance to win, and every move with its value.
    Probe {
        /// Position, SFEN or Fairy-Stockfish FEN (`_` may replace spaces).
        pos: String,
        /// Directory of tables.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Print the body of `GET /probe` instead (errors: its problem document, on stderr).
        #[arg(long)]
        json: bool,
    },
    /// The line of best play from a position to the royal capture.
    Mainline {
        /// Position, SFEN or Fairy-Stockfish FEN (`_` may replace spaces).
        pos: String,
        /// Directory of tables.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Print the body of `GET /mainline` instead (errors: its problem document, on stderr).
        #[arg(long)]
        json: bool,
    },
}

impl Command {
    /// Whether the command was asked for JSON output.
    fn json(&self) -> bool {
        match *self {
            Command::Perft { json, .. }
            | Command::Count { json, .. }
            | Command::Solve { json, .. }
            | Command::Bench { json, .. }
            | Command::Audit { json, .. }
            | Command::Info { json, .. }
            | Command::Probe { json, .. }
            | Command::Mainline { json, .. } => json,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.command.json();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if json => {
            eprintln!("{}", serde_json::to_string(&error.problem()).expect("serializable"));
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("shogi4: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Perft { depth, pos, json } => commands::perft::run(&pos, depth, json),
        Command::Count { material, json } => commands::count::run(&material, json),
        Command::Solve { materials, all, max_pieces, out, missing, threads, json } => {
            let selection = commands::solve::Selection { materials, all_up_to: max_pieces.filter(|_| all) };
            with_threads(threads, || commands::solve::run(selection, &out, missing, json))
        }
        Command::Bench { material, threads, json } => with_threads(threads, || commands::solve::bench(&material, json)),
        Command::Audit { paths, threads, json } => with_threads(threads, || commands::audit::run(&paths, json)),
        Command::Info { file, json } => commands::info::run(&file, json),
        Command::Probe { pos, tables, json } => commands::probe::probe(&pos, &tables, json),
        Command::Mainline { pos, tables, json } => commands::probe::mainline(&pos, &tables, json),
    }
}

/// Runs `work` on a rayon pool of `threads` workers (all cores when `None`).
fn with_threads(threads: Option<usize>, work: impl FnOnce() -> Result<(), CliError> + Send) -> Result<(), CliError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start worker threads: {e}")))?;
    pool.install(work)
}
