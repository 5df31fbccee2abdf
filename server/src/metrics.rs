//! Prometheus metrics: requests by route and status, latency histograms, probes by material.

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// The process-wide recorder's handle (installed on first use).
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            PrometheusBuilder::new()
                .set_buckets(&[0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1.0])
                .expect("non-empty buckets")
                .install_recorder()
                .expect("the only recorder of this process")
        })
        .clone()
}

/// Middleware: counts each request by route, method and status, and times it. Every label
/// comes from a fixed set, so no client can add series: the route is its template (or
/// `unmatched`), the method one of five.
pub async fn track(request: Request, next: Next) -> Response {
    let route =
        request.extensions().get::<MatchedPath>().map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = method_label(request.method());
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!("http_requests_total", "route" => route.clone(), "method" => method, "status" => status)
        .increment(1);
    metrics::histogram!("http_request_duration_seconds", "route" => route).record(started.elapsed().as_secs_f64());
    response
}

/// The method as a label: `GET`, `HEAD`, `POST`, `OPTIONS`, or `other` for anything else.
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The counter of answered positions of one closed game, registered once at start-up so that
/// a probe only increments it.
pub fn probe_counter(material: &str) -> metrics::Counter {
    metrics::counter!("tablebase_probes_total", "material" => material.to_string())
}
