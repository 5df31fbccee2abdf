//! `GET /probe`, `POST /probe` and `GET /mainline`.

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use shogi4_engine::Position;

use super::{etag_matches, position_from_query};
use crate::error::{ApiError, Problem};
use crate::model::{
    mainline_response, probe_response, BatchEntry, BatchRequest, BatchResponse, MainlineResponse, PositionQuery,
    ProbeResponse,
};
use crate::state::AppState;

const CACHE_CONTROL: &str = "public, max-age=86400";

/// A cacheable answer: `ETag` from the table, `304` when the client has it already.
fn cached<T: serde::Serialize>(
    state: &AppState,
    position: &Position,
    headers: &HeaderMap,
    body: impl FnOnce() -> Result<T, ApiError>,
) -> Result<Response, ApiError> {
    let etag = state.per_table.get(&position.material()).map(|t| t.etag.clone());
    if let Some(etag) = &etag {
        if etag_matches(headers, etag) {
            let headers =
                [(header::ETAG, etag.clone()), (header::CACHE_CONTROL, HeaderValue::from_static(CACHE_CONTROL))];
            return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
        }
    }
    let mut response = Json(body()?).into_response();
    if let Some(etag) = etag {
        response.headers_mut().insert(header::ETAG, etag);
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(CACHE_CONTROL));
    }
    Ok(response)
}

fn count_probe(state: &AppState, position: &Position) {
    if let Some(table) = state.per_table.get(&position.material()) {
        table.probes.increment(1);
    }
}

fn probe_one(state: &AppState, position: &Position) -> Result<ProbeResponse, ApiError> {
    let result = state.tablebase.probe(position).map_err(ApiError::from_probe)?;
    count_probe(state, position);
    Ok(probe_response(position, &result))
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
    cached(&state, &position, &headers, || probe_one(&state, &position))
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
    cached(&state, &position, &headers, || {
        let (value, line) = state.tablebase.mainline(&position).map_err(ApiError::from_probe)?;
        count_probe(&state, &position);
        Ok(mainline_response(&position, value, &line))
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
    if request.positions.len() > state.max_batch {
        return Err(ApiError::BatchTooLarge { sent: request.positions.len(), max: state.max_batch });
    }
    let results = request
        .positions
        .into_iter()
        .map(|pos| {
            let answer = Position::from_sfen(&pos).map_err(ApiError::from_notation).and_then(|p| probe_one(&state, &p));
            match answer {
                Ok(result) => BatchEntry { pos, result: Some(result), error: None },
                Err(e) => BatchEntry { pos, result: None, error: Some(e.problem()) },
            }
        })
        .collect();
    Ok(Json(BatchResponse { results }))
}
