//! `shogi4-server`: builds missing tables if asked, maps them, and serves the API until
//! SIGTERM or SIGINT.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use clap::Parser;
use shogi4_answer::{Certified, Check, Served, CERTIFICATES};
use shogi4_engine::Material;
use shogi4_proofs::{Opened, Origin, ProofStore};
use shogi4_server::config::{Config, LogFormat, StartError};
use shogi4_server::search::SearchService;
use shogi4_server::serve::serve;
use shogi4_server::{app, openapi, AppState};
use shogi4_tablebase::{Progress, SolveEvent, SolveMode, TableDir};

/// mimalloc: every answer allocates a few dozen small strings (each move's SFEN, FEN and
/// notation) and a body buffer; glibc's malloc and free took a tenth of the CPU under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let config = Config::parse();
    if config.print_openapi {
        print!("{}", openapi::spec_json());
        return ExitCode::SUCCESS;
    }
    init_logging(config.log_format);
    match run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("shogi4-server: {message}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tower_http=info"));
    // Colours only for a person at a terminal, not for a log file or a collector.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match format {
        LogFormat::Pretty => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
    // A panic (caught: a handler's becomes a 500, the proof store's a refused operation) is
    // logged as one event in the chosen format, with where it happened, not printed as plain
    // text that would break a JSON log.
    std::panic::set_hook(Box::new(log_panic));
}

/// Logs a panic as one tracing event: where, and its message.
fn log_panic(info: &std::panic::PanicHookInfo) {
    let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_default();
    // Not `%message`: that field would replace the event's own message.
    tracing::error!(%location, panic = %message, "a panic, caught");
}

/// The file of published proofs the server merges into its store at start-up, in the tables
/// directory.
const OPENING_PROOFS: &str = "opening.proofs";

fn run(config: Config) -> Result<(), StartError> {
    let cors_policy = config.cors_policy()?;
    let limits = config.limits()?;
    let connection_limits = config.connection_limits()?;
    std::fs::create_dir_all(&config.tables)
        .map_err(StartError::system(format!("create {}", config.tables.display())))?;
    let state = AppState::load(&config.tables, config.table_loading(), limits).map_err(StartError::Tables)?;
    tracing::info!(tables = state.tables().tables.len(), dir = %config.tables.display(), "tables loaded");
    let state = match config.proof_store_path() {
        None => state,
        Some(path) => match ProofStore::open_unchecked(&path) {
            Ok((mut store, opened)) => {
                store.set_cap((config.proof_store_max_mb > 0).then_some(config.proof_store_max_mb << 20));
                log_opened(&path, &opened);
                tracing::info!(store = %path.display(), "proof store open; checked in the background");
                state.with_proof_store(store)
            }
            Err(error) => {
                tracing::warn!(%error, "no proof store: search results are kept in memory only");
                state
            }
        },
    };
    let search = Arc::clone(&state.search);
    let runtime = tokio::runtime::Runtime::new().map_err(StartError::system("start the runtime"))?;
    let workers = runtime.block_on(async {
        // Listen for signals before announcing the address, so that a client (or a test) that
        // signals right after its first answer is never met by the default action.
        let shutdown = shutdown_signal()?;
        let listener = tokio::net::TcpListener::bind(config.bind)
            .await
            .map_err(StartError::system(format!("bind {}", config.bind)))?;
        let address = listener.local_addr().map_err(StartError::system("read the bound address"))?;
        let state = Arc::new(state);
        tokio::spawn(reload_on_hangup(Arc::clone(&state)));
        // Marked as solving before the address is announced: no client sees a half state.
        if !config.no_solve {
            solve_missing_in_background(&config, Arc::clone(&state));
        }
        let (search, store_path, tables) =
            (Arc::clone(&state.search), config.proof_store_path(), config.tables.clone());
        let upkeep = std::thread::Builder::new()
            .name("proof-store-upkeep".into())
            .spawn(move || check_and_merge(&search, store_path.as_deref(), &tables))
            .map_err(StartError::system("start the proof store's check"))?;
        let (search, certificates) = (Arc::downgrade(&state.search), config.tables.join(CERTIFICATES));
        std::thread::Builder::new()
            .name("certificates".into())
            .spawn(move || serve_certificates(search, certificates))
            .map_err(StartError::system("start the certificates' check"))?;
        // None without a writable proof store: they would have nothing to take or keep.
        let mut workers = vec![upkeep];
        for worker in 0..state.search.background_workers() {
            let search = Arc::clone(&state.search);
            let handle = std::thread::Builder::new()
                .name(format!("background-search-{worker}"))
                .spawn(move || search.work_off_the_queue())
                .map_err(StartError::system("start a background search"))?;
            workers.push(handle);
        }
        tracing::info!(%address, "listening");
        println!("listening on http://{address}");
        serve(listener, app(state, &cors_policy), connection_limits, shutdown).await;
        Ok::<_, StartError>(workers)
    })?;
    // A search a hung-up client left running keeps its blocking thread until its budget ends,
    // which may be long after the grace period; dropping the runtime would wait for it. The
    // store is crash-safe (each record is its own transaction), so such searches are left.
    runtime.shutdown_timeout(LEFTOVER_SEARCH_WAIT);
    close_store(search, workers);
    tracing::info!("shut down");
    Ok(())
}

/// How long shutdown waits for the background threads (searches, the store's check) to end.
const BACKGROUND_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Ends the background searches, commits what searches handed to the store's writer, and
/// closes the store once nothing holds it, so that the file is left as after a clean close
/// (a store left open needs redb's repair before it can be read, and cannot be read-only).
fn close_store(search: Arc<SearchService>, workers: Vec<std::thread::JoinHandle<()>>) {
    search.stop_background();
    let deadline = std::time::Instant::now() + BACKGROUND_WAIT;
    while workers.iter().any(|w| !w.is_finished()) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    search.finish_writing();
    let open = search.store().is_some();
    // `store()` handed out a copy: the one left is the service's, and the threads' if any.
    match Arc::try_unwrap(search) {
        Ok(service) if open => {
            drop(service);
            tracing::info!("proof store closed");
        }
        Ok(_) => {}
        Err(_) => tracing::warn!("proof store left open: a search or the store's check still holds it"),
    }
}

/// What opening (or walking) the proof store found, in the log.
fn log_opened(path: &std::path::Path, opened: &Opened) {
    match opened {
        Opened::Rebuilt { aside, salvaged, lost } => tracing::warn!(store = %path.display(),
            damaged = %aside.display(), salvaged, lost = ?lost, "proof store was damaged: moved aside, its readable records carried over"),
        Opened::ReadOnly => tracing::warn!(store = %path.display(), "proof store not writable: served read-only"),
        Opened::Fine => {}
    }
}

/// Runs while the server answers, since each step takes time in proportion to a file's size:
/// walks the proof store (damage begins it anew, with what was readable) and merges the proofs
/// published beside the tables. Merging again changes nothing.
fn check_and_merge(search: &SearchService, store_path: Option<&std::path::Path>, tables: &std::path::Path) {
    let Some(store) = search.store() else { return };
    if let Some(path) = store_path {
        match store.check_and_repair() {
            Ok(checked) => log_opened(path, &checked),
            Err(error) => tracing::warn!(%error, "proof store check failed"),
        }
    }
    let published = tables.join(OPENING_PROOFS);
    if !store.is_read_only() && published.exists() {
        match store.import(&published, Origin::Published) {
            Ok(imported) => tracing::info!(file = %published.display(), records = imported.records,
                changed = imported.changed, "published proofs merged into the store"),
            Err(error) => tracing::warn!(%error, "published proofs not merged"),
        }
    }
    tracing::info!("proof store checked; published proofs merged");
}

/// Checks the published certificates by the rules while the server answers (a proof of
/// millions of positions takes half a minute), then serves what they prove. They are not
/// copied into the proof store: their index answers for them, above the store. The service is
/// held weakly, so that shutdown neither waits for the check nor leaves the store open for it.
fn serve_certificates(search: std::sync::Weak<SearchService>, dir: std::path::PathBuf) {
    let (certified, report) = Certified::load(&dir);
    for (file, loaded) in report {
        let file = file.display();
        match loaded {
            Ok(Served { positions, check: Check::Checked }) => {
                tracing::info!(%file, positions, "certificate checked by the rules; its index kept")
            }
            Ok(Served { positions, check: Check::CheckedNotKept(why) }) => {
                tracing::info!(%file, positions, %why, "certificate checked by the rules; its index not kept")
            }
            Ok(Served { positions, check: Check::Kept }) => {
                tracing::info!(%file, positions, "certificate read from the index its check kept")
            }
            Err(error) => tracing::warn!(%file, %error, "certificate not served"),
        }
    }
    tracing::info!(positions = certified.len(), "certificates served");
    if let Some(search) = search.upgrade() {
        search.set_certified(certified);
    }
}

/// How long shutdown waits, after the connections' grace period, for searches still running.
const LEFTOVER_SEARCH_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Solves the closed games of the default set that have no valid table yet, on a thread of
/// its own while the server answers: each table joins the served set as soon as it is
/// written, and until the last one is, `/health` says `solving`.
fn solve_missing_in_background(config: &Config, state: Arc<AppState>) {
    let store = TableDir::new(&config.tables);
    let unsolved = store.unsolved(&Material::all_up_to(config.solve_missing), !config.skip_checksums);
    for (material, error) in &unsolved {
        if let Some(error) = error {
            tracing::warn!(%material, %error, "table fails validation; solving it again");
        }
    }
    let pending: Vec<Material> = unsolved.into_iter().map(|(material, _)| material).collect();
    if pending.is_empty() {
        return;
    }
    tracing::info!(count = pending.len(), dir = %config.tables.display(), "solving missing tables in the background");
    state.set_solving(pending.iter().copied().collect());
    std::thread::spawn(move || {
        let total = pending.len();
        let mut done = 0;
        // Checkpointed: a restart in the middle of a long solve resumes it.
        let checkpoints = Some(std::time::Duration::from_secs(60));
        let result = store.solve(&pending, SolveMode::Replace, None, checkpoints, &LogProgress::default(), |event| {
            if let SolveEvent::Solved(solution, path) = event {
                done += 1;
                let material = solution.table.material;
                tracing::info!(
                    "[{done}/{total}] {material}: {} positions solved in {:.1} s -> {}",
                    solution.table.statistics.positions,
                    solution.seconds,
                    path.display()
                );
                if let Err(error) = state.reload() {
                    tracing::error!(%error, "cannot reload the tables after solving {material}");
                }
                state.solved(material);
            }
        });
        if let Err(error) = result {
            tracing::error!(%error, "solving the missing tables failed");
            state.solve_failed(error.to_string());
        }
    });
}

/// Logs a solver phase's progress every 25%.
#[derive(Default)]
struct LogProgress {
    phase: Mutex<(String, u64)>,
    done: AtomicU64,
    logged_quarter: AtomicU64,
}

impl Progress for LogProgress {
    fn phase(&self, name: &str, total: u64) {
        *self.phase.lock().expect("not poisoned") = (name.to_string(), total.max(1));
        self.done.store(0, Ordering::Relaxed);
        self.logged_quarter.store(0, Ordering::Relaxed);
    }

    fn advance(&self, units: u64) {
        let done = self.done.fetch_add(units, Ordering::Relaxed) + units;
        let (name, total) = self.phase.lock().expect("not poisoned").clone();
        let quarter = (4 * done / total).min(4);
        if quarter > self.logged_quarter.fetch_max(quarter, Ordering::Relaxed) && total > 1_000_000 {
            tracing::info!("{name}: {}%", quarter * 25);
        }
    }

    fn finish_phase(&self) {}
}

/// On every SIGHUP, re-reads the tables directory and swaps the new set in (requests in
/// flight finish on the old one).
async fn reload_on_hangup(state: Arc<AppState>) {
    #[cfg(unix)]
    {
        let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
            tracing::warn!("cannot listen for SIGHUP: tables will not be reloaded");
            return;
        };
        while hangups.recv().await.is_some() {
            let state = Arc::clone(&state);
            match tokio::task::spawn_blocking(move || state.reload()).await {
                Ok(Ok(set)) => {
                    tracing::info!(tables = set.tables.len(), rejected = set.rejected.len(), "tables reloaded")
                }
                Ok(Err(error)) => tracing::error!(%error, "reload failed; serving the previous tables"),
                Err(error) => tracing::error!(%error, "reload failed; serving the previous tables"),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = state;
}

/// Resolves on SIGINT or SIGTERM; both handlers are installed when this is called.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, StartError> {
    #[cfg(unix)]
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(StartError::system("listen for SIGTERM"))?;
    #[cfg(unix)]
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(StartError::system("listen for SIGINT"))?;
    Ok(async move {
        #[cfg(unix)]
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = terminate.recv() => {},
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutdown signal received; finishing requests in flight");
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// Log lines written into memory.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A caught panic under `--log-format json` is one JSON line, with its message and place,
    /// and nothing else is written (the default hook's plain text would break the log).
    #[test]
    fn a_caught_panic_is_one_json_log_line() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt().json().with_writer(move || writer.clone()).finish();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(super::log_panic));
        let caught = tracing::subscriber::with_default(subscriber, || {
            std::panic::catch_unwind(|| panic!("the store met a damaged page {}", 7))
        });
        std::panic::set_hook(previous);
        assert!(caught.is_err());
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        let event: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(event["level"], "ERROR", "{event}");
        assert_eq!(event["fields"]["message"], "a panic, caught", "{event}");
        assert_eq!(event["fields"]["panic"], "the store met a damaged page 7", "{event}");
        assert!(event["fields"]["location"].as_str().unwrap().contains("main.rs"), "{event}");
    }
}
