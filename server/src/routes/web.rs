//! The web explorer: pages, styles and scripts embedded in the binary and served with
//! validators. Nothing is loaded from another host and nothing is built: the files under
//! `server/web/` are what browsers get. The about page publishes this server's own limits,
//! filled in once at start-up from [`ServiceLimits`] and from whether its searches go on in
//! the background.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::error::ApiError;
use crate::rate_limit::cost;
use crate::ServiceLimits;

/// One embedded file, ready to send.
struct Asset {
    body: Bytes,
    content_type: &'static str,
    etag: HeaderValue,
}

impl Asset {
    fn new(body: impl Into<Bytes>, content_type: &'static str) -> Asset {
        let body = body.into();
        // FNV-1a: the tag only has to change when the bytes do. Weak, since the compression
        // layer may send these bytes gzip- or brotli-encoded.
        let hash = body.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        Asset { body, content_type, etag: HeaderValue::from_str(&format!("W/\"{hash:016x}\"")).expect("ASCII") }
    }
}

/// Pages by path and static files by name.
pub struct Site {
    pages: HashMap<&'static str, Asset>,
    files: HashMap<&'static str, Asset>,
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// What the pages may load: only this origin; any site may frame the page (`embed=1`).
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors *";

impl Site {
    /// The site, with the about page's limits taken from `limits` and the number of threads
    /// that search in the background.
    pub fn new(limits: &ServiceLimits, background_workers: usize) -> Site {
        let about =
            include_str!("../../web/about.html").replace("<!--LIMITS-->", &limits_table(limits, background_workers));
        let pages = HashMap::from([
            ("/", Asset::new(with_site_header(include_str!("../../web/index.html"), "/"), HTML)),
            ("/games", Asset::new(with_site_header(include_str!("../../web/games.html"), "/games"), HTML)),
            ("/about", Asset::new(with_site_header(&about, "/about"), HTML)),
            ("/robots.txt", Asset::new(include_str!("../../web/robots.txt"), "text/plain; charset=utf-8")),
            ("/rules.md", Asset::new(include_str!("../../../docs/rules.md"), "text/markdown; charset=utf-8")),
        ]);
        let files = HashMap::from([
            ("style.css", Asset::new(include_str!("../../web/style.css"), "text/css; charset=utf-8")),
            ("explorer.js", Asset::new(include_str!("../../web/explorer.js"), JS)),
            ("state.js", Asset::new(include_str!("../../web/state.js"), JS)),
            ("probe.js", Asset::new(include_str!("../../web/probe.js"), JS)),
            ("line.js", Asset::new(include_str!("../../web/line.js"), JS)),
            ("board.js", Asset::new(include_str!("../../web/board.js"), JS)),
            ("verdict.js", Asset::new(include_str!("../../web/verdict.js"), JS)),
            ("moves.js", Asset::new(include_str!("../../web/moves.js"), JS)),
            ("editor.js", Asset::new(include_str!("../../web/editor.js"), JS)),
            ("games.js", Asset::new(include_str!("../../web/games.js"), JS)),
            ("shogi4.js", Asset::new(include_str!("../../web/shogi4.js"), JS)),
            ("favicon.svg", Asset::new(include_str!("../../web/favicon.svg"), "image/svg+xml")),
        ]);
        Site { pages, files }
    }

    /// The routes of the pages and of `/static/{file}`.
    pub fn router(self) -> Router {
        let site = Arc::new(self);
        let mut router = Router::new().route("/static/{file}", get(static_file));
        for path in site.pages.keys() {
            router = router.route(path, get(page));
        }
        router.with_state(site)
    }
}

/// The pages' links, in the order the site header lists them.
const PAGES: [(&str, &str); 4] = [("/", "Explorer"), ("/games", "Tables"), ("/about", "About"), ("/docs", "API")];

/// `html` with its `<!--SITE-HEADER-->` replaced by the header every page shares, the link to
/// `current` marked as the page shown.
fn with_site_header(html: &str, current: &str) -> String {
    let links: Vec<String> = PAGES
        .iter()
        .map(|(path, name)| {
            let mark = if *path == current { " aria-current=\"page\"" } else { "" };
            format!("<a href=\"{path}\"{mark}>{name}</a>")
        })
        .collect();
    let header = format!(
        "<header class=\"site\">\n  <a class=\"brand\" href=\"/\">Shogi4 tablebase</a>\n  <nav aria-label=\"Pages\">{}</nav>\n</header>",
        links.join(" ")
    );
    html.replacen("<!--SITE-HEADER-->", &header, 1)
}

/// The about page's table of this server's limits.
fn limits_table(limits: &ServiceLimits, background_workers: usize) -> String {
    let rate = &limits.rate;
    let per_client = if rate.per_second == 0 {
        "<tr><th scope=\"row\">Per client</th><td>no limit on this server</td></tr>".to_string()
    } else {
        format!(
            "<tr><th scope=\"row\">Per client</th><td>{} tokens per second, up to {} at once</td></tr>",
            rate.per_second, rate.burst
        )
    };
    let background = match background_workers {
        0 => "none on this server".to_string(),
        workers => format!(
            "{workers} thread{}, at the lowest priority, for answers that were not exact (first {} ms a position, \
             doubling with each later search of it, {} times at most)",
            if workers == 1 { "" } else { "s" },
            limits.search.background.time.as_millis(),
            crate::search::MAX_LEVEL
        ),
    };
    let d = &limits.downloads;
    let bandwidth = match d.kib_per_second {
        0 => "any bandwidth".to_string(),
        kib => format!("{kib} KiB/s"),
    };
    let slow = match d.min_kib_per_second {
        0 => String::new(),
        kib => format!(", or reads slower than {kib} KiB/s beyond that,"),
    };
    let downloads = format!(
        "<tr><th scope=\"row\">Table downloads</th><td>{bandwidth} a client, {} transfers of one client of {} in \
         all (a second one only while a slot stays free for a client that has none); a transfer whose reader \
         takes nothing for {} s{slow} is cut</td></tr>",
        d.max_per_client,
        d.max_downloads,
        d.stall.as_secs()
    );
    format!(
        "<table class=\"games\">{per_client}\
         <tr><th scope=\"row\">A probe answered by a table</th><td>{} token (each position of a batch likewise, and each unreadable one)</td></tr>\
         <tr><th scope=\"row\">A best line from a table</th><td>{} tokens</td></tr>\
         <tr><th scope=\"row\">An answer by proof search</th><td>{} tokens, at most {} ms of search</td></tr>\
         <tr><th scope=\"row\">Searches, server-wide</th><td>{} at once, so about {} a second in all, shared among \
         clients: a free search worker goes to the waiting client that holds fewest</td></tr>\
         <tr><th scope=\"row\">Positions per batch</th><td>{}</td></tr>\
         <tr><th scope=\"row\">Time per request</th><td>{} ms, and {} ms to send a request's body</td></tr>\
         <tr><th scope=\"row\">Search in the background</th><td>{background}</td></tr>{downloads}</table>",
        cost::TABLE_PROBE,
        cost::TABLE_MAINLINE,
        cost::SEARCH,
        limits.search.time.as_millis(),
        limits.search.workers,
        (limits.search.workers as u128 * 1000).checked_div(limits.search.time.as_millis()).unwrap_or(0),
        limits.max_batch,
        limits.timeout.as_millis(),
        limits.body_timeout.as_millis(),
    )
}

async fn page(State(site): State<Arc<Site>>, uri: axum::http::Uri, headers: HeaderMap) -> Response {
    match site.pages.get(uri.path()) {
        Some(asset) => send(asset, &headers),
        None => ApiError::NotFound(format!("no page at {}", uri.path())).into_response(),
    }
}

async fn static_file(State(site): State<Arc<Site>>, Path(file): Path<String>, headers: HeaderMap) -> Response {
    match site.files.get(file.as_str()) {
        Some(asset) => send(asset, &headers),
        None => {
            let mut known: Vec<&str> = site.files.keys().copied().collect();
            known.sort_unstable();
            ApiError::NotFound(format!("no static file named {file:?}; there are: {}", known.join(", ")))
                .into_response()
        }
    }
}

/// The file, or 304 when the client's copy is current. Browsers revalidate every time
/// (`no-cache`): the names carry no version, and a 304 costs next to nothing.
fn send(asset: &Asset, request: &HeaderMap) -> Response {
    let headers = [
        (header::ETAG, asset.etag.clone()),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY)),
        (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
    ];
    if crate::conditional::etag_matches(request, &asset.etag) {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    (headers, [(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type))], asset.body.clone())
        .into_response()
}
