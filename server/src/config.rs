//! Server configuration from flags and environment variables.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::http::HeaderValue;
use clap::{Parser, ValueEnum};

use crate::downloads::DownloadSettings;
use crate::rate_limit::{parse_trusted_proxies, RateSettings};
use crate::search::{BackgroundSettings, SearchSettings};
use crate::serve::ConnectionLimits;
use crate::{CorsPolicy, ServiceLimits};

/// Why the server could not start: a setting it cannot use, its tables directory, or a
/// system resource it could not have.
#[derive(Debug)]
pub enum StartError {
    /// A flag's (or its variable's) value that cannot be used.
    Setting {
        /// The flag.
        flag: &'static str,
        /// What is wrong with its value.
        detail: String,
    },
    /// The tables directory could not be read.
    Tables(shogi4_tablebase::TableError),
    /// A directory, the runtime, the socket, a signal handler or a thread could not be had.
    System {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

impl StartError {
    /// A system failure while doing `what`.
    pub fn system(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> StartError {
        let what = what.into();
        move |source| StartError::System { what, source }
    }
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Setting { flag, detail } => write!(f, "{flag}: {detail}"),
            StartError::Tables(error) => write!(f, "cannot read tables: {error}"),
            StartError::System { what, source } => write!(f, "cannot {what}: {source}"),
        }
    }
}

impl std::error::Error for StartError {}

/// Serves solved Shogi4 tables over HTTP. Every flag can also be set by the environment
/// variable shown.
#[derive(Parser, Debug)]
#[command(name = "shogi4-server", version, about)]
pub struct Config {
    /// Address to listen on (port 0 picks a free port; the chosen address is logged).
    #[arg(long, env = "SHOGI4_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Directory of `.s4tb` tables.
    #[arg(long, env = "SHOGI4_TABLES", default_value = "tables")]
    pub tables: PathBuf,
    /// Before serving, solve every missing closed game with at most this many non-royal pieces
    /// (3 is the default table set: 31 games, a few minutes on 2 cores).
    #[arg(long, env = "SHOGI4_SOLVE_MISSING", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub solve_missing: u32,
    /// Serve what is there; solve nothing.
    #[arg(long, env = "SHOGI4_NO_SOLVE")]
    pub no_solve: bool,
    /// Skip verifying table checksums at start-up.
    #[arg(long, env = "SHOGI4_SKIP_CHECKSUMS")]
    pub skip_checksums: bool,
    /// MiB of tables held as private in-memory copies (smallest first), immune to anything done
    /// to their files; tables beyond it are served from their files, mapped and guarded.
    #[arg(long, env = "SHOGI4_COPY_BUDGET_MB", default_value_t = crate::TableLoading::default().copy_budget >> 20, value_parser = clap::value_parser!(u64).range(0..=1 << 30))]
    pub copy_budget_mb: u64,
    /// Allowed CORS origins, comma-separated, or `*` for any.
    #[arg(long, env = "SHOGI4_CORS_ORIGINS", default_value = "*")]
    pub cors_origins: String,
    /// Most positions in one `POST /probe`.
    #[arg(long, env = "SHOGI4_MAX_BATCH", default_value_t = ServiceLimits::default().max_batch, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub max_batch: usize,
    /// Largest request body in bytes.
    #[arg(long, env = "SHOGI4_MAX_BODY_BYTES", default_value_t = ServiceLimits::default().max_body_bytes, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 30))]
    pub max_body_bytes: usize,
    /// Time a client has to send a request's whole body, in milliseconds; the body is read
    /// before the request counts against `--concurrency`, and one still arriving gets 408.
    #[arg(long, env = "SHOGI4_BODY_TIMEOUT_MS", default_value_t = millis(ServiceLimits::default().body_timeout), value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub body_timeout_ms: u64,
    /// Longest request URI in bytes.
    #[arg(long, env = "SHOGI4_MAX_URI_BYTES", default_value_t = ServiceLimits::default().max_uri_bytes, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 20))]
    pub max_uri_bytes: usize,
    /// Requests handled at once; more get 429.
    #[arg(long, env = "SHOGI4_CONCURRENCY", default_value_t = ServiceLimits::default().concurrency, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub concurrency: usize,
    /// Per-request time limit in milliseconds.
    #[arg(long, env = "SHOGI4_TIMEOUT_MS", default_value_t = millis(ServiceLimits::default().timeout), value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub timeout_ms: u64,
    /// Search budget per request in milliseconds, for positions no table holds (every
    /// real-game position); a batch shares one budget.
    #[arg(long, env = "SHOGI4_SEARCH_MS", default_value_t = millis(SearchSettings::default().time), value_parser = clap::value_parser!(u64).range(0..=86_400_000))]
    pub search_ms: u64,
    /// Search budget per request in nodes (positions examined).
    #[arg(long, env = "SHOGI4_SEARCH_NODES", default_value_t = SearchSettings::default().nodes, value_parser = clap::value_parser!(u64).range(1..=1 << 48))]
    pub search_nodes: u64,
    /// Searches running at once (default: one per core); 0 turns search off, and positions
    /// without a table get 404.
    #[arg(long, env = "SHOGI4_SEARCH_WORKERS", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
    pub search_workers: Option<usize>,
    /// Transposition table of each search worker, in MiB (the most memory a search holds;
    /// 1 to 65536).
    #[arg(long, env = "SHOGI4_SEARCH_TABLE_MB", default_value_t = SearchSettings::default().table_bytes >> 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65536))]
    pub search_table_mb: usize,
    /// The proof store: what searches established, kept across restarts (an embedded
    /// database; default `proofs.redb` in the tables directory). Give a writable path when
    /// the tables are mounted read-only; `none` keeps nothing.
    #[arg(long, env = "SHOGI4_PROOF_STORE")]
    pub proof_store: Option<PathBuf>,
    /// The proof store's size bound in MiB: past it only proven outcomes are recorded and
    /// nothing is queued; past a quarter more, nothing is recorded. 0: no bound.
    #[arg(long, env = "SHOGI4_PROOF_STORE_MAX_MB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(0..=1 << 30))]
    pub proof_store_max_mb: u64,
    /// Tokens each client gains per second (a table probe costs 1, a mainline 5, a search
    /// 10); 0 turns per-client rate limiting off.
    #[arg(long, env = "SHOGI4_RATE_LIMIT", default_value_t = RateSettings::default().per_second, value_parser = clap::value_parser!(u32).range(0..=10_000_000))]
    pub rate_limit: u32,
    /// Tokens a client can hold: its largest burst.
    #[arg(long, env = "SHOGI4_RATE_BURST", default_value_t = RateSettings::default().burst, value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub rate_burst: u32,
    /// Clients tracked at most (about 150 bytes each); past it the least recently used
    /// is forgotten.
    #[arg(long, env = "SHOGI4_RATE_CLIENTS", default_value_t = RateSettings::default().max_clients, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000_000))]
    pub rate_clients: usize,
    /// Proxies whose X-Forwarded-For / X-Real-IP are believed: comma-separated addresses or
    /// CIDRs (e.g. `127.0.0.1,10.0.0.0/8`). Empty: the peer address is the client.
    #[arg(long, env = "SHOGI4_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// Proven search answers kept in memory.
    #[arg(long, env = "SHOGI4_SEARCH_CACHE", default_value_t = SearchSettings::default().cache_entries, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=100_000_000))]
    pub search_cache: usize,
    /// Threads that search queued positions further (answers that were not exact), at the
    /// lowest OS priority and only while no request search runs; 0: none, nothing queued.
    #[arg(long, env = "SHOGI4_BACKGROUND_WORKERS", default_value_t = BackgroundSettings::default().workers, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
    pub background_workers: usize,
    /// Budget of a queued position's first background search in milliseconds; each later
    /// search of it doubles it (five times at most).
    #[arg(long, env = "SHOGI4_BACKGROUND_MS", default_value_t = millis(BackgroundSettings::default().time), value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub background_ms: u64,
    /// Positions the background queue holds at most (kept in the proof store).
    #[arg(long, env = "SHOGI4_QUEUE_MAX", default_value_t = BackgroundSettings::default().capacity, value_parser = clap::value_parser!(u64).range(0..=1_000_000_000))]
    pub queue_max: u64,
    /// Queued positions one client may have waiting at once.
    #[arg(long, env = "SHOGI4_QUEUE_PER_CLIENT", default_value_t = BackgroundSettings::default().per_client, value_parser = clap::value_parser!(u32).range(0..=1_000_000_000))]
    pub queue_per_client: u32,
    /// Milliseconds a client has to send a request's headers, from connecting or from the end
    /// of its previous response (so also the idle keep-alive timeout).
    #[arg(long, env = "SHOGI4_HEADER_TIMEOUT_MS", default_value_t = millis(ConnectionLimits::default().header_timeout), value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub header_timeout_ms: u64,
    /// Connections open at once; more are closed as soon as they are accepted.
    #[arg(long, env = "SHOGI4_MAX_CONNECTIONS", default_value_t = ConnectionLimits::default().max_connections, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    pub max_connections: usize,
    /// Connections one client address (IPv6: one /64) may hold open at once; trusted
    /// proxies are exempt.
    #[arg(long, env = "SHOGI4_MAX_CONNECTIONS_PER_CLIENT", default_value_t = ConnectionLimits::default().per_client, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    pub max_connections_per_client: usize,
    /// Requests served on one keep-alive connection before it is closed.
    #[arg(long, env = "SHOGI4_MAX_REQUESTS_PER_CONNECTION", default_value_t = ConnectionLimits::default().max_requests, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub max_requests_per_connection: u32,
    /// KiB of table downloads a client may take per second (`GET /files/…`); 0 for no limit.
    #[arg(long, env = "SHOGI4_DOWNLOAD_KIB_PER_SECOND", default_value_t = DownloadSettings::default().kib_per_second, value_parser = clap::value_parser!(u32).range(0..=1 << 30))]
    pub download_kib_per_second: u32,
    /// The slowest reading a table download is sent to, in KiB/s, beyond the stall time; 0 for none.
    #[arg(long, env = "SHOGI4_DOWNLOAD_MIN_KIB_PER_SECOND", default_value_t = DownloadSettings::default().min_kib_per_second, value_parser = clap::value_parser!(u32).range(0..=1 << 30))]
    pub download_min_kib_per_second: u32,
    /// Table downloads running at once, all clients together.
    #[arg(long, env = "SHOGI4_MAX_DOWNLOADS", default_value_t = DownloadSettings::default().max_downloads, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub max_downloads: usize,
    /// Table downloads one client may run at once.
    #[arg(long, env = "SHOGI4_MAX_DOWNLOADS_PER_CLIENT", default_value_t = DownloadSettings::default().max_per_client, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub max_downloads_per_client: usize,
    /// Milliseconds connections get to finish after SIGTERM or SIGINT before they are dropped.
    #[arg(long, env = "SHOGI4_SHUTDOWN_GRACE_MS", default_value_t = millis(ConnectionLimits::default().shutdown_grace), value_parser = clap::value_parser!(u64).range(0..=86_400_000))]
    pub shutdown_grace_ms: u64,
    /// Log format.
    #[arg(long, env = "SHOGI4_LOG_FORMAT", value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,
    /// Print the OpenAPI document and exit.
    #[arg(long)]
    pub print_openapi: bool,
}

/// How log lines look.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LogFormat {
    /// Human-readable.
    Pretty,
    /// One JSON object per line.
    Json,
}

impl Config {
    /// How tables are read in.
    pub fn table_loading(&self) -> crate::TableLoading {
        crate::TableLoading { verify_checksums: !self.skip_checksums, copy_budget: self.copy_budget_mb << 20 }
    }

    /// How connections are bounded.
    pub fn connection_limits(&self) -> Result<ConnectionLimits, StartError> {
        Ok(ConnectionLimits {
            header_timeout: Duration::from_millis(self.header_timeout_ms.max(1)),
            max_connections: self.max_connections.max(1),
            per_client: self.max_connections_per_client.max(1),
            max_requests: self.max_requests_per_connection.max(1),
            trusted: trusted_proxies(&self.trusted_proxies)?,
            shutdown_grace: Duration::from_millis(self.shutdown_grace_ms),
        })
    }

    /// Where the proof store lives, if anywhere.
    pub fn proof_store_path(&self) -> Option<PathBuf> {
        match &self.proof_store {
            Some(path) => shogi4_proofs::named_store(path).map(Path::to_path_buf),
            None => Some(self.tables.join("proofs.redb")),
        }
    }

    /// What one request may cost, and each client.
    pub fn limits(&self) -> Result<ServiceLimits, StartError> {
        let limits = self.limits_unchecked()?;
        // Each search worker holds a transposition table and the engine's smaller one, each
        // background worker a transposition table, made when first needed: one that cannot be
        // had would abort the process at a request, so a total past the memory the system has
        // is refused now, with the reason.
        let search = &limits.search;
        let tables = search.workers as u64 * shogi4_answer::searcher_bytes(search.table_bytes) as u64
            + search.background.workers as u64 * search.table_bytes as u64;
        if let Some(available) = shogi4_tablebase::available_memory().filter(|&available| tables > available) {
            return Err(StartError::Setting {
                flag: "--search-table-mb",
                detail: format!(
                    "{} search and {} background workers with a table of {} MiB each (and the engine's beside each \
                     search worker's) need {} MiB, more than the {} MiB the system has available",
                    search.workers,
                    search.background.workers,
                    search.table_bytes >> 20,
                    tables >> 20,
                    available >> 20
                ),
            });
        }
        Ok(limits)
    }

    fn limits_unchecked(&self) -> Result<ServiceLimits, StartError> {
        Ok(ServiceLimits {
            max_body_bytes: self.max_body_bytes,
            body_timeout: Duration::from_millis(self.body_timeout_ms),
            max_uri_bytes: self.max_uri_bytes,
            max_batch: self.max_batch,
            concurrency: self.concurrency.max(1),
            timeout: Duration::from_millis(self.timeout_ms),
            search: SearchSettings {
                time: Duration::from_millis(self.search_ms),
                nodes: self.search_nodes,
                workers: self.search_workers.unwrap_or(SearchSettings::default().workers),
                table_bytes: self.search_table_mb << 20,
                cache_entries: self.search_cache,
                background: BackgroundSettings {
                    workers: self.background_workers,
                    time: Duration::from_millis(self.background_ms),
                    capacity: self.queue_max,
                    per_client: self.queue_per_client,
                },
            },
            downloads: DownloadSettings {
                kib_per_second: self.download_kib_per_second,
                max_downloads: self.max_downloads,
                max_per_client: self.max_downloads_per_client,
                min_kib_per_second: self.download_min_kib_per_second,
                ..DownloadSettings::default()
            },
            rate: RateSettings {
                per_second: self.rate_limit,
                burst: self.rate_burst.max(1),
                max_clients: self.rate_clients.max(1),
                trusted_proxies: trusted_proxies(&self.trusted_proxies)?,
            },
        })
    }

    /// The CORS policy: `*` alone for any origin, or a comma-separated list of origins.
    pub fn cors_policy(&self) -> Result<CorsPolicy, StartError> {
        if self.cors_origins.trim() == "*" {
            return Ok(CorsPolicy::AnyOrigin);
        }
        let origins = self
            .cors_origins
            .split(',')
            .map(str::trim)
            .map(|o| match o {
                "*" => Err("`*` allows any origin and must stand alone".to_string()),
                "" => Err("an empty origin".to_string()),
                _ => HeaderValue::from_str(o).map_err(|_| format!("invalid CORS origin {o:?}")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|detail| StartError::Setting { flag: "--cors-origins", detail })?;
        Ok(CorsPolicy::Origins(origins))
    }
}

/// `--trusted-proxies` read.
fn trusted_proxies(text: &str) -> Result<Vec<ipnet::IpNet>, StartError> {
    parse_trusted_proxies(text).map_err(|detail| StartError::Setting { flag: "--trusted-proxies", detail: detail.0 })
}

/// A default duration as the milliseconds a flag takes: each flag's default is read from the
/// settings' own `Default`, so that the two never disagree.
fn millis(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::Config;

    /// Every flag that takes a count, a size or a time has a range: 2⁶⁴ − 1 is refused with a
    /// usage error, never taken (where it once made the server panic or allocate without end),
    /// and each default lies inside its range. A new numeric flag without one fails here.
    #[test]
    fn every_numeric_flag_refuses_an_absurd_value() {
        // Flags whose values are not numbers.
        let words = ["bind", "tables", "cors-origins", "proof-store", "trusted-proxies", "log-format"];
        let command = Config::command();
        let mut checked = 0;
        for arg in command.get_arguments() {
            let Some(flag) = arg.get_long() else { continue };
            if words.contains(&flag) || !arg.get_action().takes_values() {
                continue;
            }
            let long = format!("--{flag}");
            let refused = Config::try_parse_from(["shogi4-server", long.as_str(), "18446744073709551615"]);
            assert!(refused.is_err(), "{long} takes 2^64 - 1");
            let defaults = Config::try_parse_from(["shogi4-server"]);
            assert!(defaults.is_ok(), "{long}: {:?}", defaults.err());
            checked += 1;
        }
        assert!(checked >= 25, "only {checked} numeric flags checked");
    }
}
