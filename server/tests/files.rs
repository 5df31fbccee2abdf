//! `GET /files`: what a mirror downloads, checked against the files on disk, and the bounds a
//! download is held to (byte rate, slots, stalled readers).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, HeaderMap, Request, StatusCode};
use axum::Router;
use serde_json::Value as Json;
use sha2::Digest;
use shogi4_server::downloads::DownloadSettings;
use shogi4_server::rate_limit::RateSettings;
use shogi4_server::{app, AppState, CorsPolicy, ServiceLimits, TableLoading};
use shogi4_tablebase::{solve, Silent};
use tower::ServiceExt;

fn tables_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("files-tables");
        for name in ["KK", "KKC", "KKCF"] {
            solve(name.parse().unwrap(), &Silent).table.write_to_dir(&dir).unwrap();
        }
        dir
    })
}

fn router_with(downloads: DownloadSettings) -> Router {
    let limits = ServiceLimits {
        rate: RateSettings { per_second: 0, ..RateSettings::default() },
        downloads,
        ..ServiceLimits::default()
    };
    let state = AppState::load(tables_dir(), TableLoading::default(), limits).unwrap();
    app(Arc::new(state), &CorsPolicy::default())
}

fn router() -> Router {
    router_with(DownloadSettings { kib_per_second: 0, ..DownloadSettings::default() })
}

async fn fetch(router: &Router, uri: &str, headers: &[(header::HeaderName, &str)]) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut request = Request::get(uri);
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    let response = router.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 26).await.unwrap().to_vec();
    (status, headers, bytes)
}

fn sha256(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn every_listed_file_downloads_as_listed_and_as_on_disk() {
    let router = router();
    let (status, _, body) = fetch(&router, "/files", &[]).await;
    assert_eq!(status, StatusCode::OK);
    let list: Json = serde_json::from_slice(&body).unwrap();
    let files = list["files"].as_array().unwrap();
    let names: Vec<&str> = files.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["KK.s4tb", "KKC.s4tb", "KKCF.s4tb", "SHA256SUMS", "manifest.json"]);
    for file in files {
        let name = file["name"].as_str().unwrap();
        let (status, headers, bytes) = fetch(&router, &format!("/files/{name}"), &[]).await;
        assert_eq!(status, StatusCode::OK, "{name}");
        assert_eq!(bytes.len() as u64, file["bytes"].as_u64().unwrap(), "{name}");
        assert_eq!(sha256(&bytes), file["sha256"], "{name}");
        assert_eq!(headers[header::ETAG], format!("\"{}\"", file["sha256"].as_str().unwrap()));
        assert_eq!(headers[header::ACCEPT_RANGES], "bytes");
        assert!(headers.get(header::CONTENT_ENCODING).is_none(), "{name} must not be compressed");
        if name.ends_with(".s4tb") {
            assert_eq!(bytes, std::fs::read(tables_dir().join(name)).unwrap(), "{name} differs from its file");
            assert_eq!(file["material"], name.trim_end_matches(".s4tb"));
        }
    }
    // SHA256SUMS is what `sha256sum` writes, for the same files.
    let (_, _, sums) = fetch(&router, "/files/SHA256SUMS", &[]).await;
    let sums = String::from_utf8(sums).unwrap();
    for line in sums.lines() {
        let (hash, name) = line.split_once("  ").unwrap();
        assert_eq!(hash, sha256(&std::fs::read(tables_dir().join(name)).unwrap()), "{name}");
    }
    assert_eq!(sums.lines().count(), 3);
    // The manifest describes each table as `GET /tables` does, with its file and hash.
    let (_, _, manifest) = fetch(&router, "/files/manifest.json", &[]).await;
    let manifest: Json = serde_json::from_slice(&manifest).unwrap();
    let (_, _, tables) = fetch(&router, "/tables", &[]).await;
    let tables: Json = serde_json::from_slice(&tables).unwrap();
    for (entry, table) in manifest["tables"].as_array().unwrap().iter().zip(tables["tables"].as_array().unwrap()) {
        assert_eq!(entry["checksum"], table["checksum"]);
        assert_eq!(entry["file"], format!("{}.s4tb", table["material"].as_str().unwrap()));
        assert!(sums.contains(&format!("{}  {}", entry["sha256"].as_str().unwrap(), entry["file"].as_str().unwrap())));
    }
}

#[tokio::test]
async fn ranges_validators_and_unknown_names() {
    let router = router();
    let file = std::fs::read(tables_dir().join("KKCF.s4tb")).unwrap();
    let len = file.len();
    let (status, headers, bytes) = fetch(&router, "/files/KKCF.s4tb", &[(header::RANGE, "bytes=100-199")]).await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(bytes, file[100..200]);
    assert_eq!(headers[header::CONTENT_RANGE], format!("bytes 100-199/{len}"));
    let etag = headers[header::ETAG].to_str().unwrap().to_string();
    // A resumed transfer: from an offset to the end, and the last bytes.
    let (status, _, bytes) = fetch(&router, "/files/KKCF.s4tb", &[(header::RANGE, "bytes=1000-")]).await;
    assert_eq!((status, &bytes[..]), (StatusCode::PARTIAL_CONTENT, &file[1000..]));
    let (_, _, bytes) = fetch(&router, "/files/KKCF.s4tb", &[(header::RANGE, "bytes=-10")]).await;
    assert_eq!(bytes, file[len - 10..]);
    // If-Range with the current ETag keeps the range; with another it gets the whole file.
    let (status, _, _) =
        fetch(&router, "/files/KKCF.s4tb", &[(header::RANGE, "bytes=0-9"), (header::IF_RANGE, &etag)]).await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    let (status, _, bytes) =
        fetch(&router, "/files/KKCF.s4tb", &[(header::RANGE, "bytes=0-9"), (header::IF_RANGE, "\"old\"")]).await;
    assert_eq!((status, bytes.len()), (StatusCode::OK, len));
    // Past the end: 416, saying how long the file is.
    let past = format!("bytes={len}-");
    let (status, headers, body) = fetch(&router, "/files/KKCF.s4tb", &[(header::RANGE, &past)]).await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(headers[header::CONTENT_RANGE], format!("bytes */{len}"));
    let problem: Json = serde_json::from_slice(&body).unwrap();
    assert_eq!(problem["type"], "/problems/range-not-satisfiable");
    // A copy that is current is not sent again.
    let (status, _, bytes) = fetch(&router, "/files/KKCF.s4tb", &[(header::IF_NONE_MATCH, &etag)]).await;
    assert_eq!((status, bytes.len()), (StatusCode::NOT_MODIFIED, 0));
    // Names that are not served, path tricks included.
    for name in ["KKCC.s4tb", "kkcf.s4tb", "KKCF", "..%2FKKCF.s4tb", ".KKCF.s4tb.tmp-1", "README.md"] {
        let (status, headers, body) = fetch(&router, &format!("/files/{name}"), &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{name}");
        assert_eq!(headers[header::CONTENT_TYPE], "application/problem+json");
        let problem: Json = serde_json::from_slice(&body).unwrap();
        assert_eq!(problem["type"], "/problems/no-such-file", "{name}");
    }
}

/// The byte rate holds whatever the client asks: a file of about 285 KiB at 128 KiB/s (a
/// burst of one second's worth) takes over a second.
#[tokio::test]
async fn downloads_are_paced_by_bytes() {
    let router = router_with(DownloadSettings { kib_per_second: 128, ..DownloadSettings::default() });
    let file = std::fs::read(tables_dir().join("KKCF.s4tb")).unwrap();
    let started = Instant::now();
    let (status, _, bytes) = fetch(&router, "/files/KKCF.s4tb", &[]).await;
    let took = started.elapsed();
    assert_eq!((status, bytes == file), (StatusCode::OK, true));
    let floor = Duration::from_secs_f64((file.len() as f64 / 1024.0 - 128.0) / 128.0 * 0.9);
    assert!(took >= floor, "{} bytes in {took:?}, faster than 128 KiB/s allows ({floor:?})", file.len());
}

/// Slots: one client cannot hold more than its share, a full house is refused with a
/// problem and `Retry-After`, and a reader that stalls gives its slot up.
#[tokio::test]
async fn download_slots_are_bounded_and_stalled_readers_let_go() {
    let settings = DownloadSettings {
        kib_per_second: 0,
        max_downloads: 4,
        max_per_client: 1,
        stall: Duration::from_millis(300),
        ..DownloadSettings::default()
    };
    let router = router_with(settings);
    // Started but never read: the body holds the slot until it stalls.
    let held = router.clone().oneshot(Request::get("/files/KKCF.s4tb").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(held.status(), StatusCode::OK);
    let (status, headers, body) = fetch(&router, "/files/KKC.s4tb", &[]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(headers.contains_key(header::RETRY_AFTER));
    let problem: Json = serde_json::from_slice(&body).unwrap();
    assert_eq!(problem["type"], "/problems/downloads-busy");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let (status, _, _) = fetch(&router, "/files/KKC.s4tb", &[]).await;
    assert_eq!(status, StatusCode::OK, "the stalled transfer still holds the client's slot");
    // The stalled body ends short, never with bytes past what was sent.
    let cut = axum::body::to_bytes(held.into_body(), 1 << 26).await;
    let whole = std::fs::metadata(tables_dir().join("KKCF.s4tb")).unwrap().len() as usize;
    assert!(cut.map_or(true, |b| b.len() < whole), "a stalled transfer was finished");
}

/// Plain and compressed tables side by side: a directory holding both kinds answers every
/// probe exactly as the plain set does, and offers the compressed file for download as it is.
#[tokio::test]
async fn plain_and_compressed_tables_are_served_side_by_side() {
    let mixed = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("files-mixed");
    let _ = std::fs::remove_dir_all(&mixed);
    std::fs::create_dir_all(&mixed).unwrap();
    for name in ["KK", "KKC"] {
        std::fs::copy(tables_dir().join(format!("{name}.s4tb")), mixed.join(format!("{name}.s4tb"))).unwrap();
    }
    let plain = shogi4_tablebase::open_table(&tables_dir().join("KKCF.s4tb")).unwrap();
    let packed = plain.to_compressed(&Silent).unwrap();
    std::fs::write(mixed.join("KKCF.s4tb"), &packed).unwrap();
    let limits =
        ServiceLimits { rate: RateSettings { per_second: 0, ..RateSettings::default() }, ..ServiceLimits::default() };
    let state = AppState::load(&mixed, TableLoading::default(), limits).unwrap();
    let mixed_router = app(Arc::new(state), &CorsPolicy::default());
    let (_, _, health) = fetch(&mixed_router, "/health", &[]).await;
    assert_eq!(serde_json::from_slice::<Json>(&health).unwrap()["status"], "ok");
    let reference = router();
    let index = plain.index();
    for slot in (0..plain.header().slots).step_by(997) {
        let uri = format!("/probe?pos={}", index.position_at(slot).to_sfen().replace(" ", "_").replace("+", "%2B"));
        let (status, _, ours) = fetch(&mixed_router, &uri, &[]).await;
        let (_, _, theirs) = fetch(&reference, &uri, &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ours, theirs, "{uri}");
    }
    let (_, _, file) = fetch(&mixed_router, "/files/KKCF.s4tb", &[]).await;
    assert!(file == packed, "the compressed file is not sent as it is");
}

/// A reader slower than the minimum rate loses its transfer, though it never stalls for the
/// stall time; one that keeps up gets the whole file.
#[tokio::test]
async fn a_reader_below_the_minimum_rate_is_cut() {
    use futures_util::StreamExt;
    let settings = DownloadSettings {
        kib_per_second: 0,
        max_downloads: 4,
        max_per_client: 2,
        stall: Duration::from_millis(300),
        min_kib_per_second: 4000,
    };
    let router = router_with(settings);
    let whole = std::fs::metadata(tables_dir().join("KKCF.s4tb")).unwrap().len() as usize;
    let read = |pause: Duration| {
        let router = router.clone();
        async move {
            let response = router.oneshot(Request::get("/files/KKCF.s4tb").body(Body::empty()).unwrap()).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let mut chunks = response.into_body().into_data_stream();
            let mut received = 0;
            // A chunk every `pause`: under the stall time each, but below the rate in all.
            while let Some(Ok(chunk)) = chunks.next().await {
                received += chunk.len();
                tokio::time::sleep(pause).await;
            }
            received
        }
    };
    assert_eq!(read(Duration::ZERO).await, whole, "a reader that keeps up was cut");
    let slow = read(Duration::from_millis(200)).await;
    assert!(slow < whole, "a reader at about 320 KiB/s against a minimum of 4,000 got all {whole} bytes");
}
