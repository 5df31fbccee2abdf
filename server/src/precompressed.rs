//! Embedded files compressed once: the explorer's pages and scripts, the Swagger UI bundle
//! (over a megabyte) and the OpenAPI text are free to fetch, so compressing them afresh for
//! every request would let any client spend the server's CPU at no cost. The first `200` of
//! such a path in an encoding is compressed (one at a time, off the async workers) and kept;
//! every later request in that encoding gets the kept bytes. The compression layer passes
//! responses that already carry `Content-Encoding` through untouched.
//!
//! Only paths of embedded files qualify, and only their successful answers are kept, so the
//! cache holds a fixed, small set of entries whatever clients ask for. Conditional and range
//! requests go to the handlers as before (a `304` costs nothing).

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Embedded files are far below this; anything larger is passed on uncompressed here.
const MAX_BODY: usize = 8 << 20;

/// The encodings kept, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Encoding {
    Brotli,
    Gzip,
}

impl Encoding {
    fn name(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
        }
    }

    /// The best one the request accepts (`q=0` refuses one).
    fn preferred(headers: &HeaderMap) -> Option<Encoding> {
        let accepted: Vec<(String, bool)> = headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|item| {
                let mut parts = item.split(';').map(str::trim);
                let name = parts.next().unwrap_or("").to_ascii_lowercase();
                let refused = parts.any(|p| p.replace(' ', "").trim_start_matches("q=").parse::<f32>() == Ok(0.0));
                (name, !refused)
            })
            .collect();
        let accepts = |name: &str| accepted.iter().any(|(n, ok)| *ok && n == name);
        [Encoding::Brotli, Encoding::Gzip].into_iter().find(|e| accepts(e.name()))
    }

    fn compress(self, body: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Encoding::Brotli => {
                let mut out = Vec::new();
                let params = brotli::enc::BrotliEncoderParams { quality: 9, ..Default::default() };
                brotli::BrotliCompress(&mut &body[..], &mut out, &params)?;
                Ok(out)
            }
            Encoding::Gzip => {
                let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
                encoder.write_all(body)?;
                encoder.finish()
            }
        }
    }
}

/// A kept answer: its headers (validators and content type included) and compressed body.
struct Kept {
    headers: HeaderMap,
    body: Bytes,
}

/// The kept answers, by path and encoding.
#[derive(Default)]
pub struct Precompressed {
    kept: Mutex<HashMap<(String, Encoding), Arc<Kept>>>,
    /// Held while compressing: one compression at a time, so that a burst of first requests
    /// compresses each file once.
    compressing: tokio::sync::Mutex<()>,
}

/// Whether `path` is one of the embedded files.
fn embedded(path: &str) -> bool {
    path.starts_with("/static/")
        || path.starts_with("/docs")
        || matches!(path, "/" | "/games" | "/about" | "/rules.md" | "/openapi.json")
}

impl Precompressed {
    fn get(&self, key: &(String, Encoding)) -> Option<Arc<Kept>> {
        self.kept.lock().expect("not poisoned").get(key).cloned()
    }
}

/// The middleware: kept bytes when there are, else the handler's answer, compressed and kept
/// if it is an embedded file's.
pub async fn serve(State(cache): State<Arc<Precompressed>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let plain = request.method() != Method::GET
        || !embedded(request.uri().path())
        || headers.contains_key(header::IF_NONE_MATCH)
        || headers.contains_key(header::RANGE);
    let Some(encoding) = Encoding::preferred(headers).filter(|_| !plain) else {
        return next.run(request).await;
    };
    let key = (request.uri().path().to_string(), encoding);
    if let Some(kept) = cache.get(&key) {
        return respond(&kept);
    }
    let _turn = cache.compressing.lock().await;
    if let Some(kept) = cache.get(&key) {
        return respond(&kept);
    }
    let response = next.run(request).await;
    if response.status() != StatusCode::OK || response.headers().contains_key(header::CONTENT_ENCODING) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let compressed = tokio::task::spawn_blocking(move || encoding.compress(&bytes).map(|c| (c, bytes))).await;
    let Ok(Ok((compressed, _))) = compressed else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut headers = parts.headers;
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding.name()));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    headers.remove(header::CONTENT_LENGTH);
    let kept = Arc::new(Kept { headers, body: Bytes::from(compressed) });
    cache.kept.lock().expect("not poisoned").insert(key, Arc::clone(&kept));
    metrics::counter!("asset_compressions_total").increment(1);
    respond(&kept)
}

fn respond(kept: &Kept) -> Response {
    let mut response = Response::new(Body::from(kept.body.clone()));
    *response.headers_mut() = kept.headers.clone();
    response
}
