//! Shared state: the current table set (swapped whole on reload), the searchers, the rate
//! limiter, and the limits every request is held to.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use metrics_exporter_prometheus::PrometheusHandle;
use shogi4_engine::Material;
use shogi4_proofs::ProofStore;
use shogi4_tablebase::TableError;

use crate::downloads::Downloads;
use crate::rate_limit::RateLimit;
use crate::search::SearchService;
pub use crate::tables::{ServedTable, TableLoading, TableSet};
use crate::ServiceLimits;

/// What every handler reads.
pub struct AppState {
    /// The tables served now. A request takes the set once and keeps it to the end, so a
    /// reload never changes tables under a request.
    tables: RwLock<Arc<TableSet>>,
    /// Where the tables come from, and how they are read in.
    dir: PathBuf,
    loading: TableLoading,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// What one request may cost.
    pub limits: ServiceLimits,
    /// Proof search for positions no table holds.
    pub search: Arc<SearchService>,
    /// Every client's token bucket.
    pub rate: RateLimit,
    /// Download slots and every client's byte bucket.
    pub downloads: Arc<Downloads>,
    /// Closed games being solved in the background, and why solving stopped if it failed.
    solving: RwLock<Solving>,
}

/// The background solve, as health and probes report it.
#[derive(Clone, Debug, Default)]
pub struct Solving {
    /// Games not solved yet.
    pub pending: BTreeSet<Material>,
    /// Why solving stopped, if it failed.
    pub failure: Option<String>,
}

impl AppState {
    /// Reads and checks every table in `dir` (see [`TableSet::load`]); tables that fail are
    /// logged and left out.
    pub fn load(dir: &Path, loading: TableLoading, limits: ServiceLimits) -> Result<AppState, TableError> {
        let set = TableSet::load(dir, loading, None)?;
        let search = Arc::new(SearchService::new(limits.search.clone(), None));
        let rate = RateLimit::new(limits.rate.clone());
        let downloads = Arc::new(Downloads::new(limits.downloads.clone(), &limits.rate));
        Ok(AppState {
            tables: RwLock::new(Arc::new(set)),
            dir: dir.to_path_buf(),
            loading,
            metrics: crate::metrics::handle(),
            limits,
            search,
            rate,
            downloads,
            solving: RwLock::new(Solving::default()),
        })
    }

    /// The same state, its searches backed by a proof store.
    pub fn with_proof_store(mut self, store: ProofStore) -> AppState {
        self.search = Arc::new(SearchService::new(self.limits.search.clone(), Some(store)));
        self
    }

    /// The tables directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tables served now.
    pub fn tables(&self) -> Arc<TableSet> {
        Arc::clone(&self.tables.read().expect("not poisoned"))
    }

    /// The background solve's state.
    pub fn solving(&self) -> Solving {
        self.solving.read().expect("not poisoned").clone()
    }

    /// Whether a closed game's table is being solved right now.
    pub fn being_solved(&self, material: Material) -> bool {
        self.solving.read().expect("not poisoned").pending.contains(&material)
    }

    /// Marks games as being solved.
    pub fn set_solving(&self, pending: BTreeSet<Material>) {
        self.solving.write().expect("not poisoned").pending = pending;
    }

    /// Marks one game as solved (its table is in the set).
    pub fn solved(&self, material: Material) {
        self.solving.write().expect("not poisoned").pending.remove(&material);
    }

    /// Records why the background solve stopped; the games left are no longer pending.
    pub fn solve_failed(&self, failure: String) {
        let mut solving = self.solving.write().expect("not poisoned");
        solving.pending.clear();
        solving.failure = Some(failure);
    }

    /// Re-reads the directory and swaps the new set in at once: unchanged files are kept as
    /// they are, new and changed ones copied and verified. On failure the old set stays.
    pub fn reload(&self) -> Result<Arc<TableSet>, TableError> {
        let current = self.tables();
        let set = Arc::new(TableSet::load(&self.dir, self.loading, Some(&current))?);
        *self.tables.write().expect("not poisoned") = Arc::clone(&set);
        Ok(set)
    }
}
