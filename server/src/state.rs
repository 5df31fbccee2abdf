//! Shared state: the memory-mapped tables and what is derived from them once at start-up.

use std::collections::HashMap;
use std::path::Path;

use axum::http::HeaderValue;
use metrics_exporter_prometheus::PrometheusHandle;
use shogi4_engine::Material;
use shogi4_tablebase::{TableError, Tablebase};

use crate::model::TableInfo;

/// What a handler needs of one table besides its values.
pub struct TableHandles {
    /// `ETag` of every answer from this table.
    pub etag: HeaderValue,
    /// `tablebase_probes_total{material}`.
    pub probes: metrics::Counter,
}

/// What every handler reads.
pub struct AppState {
    /// The tables, memory-mapped; probes read them in place.
    pub tablebase: Tablebase,
    /// `GET /tables`, computed once.
    pub tables: Vec<TableInfo>,
    /// Per closed game: the entity tag of its answers (from the table's checksum) and the
    /// counter of its probes.
    pub per_table: HashMap<Material, TableHandles>,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// Most positions in one `POST /probe`.
    pub max_batch: usize,
}

impl AppState {
    /// Maps and validates every table in `dir`. Tables that fail are logged and skipped.
    pub fn load(dir: &Path, verify_checksums: bool, max_batch: usize) -> Result<AppState, TableError> {
        let (tablebase, rejected) = Tablebase::open_dir(dir, verify_checksums)?;
        for (path, error) in &rejected {
            tracing::error!(file = %path.display(), %error, "skipping table that failed validation");
        }
        Ok(AppState::new(tablebase, max_batch))
    }

    fn new(tablebase: Tablebase, max_batch: usize) -> AppState {
        let mut tables = Vec::new();
        let metrics = crate::metrics::handle();
        let mut per_table = HashMap::new();
        for (material, table) in tablebase.tables() {
            let h = table.header();
            let s = &h.statistics;
            tables.push(TableInfo {
                material: material.to_string(),
                positions: s.positions,
                slots: h.slots,
                wins: s.wins,
                losses: s.losses,
                draws: s.draws,
                max_dtw: s.max_dtw,
                file_size: table.size(),
                checksum: format!("{:016x}", h.checksum),
            });
            let tag = format!("\"{}-{:016x}\"", env!("CARGO_PKG_VERSION"), h.checksum);
            let etag = HeaderValue::from_str(&tag).expect("ASCII");
            per_table
                .insert(*material, TableHandles { etag, probes: crate::metrics::probe_counter(&material.to_string()) });
        }
        AppState { tablebase, tables, per_table, metrics, max_batch }
    }
}
