//! `GET /probe`, `POST /probe` and `GET /mainline`.

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use shogi4_engine::Position;

use super::{etag_matches, position_from_query};
use shogi4_api::{BatchEntry, BatchRequest, BatchResponse, MainlineResponse, ProbeResponse, Problem};

use crate::error::ApiError;
use crate::model::PositionQuery;
use crate::state::{AppState, ServedTable};

const CACHE_CONTROL: &str = "public, max-age=86400";

/// A cacheable answer from `table`: its `ETag`, and `304` when the client has it already.
fn cached<T: serde::Serialize>(
    table: &ServedTable,
    headers: &HeaderMap,
    body: impl FnOnce() -> Result<T, ApiError>,
) -> Result<Response, ApiError> {
    let caching =
        [(header::ETAG, table.etag.clone()), (header::CACHE_CONTROL, HeaderValue::from_static(CACHE_CONTROL))];
    if etag_matches(headers, &table.etag) {
        return Ok((StatusCode::NOT_MODIFIED, caching).into_response());
    }
    Ok((caching, Json(body()?)).into_response())
}

/// The probe answer for a position of `table`'s closed game.
fn probe_in(table: &ServedTable, position: &Position) -> Result<ProbeResponse, ApiError> {
    let result = table.table.probe(position).map_err(ApiError::from_probe)?;
    table.probes.increment(1);
    Ok(ProbeResponse::new(position, &result))
}

fn probe_one(state: &AppState, position: &Position) -> Result<ProbeResponse, ApiError> {
    probe_in(state.table(position.material()).map_err(ApiError::from_probe)?, position)
}

/// The value of a position and of every legal move.
#[utoipa::path(
    get,
    path = "/probe",
    tag = "probe",
    params(PositionQuery),
    responses(
        (status = 200, description = "The solved value for the side to move and every legal move valued for the \
            player making it, best first. Carries an `ETag` (from the table's checksum) and `Cache-Control`.",
            body = ProbeResponse),
        (status = 304, description = "`If-None-Match` matched the `ETag`: the answer has not changed."),
        (status = 400, description = "Unparsable position (the detail gives the parser's message and the \
            character offset) or malformed query string.", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No table for the position's closed game; `material` names it and `loaded` \
            lists the served ones. The full game `KKCCFFRRTT` is not solved.", body = Problem,
            content_type = "application/problem+json"),
        (status = 422, description = "Well-formed but illegal position (e.g. two royals, a third piece of a kind, \
            an unpromoted piece on its far rank).", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many requests in flight.", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn probe(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    query: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let position = position_from_query(query)?;
    let table = state.table(position.material()).map_err(ApiError::from_probe)?;
    cached(table, &headers, || probe_in(table, &position))
}

/// The line of best play to the royal capture.
#[utoipa::path(
    get,
    path = "/mainline",
    tag = "probe",
    params(PositionQuery),
    responses(
        (status = 200, description = "Both sides play their best move (the first of `GET /probe`) until the \
            royal is captured, after exactly `dtw` plies. For a draw, `mainline` is empty and `winner` null.",
            body = MainlineResponse),
        (status = 304, description = "`If-None-Match` matched the `ETag`."),
        (status = 400, description = "Unparsable position or malformed query.", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No table for the position's closed game.", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Illegal position.", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn mainline(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    query: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let position = position_from_query(query)?;
    let table = state.table(position.material()).map_err(ApiError::from_probe)?;
    cached(table, &headers, || {
        let line = table.table.mainline(&position).map_err(ApiError::from_probe)?;
        table.probes.increment(1);
        Ok(MainlineResponse::new(&position, &line))
    })
}

/// Many positions in one request.
#[utoipa::path(
    post,
    path = "/probe",
    tag = "probe",
    request_body(content = BatchRequest, description = "At most `max_batch` positions (100 unless the server \
        is configured otherwise)."),
    responses(
        (status = 200, description = "One entry per position, in order: `result` as `GET /probe` would answer, or \
            `error` with the problem `GET /probe` would return for that position.", body = BatchResponse),
        (status = 400, description = "The body is not the JSON described.", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "More positions than allowed, or a body over the size limit.", body = Problem,
            content_type = "application/problem+json"),
    )
)]
pub async fn probe_batch(
    State(state): State<Arc<AppState>>,
    body: Result<Json<BatchRequest>, JsonRejection>,
) -> Result<Json<BatchResponse>, ApiError> {
    let Json(request) = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::BodyTooLarge(e.body_text())
        } else {
            ApiError::BadRequest(format!("malformed JSON body: {}", e.body_text()))
        }
    })?;
    let max = state.limits.max_batch;
    if request.positions.len() > max {
        return Err(ApiError::BatchTooLarge { sent: request.positions.len(), max });
    }
    let results = request
        .positions
        .into_iter()
        .map(|pos| {
            let answer = Position::parse(&pos).map_err(ApiError::Position).and_then(|p| probe_one(&state, &p));
            match answer {
                Ok(result) => BatchEntry { pos, result: Some(result), error: None },
                Err(e) => BatchEntry { pos, result: None, error: Some(e.problem()) },
            }
        })
        .collect();
    Ok(Json(BatchResponse { results }))
}
