//! `shogi4`: the offline tool. Perft, position counts, solving closed games into tables,
//! auditing tables, reading their headers, and probing them without a server (with `--json`,
//! in the API's own words).

mod commands;
mod error;
mod progress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use shogi4_proofs::Carried;

use error::CliError;

/// Shogi4 tablebase tools.
#[derive(Parser)]
#[command(name = "shogi4", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print JSON instead of text, for any command: its report (`shogi4_api::cli`), the API's
    /// own bodies for probe, mainline and search, and errors as problem documents on stderr.
    #[arg(long, global = true)]
    json: bool,
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
    },
    /// Count the positions of a closed game (published convention) and its folded slots.
    Count {
        /// Closed game, e.g. KKCF or KKCCFFRRTT.
        material: String,
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
        /// Refuse, before writing anything, games whose solve needs more memory than this
        /// (bytes, or 512M, 20G, …; default: what the system has available).
        #[arg(long, value_parser = commands::solve::parse_size)]
        max_memory: Option<u64>,
        /// Keep a checkpoint beside each table while it is solved, and resume from one that an
        /// interrupted run left (a checkpoint of another game, format or build is refused).
        #[arg(long)]
        resume: bool,
        /// With --resume: least seconds between two checkpoints (each is taken after a level,
        /// and never sooner than 20 times the last one took to write).
        #[arg(long, default_value_t = 60, requires = "resume")]
        checkpoint_secs: u64,
        /// Worker threads (default: all cores).
        #[arg(long, conflicts_with_all = ["cluster", "hostfile"])]
        threads: Option<usize>,
        /// Solve one closed game on a cluster of processes on this machine, `local:N`,
        /// connected over TCP on loopback (`local:1`: one process, its workers threads).
        #[arg(long, value_name = "local:N", conflicts_with = "hostfile")]
        cluster: Option<String>,
        /// With --cluster or --hostfile: worker threads in each process.
        #[arg(long, default_value_t = 1)]
        workers: usize,
        /// Run one process of a cluster spread over several hosts: FILE has one `host:port`
        /// per process (blank lines and `#` comments are skipped); every process gets the
        /// same file and its own --process.
        #[arg(long, value_name = "FILE", requires = "process")]
        hostfile: Option<PathBuf>,
        /// With --hostfile: this process's line in the host file, from 0.
        #[arg(long, requires = "hostfile")]
        process: Option<usize>,
        /// Write each solved table compressed (format version 4), as `shogi4 compress` does.
        #[arg(long, conflicts_with_all = ["cluster", "hostfile"])]
        compress: bool,
    },
    /// Rewrite tables in the compressed format (version 4): the same values, a fraction of
    /// the bytes, still read in place. Each result is checked against its source before it
    /// is written.
    Compress {
        /// Table files or directories of tables.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Directory for the compressed tables (the source's own directory replaces them there).
        #[arg(long)]
        out: PathBuf,
        /// Write plain tables (version 1) instead: a compressed table back to the bytes it came
        /// from.
        #[arg(long)]
        plain: bool,
        /// Parts per block of a compressed table, 1 to 16: a read decodes one part, so more
        /// parts read faster, and each costs 12 bits per 512-byte block.
        #[arg(long, default_value_t = shogi4_tablebase::compressed::DEFAULT_PARTS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=shogi4_tablebase::compressed::MAX_PARTS as u64))]
        parts: usize,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Solve one closed game in memory, audit it, and print speed and memory figures.
    Bench {
        /// Closed game, e.g. KKCFR.
        material: String,
        /// Refuse, before anything is allocated, a game whose solve and audit need more memory
        /// than this (bytes, or 512M, 20G, …; default: what the system has available).
        #[arg(long, value_parser = commands::solve::parse_size)]
        max_memory: Option<u64>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Verify tables: checksum, and every slot's value against its children's values.
    Audit {
        /// Table files or directories of tables.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Print a table's header and statistics.
    Info {
        /// Table file.
        file: PathBuf,
    },
    /// Write SHA256SUMS and manifest.json beside a directory of tables, for mirrors: the same
    /// bytes a server serving the directory sends as /files/SHA256SUMS and /files/manifest.json.
    Publish {
        /// The tables' directory.
        #[arg(default_value = "tables")]
        dir: PathBuf,
    },
    /// Look up a position: its value, distance to win, and every move with its value (from
    /// its table, or else by proof search, as the server answers). With --json, the body of
    /// `GET /probe`.
    Probe(Query),
    /// The line of best play from a position to the royal capture. With --json, the body of
    /// `GET /mainline`.
    Mainline(Query),
    /// The engine's best lines for a position where no proof reaches: an estimate (centipawns
    /// for the side to move), unless a table or the proof store proves the position.
    Analyse {
        /// Position, SFEN or Fairy-Stockfish FEN (`_` may replace spaces).
        pos: String,
        #[command(flatten)]
        engine: EngineArgs,
        /// Time budget in milliseconds (0: none).
        #[arg(long, default_value_t = 1000)]
        ms: u64,
        /// Deepest iteration (plies).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
        depth: Option<u32>,
        /// Node budget.
        #[arg(long)]
        nodes: Option<u64>,
        /// Search threads (1 to 64).
        #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
        threads: usize,
        /// Best lines to show (1 to 16).
        #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=16))]
        lines: usize,
        /// Transposition table size in MiB (1 to 65536).
        #[arg(long, default_value_t = 64, value_parser = table_mb())]
        table_mb: usize,
    },
    /// Speak UCI on stdin and stdout, as Fairy-Stockfish does for its `shogi4` variant
    /// (`UCI_Variant shogi4`; its FEN and moves), for match runners and front-ends.
    Uci {
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Prove a position by search alone (no tables): a win or loss with its exact distance,
    /// or the depth to which neither side has a forced result; every move likewise.
    Search {
        /// Position, SFEN or Fairy-Stockfish FEN (`_` may replace spaces).
        pos: String,
        /// Time budget in milliseconds (0: none).
        #[arg(long, default_value_t = 1000)]
        ms: u64,
        /// Node budget.
        #[arg(long, default_value_t = u64::MAX)]
        nodes: u64,
        /// Deepest distance to win to look for.
        #[arg(long, default_value_t = shogi4_search::MAX_DEPTH)]
        depth: u32,
        /// Transposition table size in MiB (1 to 65536).
        #[arg(long, default_value_t = shogi4_search::DEFAULT_TABLE_MB, value_parser = table_mb())]
        table_mb: usize,
    },
    /// Grow the proof store from the start, best-first by proof numbers (resumable: what the
    /// store knows is not searched again).
    Prove {
        /// Where to start.
        #[arg(long, default_value = "trfk/3c/C3/KFRT b - 1")]
        from: String,
        /// Positions to search at most.
        #[arg(long, default_value_t = 100)]
        positions: u64,
        /// Minutes to run at most (no limit if absent).
        #[arg(long)]
        minutes: Option<u64>,
        /// The proof store (created if missing).
        #[arg(long, default_value = "tables/proofs.redb")]
        store: PathBuf,
        /// Time budget per position in milliseconds (0: none).
        #[arg(long, default_value_t = 1000)]
        ms: u64,
        /// Node budget per position: with `--ms 0` and one thread, a run that makes the same
        /// choices on every machine.
        #[arg(long, default_value_t = u64::MAX)]
        nodes: u64,
        /// Transposition table size in MiB (1 to 65536).
        #[arg(long, default_value_t = shogi4_search::DEFAULT_TABLE_MB, value_parser = table_mb())]
        table_mb: usize,
        /// Stop once the process's resident memory reaches this (bytes, or 512M, 20G, …); the
        /// transposition table must fit well within it.
        #[arg(long, default_value = "8G", value_parser = commands::solve::parse_size)]
        max_memory: u64,
        /// Stop once the store's file reaches this size (bytes, or 512M, 20G, …).
        #[arg(long, default_value = "2G", value_parser = commands::solve::parse_size)]
        max_store: u64,
        /// Leaves searched side by side, each with a transposition table of its own (1 to 256).
        #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
        threads: usize,
        /// Prove that this player wins, with the engine choosing the moves (the steered
        /// prover) instead of asking both questions of every position.
        #[arg(long)]
        steer: Option<Player>,
        /// Steered: how long the engine's first move is followed alone, as a factor on proof
        /// numbers (1: not at all, every move by its numbers; 0: until it is refuted).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
        patience: u32,
        /// Steered: engine nodes to rank a position's moves (1 to 10^9).
        #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
        guide_nodes: u64,
        /// Steered: searches of a leaf, each with four times the budget of the one before,
        /// before it is expanded instead (1 to 8).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=8))]
        leaf_searches: u32,
        /// Steered: certify each leaf as it is proven (its proof tree spelt out and stored
        /// position by position; a leaf whose tree cannot be spelt out counts as open), so that
        /// `certify --store` writes the certificate without a search. Use a store that holds
        /// only such proofs: a proven value already in the store is taken as it is.
        #[arg(long)]
        certified: bool,
        /// Steered: a proof store the engine reads to choose moves (its proven values rank
        /// first) and that is never written; nothing in it counts as proven. E.g. the published
        /// export, imported, for a `--certified` run over a store of its own.
        #[arg(long)]
        hints: Option<PathBuf>,
    },
    /// Prove a position by search and write its proof certificate: the winner's move at each of
    /// its positions, with bounds that fall along every line (checked with `verify-proof`
    /// before it is written).
    Certify {
        /// Position, SFEN or Fairy-Stockfish FEN (`_` may replace spaces).
        pos: String,
        /// The certificate file to write.
        #[arg(long)]
        out: PathBuf,
        /// Time budget in milliseconds for the proof and its tree (0: none).
        #[arg(long, default_value_t = 10_000)]
        ms: u64,
        /// Node budget.
        #[arg(long, default_value_t = u64::MAX)]
        nodes: u64,
        /// Transposition table size in MiB (1 to 65536).
        #[arg(long, default_value_t = shogi4_search::DEFAULT_TABLE_MB, value_parser = table_mb())]
        table_mb: usize,
        /// Assemble the certificate from this proof store's proven positions (a proof too
        /// large for one search): `--ms`/`--nodes` are then each leaf's budget.
        #[arg(long)]
        store: Option<PathBuf>,
        /// With `--store`: certificates (checked first) whose proof trees the assembly may use
        /// as they are, e.g. those of the moves of the position; repeatable.
        #[arg(long = "with", requires = "store")]
        with: Vec<PathBuf>,
        /// With `--store`: a folder where each leaf's certificate is kept as it is found, and
        /// whose certificates seed the assembly (a long assembly resumes); `open.txt` in it
        /// names the leaves no search certified, and those it names are not searched again
        /// (delete it to search them again).
        #[arg(long, requires = "store")]
        leaves: Option<PathBuf>,
        /// Write the compact form (`S4CERT2`: one byte a winner's position, bounds computed by
        /// the checker) instead of the keyed one (19 bytes a position): for proofs of millions
        /// of positions.
        #[arg(long)]
        compact: bool,
    },
    /// Check a proof certificate by the rules alone (no search, no store, no table): every
    /// loser's move answered, every winner's move legal, every line ending in a royal capture,
    /// bounds falling. Prints the value, the tree's size and its longest line.
    VerifyProof {
        /// The certificate file (either form).
        file: PathBuf,
        /// Once the file is accepted, write the same proof in the compact form to this file.
        #[arg(long)]
        compact: Option<PathBuf>,
    },
    /// Move what a proof store holds between stores: `export` writes its proven outcomes to
    /// one compact, checksummed file; `import` merges such a file into a store, or what a proof
    /// certificate (`.s4cert`) proves, once its checker accepts it.
    Proofs {
        /// `export` or `import`.
        action: ProofsAction,
        /// The file written or read.
        file: PathBuf,
        /// The proof store (created if missing).
        #[arg(long, default_value = "tables/proofs.redb")]
        store: PathBuf,
        /// Export the unknown outcomes too: `prove` takes each as "analysed", so a store seeded
        /// from the file resumes where this one stopped (export only).
        #[arg(long)]
        with_unknown: bool,
    },
}

/// What `shogi4 proofs` does.
/// A player, by the order of play.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Player {
    /// The player who moves first.
    First,
    /// The other one.
    Second,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ProofsAction {
    /// Store to file.
    Export,
    /// File into store.
    Import,
}

/// A question about one position, answered as the server would.
#[derive(clap::Args)]
struct Query {
    /// Position, SFEN or Fairy-Stockfish FEN (`_` may replace spaces).
    pos: String,
    /// Directory of tables.
    #[arg(long, default_value = "tables")]
    tables: PathBuf,
    /// A proof store (the server's `tables/proofs.redb`, or one of `shogi4 prove`) to build a
    /// search on and to record its results into, as the server does; none if absent or
    /// `none`.
    #[arg(long)]
    store: Option<PathBuf>,
    #[command(flatten)]
    search: SearchArgs,
}

/// What the engine takes as proven.
#[derive(clap::Args)]
struct EngineArgs {
    /// Directory of tables (a closed game's table gives its positions' proven values; the
    /// certificates in its `certificates/` theirs, each checked first).
    #[arg(long, default_value = "tables")]
    tables: PathBuf,
    /// A proof store whose proven outcomes the engine takes as exact; none if absent or
    /// `none`.
    #[arg(long)]
    store: Option<PathBuf>,
}

/// The search budget for positions without a table: the server's defaults.
#[derive(clap::Args)]
struct SearchArgs {
    /// Search budget in milliseconds for a position without a table (0: none).
    #[arg(long, default_value_t = shogi4_search::DEFAULT_QUERY_MS)]
    search_ms: u64,
    /// Search budget in nodes (positions examined).
    #[arg(long, default_value_t = shogi4_search::DEFAULT_MAX_NODES)]
    search_nodes: u64,
    /// Transposition table size in MiB (1 to 65536).
    #[arg(long, default_value_t = shogi4_search::DEFAULT_TABLE_MB, value_parser = table_mb())]
    search_table_mb: usize,
}

impl SearchArgs {
    fn budget(&self) -> commands::probe::SearchBudget {
        commands::probe::SearchBudget {
            limits: shogi4_search::Limits {
                max_depth: shogi4_search::MAX_DEPTH,
                max_nodes: self.search_nodes,
                time: (self.search_ms > 0).then(|| std::time::Duration::from_millis(self.search_ms)),
            },
            table_bytes: self.search_table_mb << 20,
        }
    }
}

/// A transposition table size in MiB, the one range every command accepts (1 to 65,536).
fn table_mb() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65536)
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if commands::cluster::left_to_launcher(&error) => error.exit_code(),
        Err(error) => {
            match json {
                true => eprintln!("{}", serde_json::to_string(&error.problem()).expect("serializable")),
                false => eprintln!("shogi4: {error}"),
            }
            error.exit_code()
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    let json = cli.json;
    match cli.command {
        Command::Perft { depth, pos } => commands::perft::run(&pos, depth, json),
        Command::Count { material } => commands::count::run(&material, json),
        Command::Solve {
            materials,
            all,
            max_pieces,
            out,
            missing,
            max_memory,
            resume,
            checkpoint_secs,
            threads,
            cluster,
            workers,
            hostfile,
            process,
            compress,
        } => {
            let checkpoints = resume.then(|| std::time::Duration::from_secs(checkpoint_secs));
            let place = match (cluster, hostfile, process) {
                (Some(spec), _, _) => Some(commands::cluster::Role::parse_local(&spec)?),
                (None, Some(file), Some(process)) => Some(commands::cluster::Role::from_hostfile(&file, process)?),
                _ => None,
            };
            if let Some(place) = place {
                if all || missing || max_memory.is_some() || materials.len() != 1 {
                    return Err(CliError::Usage(
                        "a cluster solves one closed game: name it, without --all, --missing or --max-memory".into(),
                    ));
                }
                let options = commands::cluster::Options { out, workers, checkpoints, json };
                return commands::cluster::run(&materials[0], place, &options);
            }
            let selection = commands::solve::Selection { materials, all_up_to: max_pieces.filter(|_| all) };
            with_threads(threads, || {
                commands::solve::run(selection, &out, missing, max_memory, checkpoints, compress, json)
            })
        }
        Command::Bench { material, max_memory, threads } => {
            with_threads(threads, || commands::solve::bench(&material, max_memory, json))
        }
        Command::Compress { paths, out, plain, parts, threads } => {
            let form =
                if plain { commands::compress::Form::Plain } else { commands::compress::Form::Compressed { parts } };
            with_threads(threads, || commands::compress::run(&paths, &out, form, json))
        }
        Command::Audit { paths, threads } => with_threads(threads, || commands::audit::run(&paths, json)),
        Command::Info { file } => commands::info::run(&file, json),
        Command::Publish { dir } => commands::info::publish(&dir, json),
        Command::Probe(q) => commands::probe::probe(&q, json),
        Command::Analyse { pos, engine, ms, depth, nodes, threads, lines, table_mb } => {
            let known = commands::analyse::Known::open(&engine.tables, engine.store.as_deref())?;
            let limits = shogi4_play::Limits {
                depth,
                nodes,
                time: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
                threads,
                lines,
                ..shogi4_play::Limits::default()
            };
            commands::analyse::run(&pos, &commands::analyse::Settings { limits, table_mb }, &known, json)
        }
        Command::Uci { engine } => {
            let known = commands::analyse::Known::open(&engine.tables, engine.store.as_deref())?;
            commands::uci::run(std::sync::Arc::new(known)).map_err(|e| CliError::Usage(format!("standard input: {e}")))
        }
        Command::Mainline(q) => commands::probe::mainline(&q, json),
        Command::Search { pos, ms, nodes, depth, table_mb } => {
            let limits = shogi4_search::Limits {
                max_depth: depth,
                max_nodes: nodes,
                time: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
            };
            let budget = commands::probe::SearchBudget { limits, table_bytes: table_mb << 20 };
            commands::probe::search(&pos, &budget, json)
        }
        Command::Prove {
            from,
            positions,
            minutes,
            store,
            ms,
            nodes,
            table_mb,
            max_memory,
            max_store,
            threads,
            steer,
            patience,
            guide_nodes,
            leaf_searches,
            certified,
            hints,
        } => {
            if ms == 0 && nodes == u64::MAX {
                return Err(CliError::Usage("--ms 0 needs --nodes: each position's search needs a budget".into()));
            }
            let limits = shogi4_search::Limits {
                time: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
                ..shogi4_search::Limits::nodes(nodes)
            };
            let time = minutes.map(|m| std::time::Duration::from_secs(m.saturating_mul(60)));
            let stop = commands::prove::Stop { positions, time, memory_bytes: max_memory, store_bytes: max_store };
            match steer {
                None => commands::prove::run(&from, &stop, &store, &limits, table_mb << 20, threads, json),
                Some(player) => {
                    let attacker = match player {
                        Player::First => shogi4_engine::Color::First,
                        Player::Second => shogi4_engine::Color::Second,
                    };
                    let steering = shogi4_search::steered::Steering {
                        leaf_nodes: nodes,
                        leaf_time: limits.time,
                        leaf_searches,
                        patience: (patience > 0).then_some(patience),
                        certified,
                    };
                    let guide = commands::steered::GuideSettings { nodes: guide_nodes, hints };
                    commands::steered::run(
                        &from,
                        attacker,
                        &stop,
                        &store,
                        steering,
                        guide,
                        table_mb << 20,
                        threads,
                        json,
                    )
                }
            }
        }
        Command::Certify { pos, out, ms, nodes, table_mb, store, with, leaves, compact } => {
            let out = commands::certify::Written { path: out, compact };
            let limits = shogi4_search::Limits {
                time: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
                ..shogi4_search::Limits::nodes(nodes)
            };
            let budget = commands::probe::SearchBudget { limits, table_bytes: table_mb << 20 };
            match store {
                None => commands::certify::certify(&pos, &out, &budget, json),
                Some(store) => commands::certify::assemble(&pos, &out, &store, &with, leaves.as_deref(), &budget, json),
            }
        }
        Command::VerifyProof { file, compact } => commands::certify::verify_proof(&file, compact.as_deref(), json),
        Command::Proofs { action: ProofsAction::Export, file, store, with_unknown } => {
            let carried = if with_unknown { Carried::Everything } else { Carried::Proofs };
            commands::prove::export(&store, &file, carried, json)
        }
        Command::Proofs { action: ProofsAction::Import, with_unknown: true, .. } => {
            Err(CliError::Usage("--with-unknown is for export: an import merges whatever the file holds".to_string()))
        }
        Command::Proofs { action: ProofsAction::Import, file, store, .. } => {
            commands::prove::import(&store, &file, json)
        }
    }
}

/// Lets a closed pipe end the program quietly, as it ends every other command-line tool
/// (`shogi4 solve … | head -1`), instead of a panic on the next print: Rust ignores SIGPIPE
/// by default.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; resetting a
    // signal's disposition to its default has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
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
