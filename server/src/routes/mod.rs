//! The endpoints, one module per resource.

pub mod info;
pub mod probe;

use axum::extract::rejection::QueryRejection;
use axum::extract::Query;
use axum::http::{header, HeaderMap, HeaderValue};
use shogi4_engine::Position;

use crate::error::ApiError;
use crate::model::PositionQuery;

/// Reads `?pos=` into a legal position, with the problem for each way it can fail.
pub fn position_from_query(query: Result<Query<PositionQuery>, QueryRejection>) -> Result<Position, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::BadRequest(format!("malformed query string: {}", e.body_text())))?;
    let text = query.pos.ok_or_else(|| ApiError::BadRequest("missing query parameter `pos` (a SFEN or FEN)".into()))?;
    Position::parse(&text).map_err(ApiError::Position)
}

/// Whether `If-None-Match` names `etag` (or `*`); weak tags compare by their opaque part.
pub fn etag_matches(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Some(Ok(value)) = headers.get(header::IF_NONE_MATCH).map(|v| v.to_str()) else { return false };
    let ours = etag.to_str().unwrap_or_default();
    value.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == ours)
}
