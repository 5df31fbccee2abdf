//! Answers for positions that no table holds (every real-game position): proof searches run
//! off the async workers, a fixed number at a time, each within the per-request budget and
//! over a transposition table of fixed size. The tables are kept between requests (what
//! they hold is true of the positions alone), so repeated and neighbouring questions get
//! answered from what earlier searches established; proven answers are also cached whole.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shogi4_api::{MainlineResponse, ProbeResponse};
use shogi4_engine::Position;
use shogi4_proofs::ProofStore;
use shogi4_search::{Analysis, Limits, Outcome, Search, MAX_DEPTH};
use tokio::sync::Semaphore;

use crate::error::ApiError;

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
}

impl Default for SearchSettings {
    fn default() -> SearchSettings {
        SearchSettings {
            time: Duration::from_millis(300),
            nodes: shogi4_search::DEFAULT_MAX_NODES,
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            table_bytes: 64 << 20,
            cache_entries: 10_000,
        }
    }
}

impl SearchSettings {
    /// The search limits for `share` of one request's budget (a batch splits it).
    fn limits(&self, share: u32) -> Limits {
        let share = share.max(1);
        Limits { max_depth: MAX_DEPTH, max_nodes: self.nodes / u64::from(share), time: Some(self.time / share) }
    }
}

/// The searchers, the limit on how many run at once, and the cache of proven answers.
pub struct SearchService {
    settings: SearchSettings,
    permits: Semaphore,
    /// Idle searchers; created on first need, at most `workers` of them.
    idle: Mutex<Vec<Search>>,
    cache: Mutex<ProvenCache>,
    /// What earlier searches established, kept across restarts.
    store: Option<ProofStore>,
}

impl SearchService {
    /// A service with these settings, backed by a proof store if given; no memory is taken
    /// until the first search.
    pub fn new(settings: SearchSettings, store: Option<ProofStore>) -> SearchService {
        let cache = ProvenCache::new(settings.cache_entries);
        SearchService {
            permits: Semaphore::new(settings.workers),
            idle: Mutex::new(Vec::new()),
            cache: Mutex::new(cache),
            settings,
            store,
        }
    }

    /// Whether searches are allowed at all.
    pub fn enabled(&self) -> bool {
        self.settings.workers > 0
    }

    /// The probe answer for a position no table holds, searched within `1 / share` of the
    /// request budget.
    pub async fn probe(self: &Arc<Self>, position: Position, share: u32) -> Result<ProbeResponse, ApiError> {
        let key = position.key();
        if let Some(answer) = self.cache.lock().expect("not poisoned").get(key) {
            return Ok(answer);
        }
        let limits = self.settings.limits(share);
        let service = Arc::clone(self);
        let answer = self
            .run(move |search| {
                service.recall(search, &position);
                let analysis = search.analyse(&position, &limits);
                service.keep(&facts_of(&position, &analysis));
                ProbeResponse::searched(&position, &analysis)
            })
            .await?;
        // Only exact answers are final; a bounded or unknown one may be improved by a later
        // search, which should then be asked.
        if answer.dtw.is_some() {
            self.cache.lock().expect("not poisoned").put(key, answer.clone());
        }
        Ok(answer)
    }

    /// The line of best play, when the search proves the position within the budget.
    pub async fn mainline(self: &Arc<Self>, position: Position) -> Result<MainlineResponse, ApiError> {
        let limits = self.settings.limits(1);
        let service = Arc::clone(self);
        self.run(move |search| {
            service.recall(search, &position);
            let line = search.mainline(&position, &limits);
            service.keep(&[(position.key(), line.outcome)]);
            MainlineResponse::searched(&position, &line)
        })
        .await
    }

    /// Hands the searcher what the store knows of the position and its children.
    fn recall(&self, search: &mut Search, position: &Position) {
        let Some(store) = &self.store else { return };
        let moves = position.legal_moves();
        let mut keys = vec![position.key()];
        keys.extend(
            moves.iter().filter(|&&mv| !position.captures_royal(mv)).map(|&mv| position.play_unchecked(mv).key()),
        );
        match store.get_many(&keys) {
            Ok(known) => {
                for (key, outcome) in keys.into_iter().zip(known) {
                    if let Some(outcome) = outcome {
                        search.remember(key, outcome);
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "proof store unreadable; searching without it"),
        }
    }

    /// Keeps what a search established.
    fn keep(&self, facts: &[(u128, Outcome)]) {
        let Some(store) = &self.store else { return };
        if let Err(error) = store.record(facts) {
            tracing::warn!(%error, "proof store unwritable; this result is kept in memory only");
        }
    }

    /// Runs `work` on a blocking thread with an idle searcher, once a worker is free. A
    /// request that cannot get a worker within its own search budget is refused (503) rather
    /// than queued without end.
    async fn run<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&mut Search) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = tokio::time::timeout(self.settings.time, self.permits.acquire())
            .await
            .map_err(|_| ApiError::SearchBusy)?
            .map_err(|_| ApiError::SearchBusy)?;
        let service = Arc::clone(self);
        let result = tokio::task::spawn_blocking(move || {
            let mut search = service
                .idle
                .lock()
                .expect("not poisoned")
                .pop()
                .unwrap_or_else(|| Search::new(service.settings.table_bytes));
            let result = work(&mut search);
            service.idle.lock().expect("not poisoned").push(search);
            result
        })
        .await
        .map_err(|e| ApiError::Internal(format!("search task failed: {e}")));
        drop(permit);
        result
    }
}

/// What an analysis established about the position and its children, by key.
fn facts_of(position: &Position, analysis: &Analysis) -> Vec<(u128, Outcome)> {
    let mut facts = vec![(position.key(), analysis.outcome)];
    facts.extend(analysis.moves.iter().filter_map(|m| Some((m.result?.key(), m.outcome.after_move()))));
    facts
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
