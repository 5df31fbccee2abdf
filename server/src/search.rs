//! Answers for positions that no table holds (every real-game position): proof searches run
//! off the async workers, a fixed number at a time, each within the per-request budget and
//! over a transposition table of fixed size. The tables are kept between requests (what
//! they hold is true of the positions alone), so repeated and neighbouring questions get
//! answered from what earlier searches established; exact answers are also cached whole.
//!
//! The tablebase grows with use: an answer that is not exact queues its position (and its
//! unfinished moves' positions) in the proof store, and background workers search the queue
//! with growing budgets, so that a later query finds more proven. The queue is bounded, one
//! entry per position, and each client may hold only a share of it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shogi4_answer::{Certified, Knowledge, Searcher};
use shogi4_api::{MainlineResponse, ProbeResponse};
use shogi4_engine::Position;
use shogi4_proofs::ProofStore;
use shogi4_search::{Analysis, Cancel, Limits, Outcome, Recall, Search, MAX_DEPTH};

use crate::error::ApiError;
use crate::recorder::{Recorder, StoreHealth};

/// How searches are bounded.
#[derive(Clone, Debug)]
pub struct SearchSettings {
    /// Wall-clock budget of one request's search (a batch shares one budget).
    pub time: Duration,
    /// Node budget of one request's search.
    pub nodes: u64,
    /// Searches running at once (each on a blocking thread); 0 turns search off.
    pub workers: usize,
    /// Bytes of each worker's transposition table.
    pub table_bytes: usize,
    /// Proven answers kept in memory.
    pub cache_entries: usize,
    /// The background searches of queued positions.
    pub background: BackgroundSettings,
}

/// How the queue of positions to search further is bounded and worked off.
#[derive(Clone, Debug)]
pub struct BackgroundSettings {
    /// Threads searching queued positions (at the lowest OS priority); 0: none.
    pub workers: usize,
    /// Budget of a queued position's first background search; each later one doubles it.
    pub time: Duration,
    /// Entries the queue holds at most.
    pub capacity: u64,
    /// Entries one client may have waiting at once.
    pub per_client: u32,
}

impl Default for BackgroundSettings {
    fn default() -> BackgroundSettings {
        BackgroundSettings { workers: 1, time: Duration::from_secs(1), capacity: 10_000, per_client: 200 }
    }
}

impl Default for SearchSettings {
    fn default() -> SearchSettings {
        SearchSettings {
            time: Duration::from_millis(shogi4_search::DEFAULT_QUERY_MS),
            nodes: shogi4_search::DEFAULT_MAX_NODES,
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            table_bytes: shogi4_search::DEFAULT_TABLE_MB << 20,
            cache_entries: 10_000,
            background: BackgroundSettings::default(),
        }
    }
}

impl SearchSettings {
    /// The search limits for `share` of what is left of one request's budget (a batch splits
    /// it among the entries it has still to search), and no later than `deadline`. An entry
    /// left less than [`SHALLOW_TIME`] gets [`SHALLOW_NODES`] nodes instead: a shallow answer,
    /// whose `no_result_within` says how far it reached, rather than none.
    fn limits(&self, share: u32, deadline: Instant) -> Limits {
        let share = share.max(1);
        let left = deadline.saturating_duration_since(Instant::now());
        let time = (self.time / share).min(left / share);
        let max_nodes = self.nodes / u64::from(share);
        if time < SHALLOW_TIME {
            return Limits { max_depth: MAX_DEPTH, max_nodes: max_nodes.min(SHALLOW_NODES), time: None };
        }
        Limits { max_depth: MAX_DEPTH, max_nodes, time: Some(time) }
    }

    /// The deadline of a request that searches once: up to one budget waiting for a worker,
    /// one searching.
    pub fn single_deadline(&self) -> Instant {
        Instant::now() + self.time * 2
    }

    /// The deadline of a batch: its waits and searches together within one budget.
    pub fn batch_deadline(&self) -> Instant {
        Instant::now() + self.time
    }
}

/// Each client's entries in the background queue, within its share.
struct Shares {
    by_owner: Mutex<HashMap<u128, u32>>,
    per_client: u32,
    capacity: u64,
}

impl Shares {
    /// Queues `entries` (key, SFEN) at `level` for `owner`, as many as its share has room for,
    /// and counts them to it.
    fn enqueue(&self, store: &ProofStore, health: &StoreHealth, entries: &[(u128, String)], level: u32, owner: u128) {
        // Held across the commit, so that two requests of one client cannot both take the
        // same room.
        let mut by_owner = self.by_owner.lock().expect("not poisoned");
        let waiting = by_owner.entry(owner).or_insert(0);
        let room = self.per_client.saturating_sub(*waiting) as usize;
        let entries: Vec<(u128, &str)> = entries.iter().take(room).map(|(k, s)| (*k, s.as_str())).collect();
        match store.enqueue(&entries, level, owner, self.capacity) {
            Ok(added) => *waiting += added as u32,
            Err(error) => health.failed(&error, "proof store unwritable; nothing queued"),
        }
        if *waiting == 0 {
            by_owner.remove(&owner);
        }
        drop(by_owner);
        publish_queue_length(store);
    }

    /// Counts an entry taken off the queue off its owner's share.
    fn taken(&self, owner: u128) {
        let mut by_owner = self.by_owner.lock().expect("not poisoned");
        if let Some(waiting) = by_owner.get_mut(&owner) {
            *waiting = waiting.saturating_sub(1);
            if *waiting == 0 {
                by_owner.remove(&owner);
            }
        }
    }
}

/// Queue entries of `positions`: key and SFEN.
fn entries_of(positions: &[Position]) -> Vec<(u128, String)> {
    positions.iter().map(|p| (p.key(), p.to_sfen())).collect()
}

/// Below this share of a budget, an entry of a batch is searched on [`SHALLOW_NODES`].
const SHALLOW_TIME: Duration = Duration::from_millis(2);
/// The nodes of an entry whose batch has spent its budget: a few milliseconds of search.
const SHALLOW_NODES: u64 = 5_000;

/// The searchers, the limit on how many run at once, and the cache of proven answers.
pub struct SearchService {
    settings: SearchSettings,
    /// The search workers, handed out fairly among clients.
    workers: Arc<crate::fair::FairPool>,
    /// Idle searchers; created on first need, at most `workers` of them.
    idle: Mutex<Vec<Searcher>>,
    cache: Mutex<ProvenCache>,
    /// What earlier searches established, kept across restarts.
    store: Option<Arc<ProofStore>>,
    /// Writes what searches establish into the store, if it takes writes.
    recorder: Option<Recorder>,
    /// The published certificates' positions (empty until they are checked, after start-up).
    certified: std::sync::RwLock<Arc<Certified>>,
    /// Request searches running or waiting for a worker: the background searches start
    /// none while there are any.
    in_flight: AtomicUsize,
    /// Queue entries waiting, by the client whose query queued them.
    queued_by: Arc<Shares>,
    /// Whether the store failed last time: its errors are logged when it starts failing and
    /// when it recovers, not on every search.
    store_health: Arc<StoreHealth>,
    /// Set at shutdown: the background searches end (the one running is cancelled).
    stopping: Cancel,
}

impl SearchService {
    /// A service with these settings, backed by a proof store if given; no memory is taken
    /// until the first search.
    pub fn new(settings: SearchSettings, store: Option<ProofStore>) -> SearchService {
        let cache = ProvenCache::new(settings.cache_entries);
        // The queue outlives restarts: its length is published from the start, not only once
        // something is queued or taken.
        if let Some(store) = &store {
            publish_queue_length(store);
        }
        let store = store.map(Arc::new);
        let recorder =
            store.as_ref().filter(|store| !store.is_read_only()).map(|store| Recorder::start(Arc::clone(store)));
        // Each client's entries already queued count against its share after a restart too.
        let waiting = store.as_ref().and_then(|store| match store.queued_by_owner() {
            Ok(counts) => Some(counts),
            Err(error) => {
                tracing::warn!(%error, "the queue's entries could not be counted by client");
                None
            }
        });
        let queued_by = Arc::new(Shares {
            by_owner: Mutex::new(waiting.unwrap_or_default()),
            per_client: settings.background.per_client,
            capacity: settings.background.capacity,
        });
        SearchService {
            recorder,
            certified: std::sync::RwLock::default(),
            workers: crate::fair::FairPool::new(settings.workers),
            idle: Mutex::new(Vec::new()),
            cache: Mutex::new(cache),
            settings,
            store,
            in_flight: AtomicUsize::new(0),
            queued_by,
            store_health: Arc::default(),
            stopping: Cancel::default(),
        }
    }

    /// Whether searches are allowed at all.
    pub fn enabled(&self) -> bool {
        self.settings.workers > 0
    }

    /// The settings in force.
    pub fn settings(&self) -> &SearchSettings {
        &self.settings
    }

    /// Threads that search queued positions further: the configured number, or none without a
    /// proof store to queue in and keep their results.
    pub fn background_workers(&self) -> usize {
        if self.writable_store().is_some() {
            self.settings.background.workers
        } else {
            0
        }
    }

    /// The probe answer for a position no table holds, searched within `1 / share` of the
    /// request budget, waiting and searching no later than `deadline` (past it: `search-busy`
    /// at once). An answer that is not exact queues the position, and its moves' positions
    /// that are not exact either, for the background searches, as `client`'s.
    pub async fn probe(
        self: &Arc<Self>,
        position: Position,
        share: u32,
        deadline: Instant,
        client: IpAddr,
    ) -> Result<ProbeResponse, ApiError> {
        let key = position.key();
        if let Some(answer) = self.cache.lock().expect("not poisoned").get(key) {
            return Ok(answer);
        }
        let service = Arc::clone(self);
        let answer = self
            .run(client, deadline, move |search| {
                let limits = service.settings.limits(share, deadline);
                let certified = service.certified();
                let store = service.stored();
                let known = Knowledge::new(&certified, &store);
                let (searched, analysis) = shogi4_answer::probe(search, &position, &limits, &known);
                count_conflicts(&known);
                if searched.conflict {
                    metrics::counter!("proof_conflicts_total", "at" => "answer").increment(1);
                    tracing::warn!(position = %position.to_sfen(), "recalled proofs contradict each other; answered from the rules alone");
                }
                service.keep(searched.facts);
                service.queue_unfinished(&position, &analysis, client);
                searched.answer
            })
            .await?;
        // Only exact answers are final; a bounded or unknown one may be improved by a later
        // search, which should then be asked.
        if answer.verdict.dtw.is_some() {
            self.cache.lock().expect("not poisoned").put(key, answer.clone());
        }
        Ok(answer)
    }

    /// The line of best play, when the search proves the position within the budget.
    pub async fn mainline(self: &Arc<Self>, position: Position, client: IpAddr) -> Result<MainlineResponse, ApiError> {
        let deadline = self.settings.single_deadline();
        let service = Arc::clone(self);
        self.run(client, deadline, move |search| {
            let limits = service.settings.limits(1, deadline);
            let certified = service.certified();
            let store = service.stored();
            let known = Knowledge::new(&certified, &store);
            let searched = shogi4_answer::mainline(search, &position, &limits, &known);
            count_conflicts(&known);
            service.keep(searched.facts);
            searched.answer
        })
        .await
    }

    /// The proof store as a search recalls it (nothing without one).
    fn stored(&self) -> Stored<'_> {
        Stored { store: self.store.as_deref(), health: &self.store_health }
    }

    /// The store, if there is one that takes writes (a read-only one is only read).
    fn writable_store(&self) -> Option<&ProofStore> {
        self.store.as_deref().filter(|store| !store.is_read_only())
    }

    /// Keeps what a search established.
    fn keep(&self, facts: Vec<(u128, Outcome)>) {
        if let Some(recorder) = &self.recorder {
            recorder.keep(facts);
        }
    }

    /// Queues the position and its moves' positions whose outcomes are not exact, within the
    /// client's share of the queue.
    fn queue_unfinished(&self, position: &Position, analysis: &Analysis, client: IpAddr) {
        let Some(store) = self.writable_store() else { return };
        if self.settings.background.workers == 0 {
            return;
        }
        let unfinished = |outcome: Outcome| !matches!(outcome, Outcome::Proven(_));
        let mut positions = Vec::new();
        if unfinished(analysis.outcome) {
            positions.push(*position);
        }
        positions.extend(analysis.moves.iter().filter(|m| unfinished(m.outcome)).filter_map(|m| m.result));
        if positions.is_empty() {
            return;
        }
        // On the store's writer, not on this search's worker, which is free at once: queueing
        // commits, and a commit waits for the disk.
        let (entries, owner) = (entries_of(&positions), owner_of(client));
        let (shares, health) = (Arc::clone(&self.queued_by), Arc::clone(&self.store_health));
        match &self.recorder {
            Some(recorder) => recorder.later(Box::new(move |store| shares.enqueue(store, &health, &entries, 0, owner))),
            None => shares.enqueue(store, &health, &entries, 0, owner),
        }
    }

    /// Queues `positions` at `level` for `owner`, as many as its share has room for, and
    /// counts them to it.
    fn enqueue(&self, store: &ProofStore, positions: &[Position], level: u32, owner: u128) {
        self.queued_by.enqueue(store, &self.store_health, &entries_of(positions), level, owner);
    }

    /// Counts an entry taken off the queue off its owner's share.
    fn taken(&self, owner: u128) {
        self.queued_by.taken(owner);
    }

    /// Searches queued positions, one at a time, as long as the process lives: at the lowest
    /// OS priority, never starting while a request search runs or waits, each with twice the
    /// budget of its last one; what it establishes goes into the store. Call on a thread of
    /// its own.
    pub fn work_off_the_queue(&self) {
        let Some(store) = self.writable_store() else { return };
        lower_this_threads_priority();
        let background = &self.settings.background;
        let mut search = Search::new(self.settings.table_bytes);
        search.watch(Some(self.stopping.clone()));
        while !self.stopping.is_cancelled() {
            if self.in_flight.load(Ordering::Relaxed) > 0 {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            let entry = match store.take_queued() {
                Ok(Some(entry)) => entry,
                Ok(None) => {
                    publish_queue_length(store);
                    std::thread::sleep(Duration::from_millis(250));
                    continue;
                }
                Err(error) => {
                    tracing::warn!(%error, "proof store unreadable; background searches pause");
                    std::thread::sleep(Duration::from_secs(5));
                    continue;
                }
            };
            self.taken(entry.owner);
            // Only positions this server queued are in the queue; anything else is skipped.
            let Ok(position) = Position::parse(&entry.sfen) else { continue };
            if position.key() != entry.key {
                continue;
            }
            let level = entry.level.min(MAX_LEVEL);
            let limits =
                Limits { max_depth: MAX_DEPTH, max_nodes: u64::MAX, time: Some(background.time * (1u32 << level)) };
            let (certified, stored) = (self.certified(), self.stored());
            let known = Knowledge::new(&certified, &stored);
            let (analysis, before) = search.analyse_recalling(&position, &limits, &known);
            count_conflicts(&known);
            if self.stopping.is_cancelled() {
                // Cut short by the shutdown: the entry is back in the queue at the next start.
                self.enqueue(store, &[position], entry.level, entry.owner);
                break;
            }
            self.keep(analysis.facts(&position));
            metrics::counter!("background_searches_total").increment(1);
            if analysis.outcome.is_settled() && !before.is_some_and(Outcome::is_settled) {
                metrics::counter!("background_proofs_total").increment(1);
            }
            if !matches!(analysis.outcome, Outcome::Proven(_)) && entry.level < MAX_LEVEL {
                self.enqueue(store, &[position], entry.level + 1, entry.owner);
            } else {
                publish_queue_length(store);
            }
        }
    }

    /// Takes the published certificates' positions as known from now on.
    pub fn set_certified(&self, certified: Certified) {
        *self.certified.write().expect("not poisoned") = Arc::new(certified);
        // Answers given before the certificates were known may rest on records they overrule.
        *self.cache.lock().expect("not poisoned") = ProvenCache::new(self.settings.cache_entries);
    }

    fn certified(&self) -> Arc<Certified> {
        Arc::clone(&self.certified.read().expect("not poisoned"))
    }

    /// The proof store, if there is one.
    pub fn store(&self) -> Option<Arc<ProofStore>> {
        self.store.clone()
    }

    /// Ends the background searches (the running ones are cancelled, and their results are
    /// not kept): for shutdown, so that the store can be closed.
    pub fn stop_background(&self) {
        self.stopping.cancel();
    }

    /// Commits what searches have handed over and not yet written; for shutdown.
    pub fn finish_writing(&self) {
        if let Some(recorder) = &self.recorder {
            recorder.finish();
        }
    }

    /// Runs `work` on a blocking thread with an idle searcher, once a worker is free for
    /// `client` (fairly: see [`crate::fair`]). A request that cannot get a worker within its
    /// own search budget, or by `deadline`, is refused (503 `search-busy`) rather than queued
    /// without end; one past its deadline gets a worker only if one is free at once.
    async fn run<T: Send + 'static>(
        self: &Arc<Self>,
        client: IpAddr,
        deadline: Instant,
        work: impl FnOnce(&mut Searcher) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        let in_flight = InFlight::enter(self);
        // Past the deadline (a batch that spent its budget) a free worker is still taken at
        // once: `search-busy` means that every worker stayed busy, and nothing else.
        let permit = self.workers.take(client, wait).await.ok_or(ApiError::SearchBusy)?;
        let service = Arc::clone(self);
        // A request that is dropped (its client hung up, it timed out, the server shuts down)
        // cancels its search, which then ends at its next clock reading.
        let cancel = CancelOnDrop(Cancel::default());
        let watched = cancel.0.clone();
        // The permit and the count go with the search itself, not with the request: until the
        // cancelled search has actually ended, its worker is not free, nor the background
        // allowed to start.
        tokio::task::spawn_blocking(move || {
            let _held = (permit, in_flight);
            let mut search = service
                .idle
                .lock()
                .expect("not poisoned")
                .pop()
                .unwrap_or_else(|| Searcher::new(service.settings.table_bytes));
            search.watch(Some(watched));
            let result = work(&mut search);
            search.watch(None);
            service.idle.lock().expect("not poisoned").push(search);
            result
        })
        .await
        .map_err(|e| ApiError::Internal(format!("search task failed: {e}")))
    }
}

/// Cancels a request's search when the request is dropped before it ends.
struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// The background budget stops doubling after this many searches of one position (32 times
/// the first); a position still unfinished then leaves the queue.
pub(crate) const MAX_LEVEL: u32 = 5;

/// Counts a request search while it lives.
struct InFlight(Arc<SearchService>);

impl InFlight {
    fn enter(service: &Arc<SearchService>) -> InFlight {
        service.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(Arc::clone(service))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Sets the queue-length gauge from the store.
fn publish_queue_length(store: &ProofStore) {
    if let Ok(length) = store.queue_len() {
        metrics::gauge!("search_queue_length").set(length as f64);
    }
}

/// A client as the queue's owner number: its (grouped) address as 128 bits.
fn owner_of(client: IpAddr) -> u128 {
    match client {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// Background searches yield the cores to everything else: the calling thread gets the
/// lowest scheduling priority (on Linux, a thread's nice value is its own).
fn lower_this_threads_priority() {
    // SAFETY: plain system calls on the calling thread; failure leaves the priority as it was.
    unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::id_t;
        if libc::setpriority(libc::PRIO_PROCESS, thread, 19) != 0 {
            tracing::debug!("background search priority left unchanged");
        }
    }
}

/// Counts the store's records that a certificate overruled while `known` was recalled.
fn count_conflicts(known: &Knowledge) {
    let conflicts = known.conflicts();
    if conflicts > 0 {
        metrics::counter!("proof_conflicts_total", "at" => "store").increment(conflicts);
        tracing::debug!(conflicts, "proof store records contradict a certificate; the certificates' values kept");
    }
}

/// The proof store as a search recalls it: one that fails is logged once (until it recovers)
/// and then counts as knowing nothing.
struct Stored<'a> {
    store: Option<&'a ProofStore>,
    health: &'a StoreHealth,
}

impl Recall for Stored<'_> {
    fn recall(&self, positions: &[Position]) -> Vec<Option<Outcome>> {
        let Some(store) = self.store else { return vec![None; positions.len()] };
        match store.recall(positions) {
            Ok(stored) => {
                self.health.fine();
                stored
            }
            Err(error) => {
                self.health.failed(&error, "proof store unreadable; searching without it");
                vec![None; positions.len()]
            }
        }
    }
}

/// Proven answers, bounded: two generations of at most half the capacity each; when the
/// young one fills, the old one is dropped. Lookups promote nothing: simple and bounded.
struct ProvenCache {
    capacity: usize,
    young: HashMap<u128, ProbeResponse>,
    old: HashMap<u128, ProbeResponse>,
}

impl ProvenCache {
    fn new(capacity: usize) -> ProvenCache {
        ProvenCache { capacity, young: HashMap::new(), old: HashMap::new() }
    }

    fn get(&self, key: u128) -> Option<ProbeResponse> {
        self.young.get(&key).or_else(|| self.old.get(&key)).cloned()
    }

    fn put(&mut self, key: u128, answer: ProbeResponse) {
        if self.capacity == 0 {
            return;
        }
        if self.young.len() >= self.capacity.div_ceil(2) {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(key, answer);
    }
}
