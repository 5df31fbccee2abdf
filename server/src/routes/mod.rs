//! The endpoints, one module per resource.

pub mod files;
pub mod info;
pub mod probe;
pub mod web;

use axum::extract::rejection::QueryRejection;
use axum::extract::Query;
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
