//! `GET /probe`, `POST /probe` and `GET /mainline`.

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use shogi4_engine::Position;

use super::{position_from_query, Client};
use crate::conditional::etag_matches;
use crate::rate_limit::cost;
use shogi4_api::{BatchEntry, BatchRequest, BatchResponse, MainlineResponse, ProbeResponse};

use crate::error::ApiError;
use crate::model::PositionQuery;
use crate::state::{AppState, ServedTable, TableSet};

const CACHE_CONTROL: &str = "public, max-age=86400";
const SEARCH_CACHE_CONTROL: &str = "public, max-age=300";

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
    Ok((caching, json_body(&body()?)).into_response())
}

/// The probe answer for a position of `table`'s closed game.
fn probe_in(table: &ServedTable, position: &Position) -> Result<ProbeResponse, ApiError> {
    let result = table.read(|t| t.probe(position))?;
    table.probes.increment(1);
    Ok(ProbeResponse::new(position, &result))
}

/// A JSON body serialized into a buffer sized for a typical answer at once (axum's `Json`
/// starts at 128 bytes and grows, copying, several times for a 3 KB probe answer).
fn json_body<T: serde::Serialize>(body: &T) -> Response {
    let mut bytes = Vec::with_capacity(4096);
    match serde_json::to_writer(&mut bytes, body) {
        Ok(()) => ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], bytes).into_response(),
        Err(error) => ApiError::Internal(format!("cannot serialize an answer: {error}")).into_response(),
    }
}

/// A search answer: no validator (it may improve as searches accumulate), cacheable briefly.
fn searched<T: serde::Serialize>(body: T) -> Response {
    ([(header::CACHE_CONTROL, HeaderValue::from_static(SEARCH_CACHE_CONTROL))], Json(body)).into_response()
}

/// The table's answer, or else the search's (within `1 / share` of the search budget); with
/// search turned off, the missing table is the answer.
async fn probe_one(
    state: &AppState,
    set: &TableSet,
    position: &Position,
    share: u32,
    deadline: std::time::Instant,
    client: std::net::IpAddr,
) -> Result<ProbeResponse, ApiError> {
    match answerer(state, set, position)? {
        Answerer::Table(table) => probe_in(table, position),
        Answerer::Search => state.search.probe(*position, share, deadline, client).await,
    }
}

/// Who answers a position.
enum Answerer<'a> {
    /// The table of its closed game.
    Table(&'a ServedTable),
    /// A proof search: no table holds the position.
    Search,
}

/// The table of the position's closed game, or else search; a game whose table is being
/// solved gets 503, and with search off a missing table is the answer (404).
fn answerer<'a>(state: &AppState, set: &'a TableSet, position: &Position) -> Result<Answerer<'a>, ApiError> {
    let material = position.material();
    match set.tables.table(material) {
        Ok(table) => Ok(Answerer::Table(table)),
        Err(_) if state.being_solved(material) => Err(ApiError::BeingSolved(material)),
        Err(error) if !state.search.enabled() => Err(ApiError::from_probe(error)),
        Err(_) => Ok(Answerer::Search),
    }
}

/// The value of a position and of every legal move.
#[utoipa::path(
    get,
    path = "/probe",
    tag = "probe",
    params(PositionQuery),
    responses(
        (status = 200, description = "The solved value for the side to move and every legal move valued for the \
            player making it, best first. Table answers carry an `ETag` (from the table's checksum) and \
            `Cache-Control` for a day; search answers (`source: search`) only `Cache-Control` for 5 minutes, \
            since later searches may reach further.",
            body = ProbeResponse),
        (status = 304, description = "`If-None-Match` matched the `ETag`: the answer has not changed."),
    )
)]
pub async fn probe(
    State(state): State<Arc<AppState>>,
    Client(client): Client,
    headers: HeaderMap,
    query: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let position = readable(&state, client, query)?;
    let set = state.tables();
    match answerer(&state, &set, &position)? {
        Answerer::Table(table) => {
            state.rate.charge(client, cost::TABLE_PROBE)?;
            cached(table, &headers, || probe_in(table, &position))
        }
        Answerer::Search => {
            state.rate.charge(client, cost::SEARCH)?;
            let deadline = state.search.settings().single_deadline();
            Ok(searched(state.search.probe(position, 1, deadline, client).await?))
        }
    }
}

/// The line of best play to the royal capture.
#[utoipa::path(
    get,
    path = "/mainline",
    tag = "probe",
    params(PositionQuery),
    responses(
        (status = 200, description = "Both sides play their best move (the first of `GET /probe`) until the \
            royal is captured, after exactly `dtw` plies. For a draw, or a search that proves nothing \
            (`category: unknown`), `mainline` is empty and `winner` null.",
            body = MainlineResponse),
        (status = 304, description = "`If-None-Match` matched the `ETag`."),
    )
)]
pub async fn mainline(
    State(state): State<Arc<AppState>>,
    Client(client): Client,
    headers: HeaderMap,
    query: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let position = readable(&state, client, query)?;
    let set = state.tables();
    match answerer(&state, &set, &position)? {
        Answerer::Table(table) => {
            state.rate.charge(client, cost::TABLE_MAINLINE)?;
            cached(table, &headers, || {
                let line = table.read(|t| t.mainline(&position))?;
                table.probes.increment(1);
                Ok(MainlineResponse::new(&position, &line))
            })
        }
        Answerer::Search => {
            state.rate.charge(client, cost::SEARCH)?;
            Ok(searched(state.search.mainline(position, client).await?))
        }
    }
}

/// The query's position; an unreadable or illegal one costs what a table probe costs, as an
/// unreadable entry of a batch does, so that a flood of bad queries is not free (once the
/// budget is spent, the answer is 429).
fn readable(
    state: &AppState,
    client: std::net::IpAddr,
    query: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<Position, ApiError> {
    match position_from_query(query) {
        Ok(position) => Ok(position),
        Err(refused) => {
            state.rate.charge(client, cost::TABLE_PROBE)?;
            Err(refused)
        }
    }
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
    )
)]
pub async fn probe_batch(
    State(state): State<Arc<AppState>>,
    Client(client): Client,
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
    let parsed: Vec<Result<Position, ApiError>> =
        request.positions.iter().map(|pos| Position::parse(pos).map_err(ApiError::Position)).collect();
    // The searches of one batch share one request's search budget.
    let set = state.tables();
    let searched = parsed.iter().flatten().filter(|p| set.tables.table(p.material()).is_err()).count() as u32;
    let tabled = parsed.iter().flatten().count() as u32 - searched;
    // An unreadable entry is parsed and answered too: it costs as much as a table probe.
    let unreadable = parsed.iter().filter(|p| p.is_err()).count() as u32;
    let searched_cost = if state.search.enabled() { searched * cost::SEARCH } else { 0 };
    state.rate.charge(client, (tabled + unreadable) * cost::TABLE_PROBE + searched_cost)?;
    // One deadline for the batch's waits and searches together, shared among the entries left
    // to search: each gets its share of what the earlier ones left, and those it leaves no
    // time for a shallow search (a refusal, with its tokens back, only if every worker is busy).
    let deadline = state.search.settings().batch_deadline();
    let mut to_search = searched;
    let mut results = Vec::with_capacity(parsed.len());
    let mut refused = 0;
    for (pos, position) in request.positions.into_iter().zip(parsed) {
        let answer = match position {
            Ok(position) => {
                let share = to_search.max(1);
                to_search = to_search.saturating_sub(u32::from(set.tables.table(position.material()).is_err()));
                probe_one(&state, &set, &position, share, deadline, client).await
            }
            Err(error) => Err(error),
        };
        refused += u32::from(matches!(answer, Err(ApiError::SearchBusy)));
        results.push(match answer {
            Ok(result) => BatchEntry { pos, result: Some(result), error: None },
            Err(e) => BatchEntry { pos, result: None, error: Some(e.problem()) },
        });
    }
    state.rate.refund(client, refused * cost::SEARCH);
    Ok(Json(BatchResponse { results }))
}
