//! The Shogi4 tablebase HTTP service: verified tables (private copies, or guarded file
//! mappings) behind a JSON API, the proof search for every other position, table downloads
//! for mirrors, and the web explorer that uses the API.
//!
//! [`app`] builds the axum router from an [`AppState`] (tables and [`ServiceLimits`]) and a
//! [`CorsPolicy`]; `main.rs` reads the configuration, listens at once, and solves missing
//! tables in the background. Only this crate knows HTTP (the JSON types are `shogi4-api`'s).

mod conditional;
pub mod config;
pub mod downloads;
pub mod error;
mod fair;
mod guard;
mod metrics;
pub mod model;
pub mod openapi;
mod precompressed;
pub mod rate_limit;
mod recorder;
mod routes;
pub mod search;
pub mod serve;
pub mod state;
mod tables;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{BoxError, Router};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::predicate::{DefaultPredicate, Predicate};
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa_swagger_ui::SwaggerUi;

pub use error::ApiError;
pub use shogi4_api::Problem;
pub use state::AppState;
pub use tables::TableLoading;

/// What one request may cost.
#[derive(Clone, Debug)]
pub struct ServiceLimits {
    /// Largest request body in bytes.
    pub max_body_bytes: usize,
    /// Time a client has to send a request's whole body, counted apart from `timeout`: the
    /// body is read before the request takes one of the `concurrency` slots, so a body sent
    /// slowly holds only its own connection, and not for longer than this.
    pub body_timeout: Duration,
    /// Longest URI in bytes.
    pub max_uri_bytes: usize,
    /// Most positions in one `POST /probe`.
    pub max_batch: usize,
    /// Requests handled at once; more are refused with 429.
    pub concurrency: usize,
    /// Time a request may take.
    pub timeout: Duration,
    /// How searches (for positions without a table) are bounded.
    pub search: search::SearchSettings,
    /// How much each client may ask for.
    pub rate: rate_limit::RateSettings,
    /// How table downloads are bounded.
    pub downloads: downloads::DownloadSettings,
}

impl Default for ServiceLimits {
    fn default() -> ServiceLimits {
        ServiceLimits {
            max_body_bytes: 64 * 1024,
            body_timeout: Duration::from_secs(5),
            max_uri_bytes: 4096,
            max_batch: 100,
            concurrency: 1024,
            timeout: Duration::from_secs(10),
            search: search::SearchSettings::default(),
            rate: rate_limit::RateSettings::default(),
            downloads: downloads::DownloadSettings::default(),
        }
    }
}

/// Which web origins may call the API from a browser.
#[derive(Clone, Debug, Default)]
pub enum CorsPolicy {
    /// Any origin (the default: it is a public API).
    #[default]
    AnyOrigin,
    /// Only these origins.
    Origins(Vec<HeaderValue>),
}

/// The router with every endpoint, the docs and the middleware; the limits are the state's.
pub fn app(state: Arc<AppState>, cors_policy: &CorsPolicy) -> Router {
    let limits = state.limits.clone();
    let request_id = HeaderName::from_static("x-request-id");
    let cors = CorsLayer::new().allow_methods([Method::GET, Method::POST]).allow_headers(Any).expose_headers(Any);
    let cors = match cors_policy {
        CorsPolicy::AnyOrigin => cors.allow_origin(Any),
        CorsPolicy::Origins(origins) => cors.allow_origin(AllowOrigin::list(origins.clone())),
    };
    let max_uri = limits.max_uri_bytes;
    let (max_body, body_timeout) = (limits.max_body_bytes, limits.body_timeout);
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.concurrency));
    let spec = openapi::spec_with(&limits);
    let endpoints: Arc<str> = openapi::endpoints(&spec).into();
    let site = routes::web::Site::new(&limits, state.search.background_workers());
    Router::new()
        .route("/probe", get(routes::probe::probe).post(routes::probe::probe_batch))
        .route("/mainline", get(routes::probe::mainline))
        .route("/tables", get(routes::info::tables))
        .route("/health", get(routes::info::health))
        .route("/metrics", get(routes::info::metrics))
        .route("/files", get(routes::files::list))
        .route("/files/{name}", get(routes::files::download))
        .with_state(state)
        .merge(site.router())
        .merge(SwaggerUi::new("/docs").url("/openapi.json", spec))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(move |request: Request| not_found(request, Arc::clone(&endpoints)))
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        // A bug must still answer: a panic becomes a logged 500 problem, not a dropped connection.
        .layer(CatchPanicLayer::custom(|cause: Box<dyn std::any::Any + Send>| {
            let message = cause
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| cause.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            ApiError::Internal(format!("handler panicked: {message}")).into_response()
        }))
        .layer(ServiceBuilder::new().layer(HandleErrorLayer::new(overload_error)).timeout(limits.timeout))
        // One semaphore for the whole server (a layer of tower's would be one per route).
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            limit_concurrency(request, next, Arc::clone(&permits))
        }))
        // Outside the concurrency limit: a kept answer costs a copy of a few headers.
        .layer(middleware::from_fn_with_state(Arc::new(precompressed::Precompressed::default()), precompressed::serve))
        // Outside it too: a body trickled in holds no slot while it arrives.
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            read_body(request, next, max_body, body_timeout)
        }))
        .layer(middleware::from_fn(move |request: Request, next: Next| check_declared_length(request, next, max_body)))
        .layer(middleware::from_fn(move |request: Request, next: Next| check_uri(request, next, max_uri)))
        // Never a file download: its bytes are what its SHA-256 and its byte ranges describe.
        .layer(CompressionLayer::new().compress_when(DefaultPredicate::new().and(
            |_: axum::http::StatusCode,
             _: axum::http::Version,
             headers: &axum::http::HeaderMap,
             _: &axum::http::Extensions| { !headers.contains_key(axum::http::header::ACCEPT_RANGES) },
        )))
        .layer(cors)
        .layer(middleware::from_fn(metrics::track))
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &Request| {
                    // The id was vetted below; the URI is cut short, since this runs before
                    // its size is checked and a log line must not grow with what a client sends.
                    let id = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("-");
                    let uri = request.uri().to_string();
                    let uri = match uri.char_indices().nth(MAX_LOGGED_URI) {
                        Some((cut, _)) => format!("{}…", &uri[..cut]),
                        None => uri,
                    };
                    tracing::info_span!("request", method = %request.method(), uri = %uri, id = %id)
                })
                .on_response(log_response),
        )
        .layer(SetRequestIdLayer::new(request_id, SequentialRequestId::default()))
        .layer(middleware::from_fn(drop_unfit_request_id))
}

/// Logs a response in its request's span: routine refusals (4xx: bad input, rate limits,
/// overload) at debug, so that a client flooding the server with them, at no token's cost,
/// cannot fill its disk with log lines; everything else at info.
fn log_response(response: &Response, latency: std::time::Duration, span: &tracing::Span) {
    let status = response.status();
    let micros = latency.as_micros();
    if status.is_client_error() {
        tracing::debug!(parent: span, status = status.as_u16(), latency_us = micros, "finished processing request");
    } else {
        tracing::info!(parent: span, status = status.as_u16(), latency_us = micros, "finished processing request");
    }
}

/// The longest URI prefix written to the log.
const MAX_LOGGED_URI: usize = 200;

/// A client's `x-request-id` is kept (and echoed) only if it is a short token; any other is
/// replaced by one of ours, so that logs and answers never carry what a client made up at
/// length.
async fn drop_unfit_request_id(mut request: Request, next: Next) -> Response {
    let fit = |v: &HeaderValue| {
        let bytes = v.as_bytes();
        !bytes.is_empty()
            && bytes.len() <= 64
            && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    if request.headers().get("x-request-id").is_some_and(|v| !fit(v)) {
        request.headers_mut().remove("x-request-id");
    }
    next.run(request).await
}

/// Request ids `1`, `2`, … unless the client sent its own `x-request-id`.
#[derive(Clone, Default)]
struct SequentialRequestId(Arc<AtomicU64>);

impl MakeRequestId for SequentialRequestId {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        Some(RequestId::new(HeaderValue::from(n)))
    }
}

async fn check_uri(request: Request, next: Next, max: usize) -> Response {
    let length = request.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if length > max {
        return ApiError::UriTooLong(max).into_response();
    }
    next.run(request).await
}

/// Refuses at once (413) a request that announces a body over the limit, before any of it
/// is read: its sender does not get to upload it first, and one that asked
/// `Expect: 100-continue` is answered without being told to go on.
async fn check_declared_length(request: Request, next: Next, max: usize) -> Response {
    let declared = request.headers().get(axum::http::header::CONTENT_LENGTH);
    if let Some(length) = declared.and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok()) {
        if length > max as u64 {
            return ApiError::BodyTooLarge(format!("the body declares {length} bytes; at most {max} are accepted"))
                .into_response();
        }
    }
    next.run(request).await
}

/// Reads the request's whole body (at most `max` bytes) within `deadline` before anything
/// else is spent on it; a body still arriving at the deadline gets 408, one over the limit 413.
async fn read_body(request: Request, next: Next, max: usize, deadline: Duration) -> Response {
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, max)).await {
        Ok(Ok(bytes)) => next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await,
        // Over the limit, or cut off by the client (which then reads no answer).
        Ok(Err(_)) => {
            ApiError::BodyTooLarge(format!("the body is longer than {max} bytes, or was cut off")).into_response()
        }
        Err(_) => ApiError::BodyTimeout(deadline).into_response(),
    }
}

/// Refuses a request at once (429) when `--concurrency` requests are already in flight.
async fn limit_concurrency(request: Request, next: Next, permits: Arc<tokio::sync::Semaphore>) -> Response {
    match permits.try_acquire_owned() {
        Ok(permit) => {
            let response = next.run(request).await;
            drop(permit);
            response
        }
        Err(_) => ApiError::Overloaded.into_response(),
    }
}

async fn overload_error(error: BoxError) -> ApiError {
    if error.is::<tower::timeout::error::Elapsed>() {
        ApiError::Timeout
    } else {
        ApiError::Internal(error.to_string())
    }
}

/// A path no route serves: the answer names the API's endpoints (`endpoints`, from the OpenAPI
/// document) and the explorer.
async fn not_found(request: Request, endpoints: Arc<str>) -> ApiError {
    ApiError::NotFound(format!(
        "no endpoint at {}; see /docs for the API ({endpoints}) and / for the explorer",
        request.uri().path()
    ))
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::MethodNotAllowed(format!("{} is not allowed on {}", request.method(), request.uri().path()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[tokio::test]
    async fn overload_and_timeout_become_problems() {
        let elapsed = overload_error(Box::new(tower::timeout::error::Elapsed::new())).await;
        assert_eq!(elapsed.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(elapsed.problem().kind, "/problems/timeout");
    }
}
