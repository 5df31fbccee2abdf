//! `GET /tables`, `GET /health` and `GET /metrics`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;

use shogi4_api::TablesResponse;

use crate::error::ApiError;
use crate::model::{Health, RejectedTable};
use crate::rate_limit::cost;
use crate::routes::Client;
use crate::state::AppState;

/// Every loaded table.
#[utoipa::path(get, path = "/tables", tag = "service",
    responses((status = 200, description = "Loaded tables with their statistics (positions in the published \
        convention: both sides to move, unfolded). Costs 1 token.", body = TablesResponse)))]
pub async fn tables(
    State(state): State<Arc<AppState>>,
    Client(client): Client,
) -> Result<Json<TablesResponse>, ApiError> {
    // A body built from every table's statistics: not free, as `/health` and `/metrics` are.
    state.rate.charge(client, cost::TABLE_PROBE)?;
    let solving = state.solving().pending.iter().map(|m| m.to_string()).collect();
    Ok(Json(TablesResponse { tables: state.tables().tables.tables().map(|(_, t)| t.info.clone()).collect(), solving }))
}

/// Readiness: ready when tables are served and no table file was refused.
#[utoipa::path(get, path = "/health", tag = "service",
    responses((status = 200, description = "Ready: every table file in the directory is served.", body = Health),
        (status = 503, description = "Not ready: missing tables still being solved (`solving`, listing them), \
            no tables (`no-tables`), or some files refused, a table served from its file changed on disk, or the solve \
            failed (`degraded`, with each file and its reason).", body = Health)))]
pub async fn health(State(state): State<Arc<AppState>>) -> (StatusCode, Json<Health>) {
    let set = state.tables();
    let dir = shogi4_tablebase::TableDir::new(state.dir());
    let rejected: Vec<RejectedTable> = set
        .rejected
        .iter()
        .map(|(path, error)| RejectedTable { file: path.display().to_string(), error: error.clone() })
        .chain(set.changed().into_iter().map(|(material, reason)| RejectedTable {
            file: dir.path_of(material).display().to_string(),
            error: format!("served from its file, which changed after it was verified: {reason}; reload (SIGHUP)"),
        }))
        .collect();
    let solving = state.solving();
    let status = if !solving.pending.is_empty() {
        "solving"
    } else if set.tables.is_empty() {
        "no-tables"
    } else if !rejected.is_empty() || solving.failure.is_some() {
        "degraded"
    } else {
        "ok"
    };
    let code = if status == "ok" { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let health = Health {
        status: status.to_string(),
        tables: set.tables.len(),
        rejected,
        solving: solving.pending.iter().map(|m| m.to_string()).collect(),
        solve_failure: solving.failure,
    };
    (code, Json(health))
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", tag = "service",
    responses((status = 200, description = "Prometheus text format: `http_requests_total{route,method,status}`, \
        `http_request_duration_seconds{route}` (histogram), `tablebase_probes_total{material}`.",
        body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render())
}
