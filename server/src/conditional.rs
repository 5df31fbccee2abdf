//! Conditional requests: whether a client already holds the representation a validator
//! names, for the `304 Not Modified` of tables, files and the explorer's pages.

use axum::http::{header, HeaderMap, HeaderValue};

/// Whether `If-None-Match` names `etag` (or `*`); weak tags compare by their opaque part.
pub fn etag_matches(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Some(Ok(value)) = headers.get(header::IF_NONE_MATCH).map(|v| v.to_str()) else { return false };
    // Weak comparison (RFC 9110 §8.8.3.2), as If-None-Match requires: opaque parts only.
    let ours = etag.to_str().unwrap_or_default().trim_start_matches("W/");
    value.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == ours)
}
