//! Shared state: the memory-mapped tables and what is derived from each once at start-up.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use axum::http::HeaderValue;
use metrics_exporter_prometheus::PrometheusHandle;
use shogi4_api::TableInfo;
use shogi4_engine::Material;
use shogi4_tablebase::{Loaded, MappedTable, ProbeError, TableDir, TableError};

use shogi4_proofs::ProofStore;

use crate::rate_limit::RateLimit;
use crate::search::SearchService;
use crate::Limits;

/// One served table and what a handler needs besides its values.
pub struct ServedTable {
    /// The table, memory-mapped; probes read it in place.
    pub table: MappedTable,
    /// Its `GET /tables` entry.
    pub info: TableInfo,
    /// `ETag` of every answer from this table: a weak validator from its checksum.
    pub etag: HeaderValue,
    /// `tablebase_probes_total{material}`.
    pub probes: metrics::Counter,
}

/// What every handler reads.
pub struct AppState {
    /// The served tables by closed game: one lookup gives a request everything it needs.
    pub tables: BTreeMap<Material, ServedTable>,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// What one request may cost.
    pub limits: Limits,
    /// Proof search for positions no table holds.
    pub search: Arc<SearchService>,
    /// Every client's token bucket.
    pub rate: RateLimit,
}

impl AppState {
    /// Maps and validates every table in `dir`. Tables that fail are logged and skipped.
    pub fn load(dir: &Path, verify_checksums: bool, limits: Limits) -> Result<AppState, TableError> {
        let Loaded { tables, rejected } = TableDir::new(dir).load(verify_checksums)?;
        for (path, error) in &rejected {
            tracing::error!(file = %path.display(), %error, "skipping table that failed validation");
        }
        Ok(AppState::new(tables, limits))
    }

    /// State over tables already opened.
    pub fn new(tables: BTreeMap<Material, MappedTable>, limits: Limits) -> AppState {
        let metrics = crate::metrics::handle();
        let tables = tables
            .into_iter()
            .map(|(material, table)| {
                let h = table.header();
                // Weak: the same answer is sent as identity, gzip or brotli bytes; and derived
                // from the data alone, so it changes exactly when the table does.
                let tag = format!("W/\"{:016x}\"", h.checksum);
                let served = ServedTable {
                    info: TableInfo::new(h, table.size()),
                    etag: HeaderValue::from_str(&tag).expect("ASCII"),
                    probes: crate::metrics::probe_counter(&material.to_string()),
                    table,
                };
                (material, served)
            })
            .collect();
        let search = Arc::new(SearchService::new(limits.search.clone(), None));
        let rate = RateLimit::new(limits.rate.clone());
        AppState { tables, metrics, limits, search, rate }
    }

    /// The same state, its searches backed by a proof store.
    pub fn with_proof_store(mut self, store: ProofStore) -> AppState {
        self.search = Arc::new(SearchService::new(self.limits.search.clone(), Some(store)));
        self
    }

    /// The table of a closed game, or why there is none (the caller searches instead).
    pub fn table(&self, material: Material) -> Result<&ServedTable, ProbeError> {
        self.tables
            .get(&material)
            .ok_or_else(|| ProbeError::NoTable { material, loaded: self.tables.keys().copied().collect() })
    }
}
