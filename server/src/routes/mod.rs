//! The endpoints, one module per resource.

pub mod files;
pub mod info;
pub mod probe;
pub mod web;

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

/// The client a request comes from, as the rate limiter groups clients.
pub struct Client(pub std::net::IpAddr);

impl axum::extract::FromRequestParts<std::sync::Arc<crate::state::AppState>> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &std::sync::Arc<crate::state::AppState>,
    ) -> Result<Client, Self::Rejection> {
        // In-process tests have no connection; they count as one unknown client.
        let peer = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0);
        Ok(Client(state.rate.client(peer, &parts.headers)))
    }
}

/// Whether `If-None-Match` names `etag` (or `*`); weak tags compare by their opaque part.
pub fn etag_matches(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Some(Ok(value)) = headers.get(header::IF_NONE_MATCH).map(|v| v.to_str()) else { return false };
    // Weak comparison (RFC 9110 §8.8.3.2), as If-None-Match requires: opaque parts only.
    let ours = etag.to_str().unwrap_or_default().trim_start_matches("W/");
    value.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == ours)
}
