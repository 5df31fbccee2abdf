//! `GET /tables`, `GET /health` and `GET /metrics`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;

use shogi4_api::TablesResponse;

use crate::model::Health;
use crate::state::AppState;

/// Every loaded table.
#[utoipa::path(get, path = "/tables", tag = "service",
    responses((status = 200, description = "Loaded tables with their statistics (positions in the published \
        convention: both sides to move, unfolded).", body = TablesResponse)))]
pub async fn tables(State(state): State<Arc<AppState>>) -> Json<TablesResponse> {
    Json(TablesResponse { tables: state.tables.values().map(|t| t.info.clone()).collect() })
}

/// Readiness: the server answers only once its tables are mapped.
#[utoipa::path(get, path = "/health", tag = "service",
    responses((status = 200, description = "Ready.", body = Health)))]
pub async fn health(State(state): State<Arc<AppState>>) -> Json<Health> {
    Json(Health { status: "ok".to_string(), tables: state.tables.len() })
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", tag = "service",
    responses((status = 200, description = "Prometheus text format: `http_requests_total{route,method,status}`, \
        `http_request_duration_seconds{route}` (histogram), `tablebase_probes_total{material}`.",
        body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render())
}
