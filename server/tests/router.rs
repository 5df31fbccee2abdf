//! In-process tests of every endpoint and every error class, through `tower::ServiceExt::oneshot`.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use serde_json::Value as Json;
use shogi4_server::rate_limit::RateSettings;
use shogi4_server::search::SearchSettings;
use shogi4_server::{app, openapi, AppState, CorsPolicy, ServiceLimits, TableLoading};
use shogi4_tablebase::{solve, Silent};
use tower::ServiceExt;

/// Tables for KK, KKC, KKF and KKCF, solved once per test process into Cargo's scratch
/// directory for tests (inside `target/`, so nothing is left in the system's temporary folder).
fn tables_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("router-tables");
        for name in ["KK", "KKC", "KKF", "KKCF"] {
            solve(name.parse().unwrap(), &Silent).table.write_to_dir(&dir).unwrap();
        }
        dir
    })
}

fn router_with(limits: ServiceLimits) -> Router {
    let state = AppState::load(tables_dir(), TableLoading::default(), limits).unwrap();
    app(Arc::new(state), &CorsPolicy::default())
}

/// Small batches, so that the batch limit is easy to reach; no rate limit (the end-to-end
/// tests limit real clients by address).
fn limits() -> ServiceLimits {
    ServiceLimits {
        max_batch: 3,
        rate: RateSettings { per_second: 0, ..RateSettings::default() },
        ..ServiceLimits::default()
    }
}

fn router() -> Router {
    router_with(limits())
}

async fn send(router: Router, request: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Json) {
    let response = router.oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
    let json = if bytes.is_empty() { Json::Null } else { serde_json::from_slice(&bytes).unwrap_or(Json::Null) };
    (status, headers, json)
}

async fn get(uri: &str) -> (StatusCode, axum::http::HeaderMap, Json) {
    send(router(), Request::get(uri).body(Body::empty()).unwrap()).await
}

fn assert_problem(status: StatusCode, headers: &axum::http::HeaderMap, body: &Json, expected: StatusCode) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(headers[header::CONTENT_TYPE], "application/problem+json");
    assert_eq!(body["status"], expected.as_u16());
    assert!(body["type"].as_str().unwrap().starts_with("/problems/"));
    assert!(!body["detail"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn probe_answers_value_and_sorted_moves() {
    let (status, headers, body) = get("/probe?pos=k3/4/4/K3_b_C_1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["material"], "KKC");
    assert_eq!(body["category"], "win");
    assert_eq!(body["side_to_move"], "first");
    assert_eq!(body["fen"], "k3/4/4/K3[P] w - - 0 1");
    let moves = body["moves"].as_array().unwrap();
    assert_eq!(moves[0]["dtw"], body["dtw"], "the best move realises the position's distance");
    assert!(moves.iter().any(|m| m["drop"] == true));
    assert!(headers.contains_key(header::ETAG));
    assert!(headers[header::CACHE_CONTROL].to_str().unwrap().contains("max-age"));
    // Sorted best first: wins by shortest distance, draws, losses by longest.
    let rank = |m: &Json| match m["category"].as_str().unwrap() {
        "win" => (0, m["dtw"].as_i64().unwrap()),
        "draw" => (1, 0),
        _ => (2, -m["dtw"].as_i64().unwrap()),
    };
    assert!(moves.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])));
}

#[tokio::test]
async fn fen_and_sfen_give_the_same_answer() {
    let (_, _, sfen) = get("/probe?pos=k3/4/4/K3%20w%20c%201").await;
    let (_, _, fen) = get("/probe?pos=k3/4/4/K3[c]_b_0_1").await;
    assert_eq!(sfen, fen);
    assert_eq!(sfen["side_to_move"], "second");
}

#[tokio::test]
async fn etag_gives_not_modified() {
    let (_, headers, _) = get("/probe?pos=k3/4/4/K3_b_C_1").await;
    let etag = headers[header::ETAG].clone();
    let request =
        Request::get("/probe?pos=k3/4/4/K3_b_C_1").header(header::IF_NONE_MATCH, &etag).body(Body::empty()).unwrap();
    let (status, headers, body) = send(router(), request).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(headers.contains_key(header::CACHE_CONTROL));
    assert_eq!(body, Json::Null);
    // A weak validator of the table's data alone: the same for every encoding of the body,
    // and free of the server's version.
    let tag = etag.to_str().unwrap();
    assert!(tag.starts_with("W/\"") && !tag.contains(env!("CARGO_PKG_VERSION")), "{tag}");
    let request =
        Request::get("/probe?pos=k3/4/4/K3_b_C_1").header(header::ACCEPT_ENCODING, "gzip").body(Body::empty()).unwrap();
    let (_, gzip_headers, _) = send(router(), request).await;
    assert_eq!(gzip_headers[header::ETAG], etag);
}

#[tokio::test]
async fn royal_capture_and_promotion_flags() {
    // The first player's royal on b2 touches the second's on c3: capturing it wins in 1.
    let (_, _, body) = get("/probe?pos=4/2k1/1K2/4_b_-_1").await;
    assert_eq!(body["category"], "win");
    assert_eq!(body["dtw"], 1);
    let first = &body["moves"][0];
    assert_eq!(first["royal_capture"], true);
    assert_eq!(first["capture"], true);
    assert_eq!(first["sfen"], Json::Null);
    let (_, _, body) = get("/probe?pos=k3/2C1/4/K3_b_-_1").await;
    let promoting = body["moves"].as_array().unwrap().iter().find(|m| m["move"] == "c3c4+").unwrap();
    assert_eq!(promoting["promotion"], true);
}

/// An unknown path is pointed to every endpoint the OpenAPI document describes, each of its
/// methods, and to nothing else.
#[tokio::test]
async fn an_unknown_path_names_every_endpoint() {
    let (status, _, body) = get("/nowhere").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let detail = body["detail"].as_str().unwrap();
    let spec = serde_json::to_value(openapi::spec()).unwrap();
    let mut named = 0;
    for (path, item) in spec["paths"].as_object().unwrap() {
        for method in
            item.as_object().unwrap().keys().filter(|k| ["get", "post", "put", "delete"].contains(&k.as_str()))
        {
            let endpoint = format!("{} {path}", method.to_uppercase());
            assert!(
                detail.contains(&format!("{endpoint},")) || detail.contains(&format!("{endpoint})")),
                "{endpoint} in {detail}"
            );
            named += 1;
        }
    }
    assert!(named >= 8 && detail.contains("GET /files/{name}"), "{detail}");
    let listed = detail.split_once('(').and_then(|(_, rest)| rest.split_once(')')).unwrap().0;
    assert_eq!(listed.split(", ").count(), named, "these endpoints and no other: {listed}");
}

#[tokio::test]
async fn error_classes_have_problem_bodies() {
    let cases = [
        ("/probe?pos=trfk/3c/C3/KFRX_b_-_1", StatusCode::BAD_REQUEST),
        ("/probe?pos=k3/4/4/K+C2+b+-+1", StatusCode::BAD_REQUEST),
        ("/probe", StatusCode::BAD_REQUEST),
        ("/probe?pos=kk2/4/4/K3_b_-_1", StatusCode::UNPROCESSABLE_ENTITY),
        ("/nowhere", StatusCode::NOT_FOUND),
    ];
    for (uri, expected) in cases {
        let (status, headers, body) = get(uri).await;
        assert_problem(status, &headers, &body, expected);
    }
    let (_, _, body) = get("/probe?pos=k3/4/4/K3_b_-_1_x").await;
    assert_eq!(body["offset"], 16);
    // With search turned off, a position without a table is a 404 naming what is loaded.
    let no_search = || {
        router_with(ServiceLimits { search: SearchSettings { workers: 0, ..SearchSettings::default() }, ..limits() })
    };
    for uri in ["/probe?pos=trfk/3c/C3/KFRT_b_-_1", "/mainline?pos=k3/4/4/K3_b_T_1"] {
        let (status, headers, body) = send(no_search(), Request::get(uri).body(Body::empty()).unwrap()).await;
        assert_problem(status, &headers, &body, StatusCode::NOT_FOUND);
        assert_eq!(body["loaded"], serde_json::json!(["KK", "KKC", "KKF", "KKCF"]));
    }
    let (_, _, body) =
        send(no_search(), Request::get("/probe?pos=trfk/3c/C3/KFRT_b_-_1").body(Body::empty()).unwrap()).await;
    assert_eq!(body["material"], "KKCCFFRRTT");
    assert!(body["detail"].as_str().unwrap().contains("not solved"));
    let (_, _, body) = get("/probe?pos=k3/4/4/K+C2+b+-+1").await;
    assert!(body["detail"].as_str().unwrap().contains("%2B"));
}

#[tokio::test]
async fn method_body_and_uri_limits() {
    let (status, headers, body) = send(router(), Request::delete("/probe").body(Body::empty()).unwrap()).await;
    assert_problem(status, &headers, &body, StatusCode::METHOD_NOT_ALLOWED);

    let long = format!("/probe?pos={}", "k".repeat(5000));
    let (status, headers, body) = get(&long).await;
    assert_problem(status, &headers, &body, StatusCode::URI_TOO_LONG);

    let small = ServiceLimits { max_body_bytes: 100, ..limits() };
    let big = serde_json::json!({ "positions": vec!["k3/4/4/K3 b C 1"; 10] }).to_string();
    let request =
        Request::post("/probe").header(header::CONTENT_TYPE, "application/json").body(Body::from(big)).unwrap();
    let (status, headers, body) = send(router_with(small), request).await;
    assert_problem(status, &headers, &body, StatusCode::PAYLOAD_TOO_LARGE);
}

fn post_json(body: &str) -> Request<Body> {
    Request::post("/probe").header(header::CONTENT_TYPE, "application/json").body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn batch_answers_in_order_with_errors_per_entry() {
    let body = r#"{"positions": ["k3/4/4/K3 b C 1", "nonsense", "k3/4/4/K3[f] b 0 1"]}"#;
    let (status, _, body) = send(router(), post_json(body)).await;
    assert_eq!(status, StatusCode::OK);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["result"]["material"], "KKC");
    assert_eq!(results[1]["error"]["status"], 400);
    assert_eq!(results[2]["result"]["side_to_move"], "second");

    let (status, headers, body) = send(router(), post_json(r#"{"positions": ["a","b","c","d"]}"#)).await;
    assert_problem(status, &headers, &body, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, headers, body) = send(router(), post_json("{not json")).await;
    assert_problem(status, &headers, &body, StatusCode::BAD_REQUEST);
    let (status, headers, body) = send(router(), post_json(r#"{"positions": 3}"#)).await;
    assert_problem(status, &headers, &body, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn mainline_ends_in_a_royal_capture_after_dtw_plies() {
    let (status, _, body) = get("/mainline?pos=k3/4/4/K3_b_C_1").await;
    assert_eq!(status, StatusCode::OK);
    let line = body["mainline"].as_array().unwrap();
    assert_eq!(line.len() as u64, body["dtw"].as_u64().unwrap());
    assert_eq!(line.last().unwrap()["sfen"], Json::Null);
    assert_eq!(line.last().unwrap()["dtw"], 0);
    assert_eq!(body["winner"], "first");
    let (_, _, draw) = get("/mainline?pos=k3/4/4/3K_b_-_1").await;
    assert_eq!(draw["category"], "draw");
    assert_eq!(draw["mainline"], serde_json::json!([]));
    assert_eq!(draw["winner"], Json::Null);
}

#[tokio::test]
async fn service_endpoints() {
    let (status, _, body) = get("/tables").await;
    assert_eq!(status, StatusCode::OK);
    let tables = body["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 4);
    assert_eq!(tables[0]["material"], "KK");
    assert_eq!(tables[0]["wins"], 168);
    let (_, _, health) = get("/health").await;
    assert_eq!(health["status"], "ok");
    get("/probe?pos=k3/4/4/K3_b_F_1").await;
    let response = router().oneshot(Request::get("/metrics").body(Body::empty()).unwrap()).await.unwrap();
    let text = String::from_utf8(axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap().to_vec()).unwrap();
    assert!(text.contains("http_requests_total"), "{text}");
    assert!(text.contains("tablebase_probes_total"), "{text}");
    let (status, _, spec) = get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(spec["openapi"].as_str().unwrap().starts_with("3.1"));
    let response = router().oneshot(Request::get("/docs/").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[test]
fn checked_in_openapi_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../openapi/openapi.json");
    let generated = openapi::spec_json();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "openapi/openapi.json is stale: run `UPDATE_OPENAPI=1 cargo test -p shogi4-server`"
    );
}

#[tokio::test]
async fn a_damaged_table_is_skipped_and_the_rest_served() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    for name in ["KK", "KKC"] {
        std::fs::copy(tables_dir().join(format!("{name}.s4tb")), dir.join(format!("{name}.s4tb"))).unwrap();
    }
    let mut damaged = std::fs::read(dir.join("KKC.s4tb")).unwrap();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    std::fs::write(dir.join("KKC.s4tb"), damaged).unwrap();
    std::fs::write(dir.join("KKF.s4tb"), b"not a table").unwrap();
    let state = AppState::load(dir, TableLoading::default(), limits()).unwrap();
    let names: Vec<String> = state.tables().tables.tables().map(|(m, _)| m.to_string()).collect();
    assert_eq!(names, ["KK"]);
    let router = app(Arc::new(state), &CorsPolicy::default());
    // Health says which files were refused, and why.
    let (status, _, health) = send(router.clone(), Request::get("/health").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["rejected"].as_array().unwrap().len(), 2, "{health}");
    // The damaged table's positions are searched instead, never answered from bad bytes.
    let (status, _, body) = send(router, Request::get("/probe?pos=k3/4/4/K3_b_C_1").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["source"], "search");
    assert_eq!(body["dtw"], 9);
}

#[tokio::test]
async fn health_is_unavailable_without_tables() {
    let empty = tempfile::tempdir().unwrap();
    let router =
        app(Arc::new(AppState::load(empty.path(), TableLoading::default(), limits()).unwrap()), &CorsPolicy::default());
    let (status, _, health) = send(router, Request::get("/health").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(health["status"], "no-tables");
}

#[tokio::test]
async fn positions_without_a_table_are_searched() {
    // The start position: never a 404; every legal move listed, each with its own answer.
    let (status, headers, body) = get("/probe?pos=trfk/3c/C3/KFRT_b_-_1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["source"], "search");
    assert_eq!(body["material"], "KKCCFFRRTT");
    assert_eq!(body["moves"].as_array().unwrap().len(), 8);
    assert!(body["search"]["nodes"].as_u64().unwrap() > 0);
    assert!(headers.get(header::CACHE_CONTROL).is_some() && headers.get(header::ETAG).is_none());
    match body["category"].as_str().unwrap() {
        "unknown" => assert!(body["no_result_within"].as_u64().unwrap() >= 5 && body["dtw"].is_null()),
        "win" | "loss" => assert!(body["dtw"].is_u64()),
        other => panic!("the start searched for 300 ms: {other}"),
    }
    // A closed game without a table (KKT here): proven, with the line to the royal capture.
    let (status, _, line) = get("/mainline?pos=k3/4/4/K3_b_T_1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(line["source"], "search");
    assert_eq!(line["category"], "win");
    assert_eq!(line["mainline"].as_array().unwrap().len() as u64, line["dtw"].as_u64().unwrap());
    // A draw the search proves (no KKRT table here), said as a table's draw is: no distance,
    // no line, no winner.
    let (status, _, drawn) = get("/probe?pos=4/t1k%2BR/4/1K2_b_-_1").await;
    assert_eq!(status, StatusCode::OK, "{drawn}");
    assert_eq!((drawn["source"].as_str(), drawn["category"].as_str()), (Some("search"), Some("draw")), "{drawn}");
    assert!(drawn["dtw"].is_null() && drawn["no_result_within"].is_null());
    let (_, _, line) = get("/mainline?pos=4/t1k%2BR/4/1K2_b_-_1").await;
    assert_eq!(line["category"], "draw", "{line}");
    assert!(line["mainline"].as_array().unwrap().is_empty() && line["winner"].is_null());
    // A batch shares one search budget and mixes table and search answers.
    let body = r#"{"positions": ["k3/4/4/K3 b C 1", "k3/4/4/K3 b T 1", "trfk/3c/C3/KFRT b - 1"]}"#;
    let (status, _, batch) = send(router(), post_json(body)).await;
    assert_eq!(status, StatusCode::OK);
    let sources: Vec<&str> =
        batch["results"].as_array().unwrap().iter().map(|e| e["result"]["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["table", "search", "search"]);
}

#[tokio::test]
async fn only_unproven_answers_carry_an_estimate_and_it_decides_nothing() {
    // The start position is unknown within the budget: the engine's estimate comes beside
    // the proof search's unknown, and the value fields stay the proof search's.
    let (status, _, body) = get("/probe?pos=trfk/3c/C3/KFRT_b_-_1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "unknown", "the start is not proven in 300 ms");
    assert!(body["dtw"].is_null() && body["dtw_at_least"].is_null() && body["dtw_at_most"].is_null());
    let estimate = &body["estimate"];
    let legal: Vec<&str> = body["moves"].as_array().unwrap().iter().map(|m| m["move"].as_str().unwrap()).collect();
    assert!(legal.contains(&estimate["best_move"].as_str().unwrap()), "{estimate}");
    assert_eq!(estimate["line"][0], estimate["best_move"]);
    let expected = estimate["expected_score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&expected), "{estimate}");
    assert!(estimate["depth"].as_u64().unwrap() >= 4 && estimate["nodes"].as_u64().unwrap() > 0, "{estimate}");
    assert!(estimate["centipawns"].is_i64() != estimate["engine_sees_capture_in"].is_i64(), "{estimate}");
    // Proven answers, by a table or by the search, carry none.
    for pos in ["k3/4/4/K3_b_C_1", "k3/4/4/K3_b_T_1", "4/t1k%2BR/4/1K2_b_-_1"] {
        let (status, _, body) = get(&format!("/probe?pos={pos}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_ne!(body["category"], "unknown", "{pos}");
        assert!(body.get("estimate").is_none(), "{pos}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_of_searches_is_bounded_by_the_workers() {
    // One worker, 200 ms a search: of eight concurrent searches some must be refused (503
    // with Retry-After) rather than queued without end, and none takes much past its budget.
    let search = SearchSettings { workers: 1, time: Duration::from_millis(200), ..SearchSettings::default() };
    let router = router_with(ServiceLimits { search, ..limits() });
    let started = std::time::Instant::now();
    let requests = (0..8).map(|i| {
        // Distinct real-game positions, so that no answer comes from the cache.
        let uri = format!("/probe?pos=trfk/3c/C3/KFRT_{}_-_{}", if i % 2 == 0 { "b" } else { "w" }, i + 1);
        let router = router.clone();
        tokio::spawn(async move { send(router, Request::get(uri).body(Body::empty()).unwrap()).await })
    });
    let mut refused = 0;
    for request in requests.collect::<Vec<_>>() {
        let (status, headers, body) = request.await.unwrap();
        match status {
            StatusCode::OK => {}
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_problem(status, &headers, &body, StatusCode::SERVICE_UNAVAILABLE);
                assert_eq!(body["type"], "/problems/search-busy");
                assert_eq!(headers.get(header::RETRY_AFTER).unwrap(), "1");
                refused += 1;
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert!(refused >= 1, "eight searches on one worker within one budget cannot all be answered");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

/// Percent-encodes every byte, so any byte string can be sent as `pos`.
fn percent_encoded(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("%{b:02X}")).collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

    /// No query string makes the server fail: every answer is a success or a 4xx problem.
    #[test]
    fn any_pos_gets_a_clean_answer(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        for path in ["/probe", "/mainline"] {
            let uri = format!("{path}?pos={}", percent_encoded(&bytes));
            let (status, headers, body) = runtime.block_on(get(&uri));
            proptest::prop_assert!(status.is_success() || status.is_client_error(), "{uri}: {status}");
            if !status.is_success() {
                proptest::prop_assert_eq!(&headers[header::CONTENT_TYPE], "application/problem+json");
                proptest::prop_assert_eq!(body["status"].as_u64(), Some(u64::from(status.as_u16())));
            }
        }
    }
}

#[tokio::test]
async fn spec_examples_are_real_answers() {
    let spec: Json = serde_json::from_str(&openapi::spec_json()).unwrap();
    let schemas = &spec["components"]["schemas"];
    let example = &schemas["MainlineResponse"]["example"];
    let uri = format!("/mainline?pos={}", example["sfen"].as_str().unwrap().replace(' ', "_"));
    assert_eq!(&get(&uri).await.2, example);
    let (_, _, tables) = get("/tables").await;
    assert_eq!(tables["tables"][0], schemas["TablesResponse"]["example"]["tables"][0]);
    let probe_example = &schemas["ProbeResponse"]["example"];
    let uri = format!("/probe?pos={}", probe_example["sfen"].as_str().unwrap().replace(' ', "_"));
    let (_, _, probe) = get(&uri).await;
    assert_eq!(probe["moves"][0], probe_example["moves"][0]);
    assert_eq!(probe["dtw"], probe_example["dtw"]);
}

#[tokio::test]
async fn searches_are_kept_in_the_proof_store_across_restarts() {
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("proofs.redb");
    let uri = "/probe?pos=k3/4/4/K3_b_T_1"; // KKT: no table here, proven by search
    let serve = || {
        let (store, _) = shogi4_proofs::ProofStore::open(&path).unwrap();
        let state = AppState::load(tables_dir(), TableLoading::default(), limits()).unwrap().with_proof_store(store);
        app(Arc::new(state), &CorsPolicy::default())
    };
    let (status, _, first) = send(serve(), Request::get(uri).body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let key = shogi4_engine::Position::parse("k3/4/4/K3 b T 1").unwrap().key();
    {
        let (store, _) = shogi4_proofs::ProofStore::open(&path).unwrap();
        let known = store.get(key).unwrap().expect("the position's outcome is kept");
        assert_eq!(format!("{known:?}"), format!("Proven(Win({}))", first["dtw"]));
        // The root and every move's position.
        assert_eq!(store.len().unwrap() as usize, 1 + first["moves"].as_array().unwrap().len());
    }
    // After a restart the same question is answered from the store with less work.
    let (_, _, second) = send(serve(), Request::get(uri).body(Body::empty()).unwrap()).await;
    assert_eq!(second["dtw"], first["dtw"]);
    assert!(
        second["search"]["nodes"].as_u64() < first["search"]["nodes"].as_u64(),
        "{} vs {}",
        second["search"],
        first["search"]
    );
}

#[tokio::test]
async fn invented_methods_and_paths_add_no_metric_series() {
    let router = router();
    for i in 0..60 {
        let request = Request::builder()
            .method(format!("X{i}").as_str())
            .uri(format!("/made-up-{i}"))
            .body(Body::empty())
            .unwrap();
        let (status, _, _) = send(router.clone(), request).await;
        assert!(status.is_client_error());
    }
    let response = router.oneshot(Request::get("/metrics").body(Body::empty()).unwrap()).await.unwrap();
    let text = String::from_utf8(axum::body::to_bytes(response.into_body(), 1 << 22).await.unwrap().to_vec()).unwrap();
    assert!(!text.contains("made-up") && !text.contains("method=\"X"), "{text}");
    // Whatever clients send, unmatched requests fall into at most five methods × a few statuses.
    let unmatched =
        text.lines().filter(|l| l.starts_with("http_requests_total{") && l.contains("route=\"unmatched\"")).count();
    assert!((1..=10).contains(&unmatched), "{unmatched} unmatched series:\n{text}");
}

#[tokio::test]
async fn request_ids_are_short_tokens_or_ours() {
    let with_id = |id: &str| Request::get("/health").header("x-request-id", id).body(Body::empty()).unwrap();
    let (_, headers, _) = send(router(), with_id("abc-123")).await;
    assert_eq!(headers["x-request-id"], "abc-123");
    for unfit in ["x".repeat(65), "has space".to_string(), "tab\there".to_string()] {
        let (_, headers, _) = send(router(), with_id(&unfit)).await;
        let echoed = headers["x-request-id"].to_str().unwrap();
        assert!(echoed.chars().all(|c| c.is_ascii_digit()), "{unfit:?} came back as {echoed:?}");
    }
}

#[tokio::test]
async fn a_game_being_solved_is_unavailable_and_health_says_so() {
    let state = AppState::load(tables_dir(), TableLoading::default(), limits()).unwrap();
    state.set_solving(["KKT".parse().unwrap()].into_iter().collect());
    let router = app(Arc::new(state), &CorsPolicy::default());
    let (status, headers, problem) =
        send(router.clone(), Request::get("/probe?pos=k3/4/4/K3_b_T_1").body(Body::empty()).unwrap()).await;
    assert_problem(status, &headers, &problem, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(problem["type"], "/problems/table-being-solved");
    assert_eq!(problem["material"], "KKT");
    assert_eq!(headers[header::RETRY_AFTER], "5");
    let (status, _, health) = send(router.clone(), Request::get("/health").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(health["status"], "solving");
    assert_eq!(health["solving"], serde_json::json!(["KKT"]));
    let (_, _, tables) = send(router, Request::get("/tables").body(Body::empty()).unwrap()).await;
    assert_eq!(tables["solving"], serde_json::json!(["KKT"]));
}

async fn get_raw(router: Router, uri: &str, etag: Option<&str>) -> (StatusCode, axum::http::HeaderMap, String) {
    let mut request = Request::get(uri);
    if let Some(tag) = etag {
        request = request.header(header::IF_NONE_MATCH, tag);
    }
    let response = router.oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
    (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test]
async fn the_explorer_is_served_from_the_binary_with_validators() {
    let router = router();
    let mut linked = Vec::new();
    for (path, kind) in [
        ("/", "text/html"),
        ("/?pos=k3/4/4/K3_b_C_1&embed=1", "text/html"),
        ("/games", "text/html"),
        ("/about", "text/html"),
        ("/robots.txt", "text/plain"),
        ("/rules.md", "text/markdown"),
    ] {
        let (status, headers, body) = get_raw(router.clone(), path, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(headers[header::CONTENT_TYPE].to_str().unwrap().starts_with(kind), "{path}");
        assert!(headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap().starts_with("default-src 'self'"));
        let etag = headers[header::ETAG].to_str().unwrap().to_string();
        assert!(etag.starts_with("W/\""), "weak: compression may re-encode the body");
        let (status, _, body_304) = get_raw(router.clone(), path, Some(&etag)).await;
        assert_eq!((status, body_304.as_str()), (StatusCode::NOT_MODIFIED, ""), "{path}");
        // Whatever a page links from /static/ must be there.
        linked.extend(body.match_indices("\"/static/").map(|(at, _)| {
            let rest = &body[at + 1..];
            rest[..rest.find('"').unwrap()].to_string()
        }));
    }
    assert!(linked.len() >= 5, "{linked:?}");
    for path in linked {
        let (status, headers, _) = get_raw(router.clone(), &path, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(headers.contains_key(header::ETAG), "{path}");
    }
    let (status, headers, body) = get(&"/static/../Cargo.toml".replace("..", "%2E%2E")).await;
    assert_problem(status, &headers, &body, StatusCode::NOT_FOUND);
    let (status, headers, body) = get("/static/secret.js").await;
    assert_problem(status, &headers, &body, StatusCode::NOT_FOUND);
    assert!(body["detail"].as_str().unwrap().contains("explorer.js"), "names the files there are");
}

#[tokio::test]
async fn the_about_page_publishes_this_servers_limits() {
    let limits = ServiceLimits {
        max_batch: 17,
        rate: RateSettings { per_second: 7, burst: 70, ..RateSettings::default() },
        ..ServiceLimits::default()
    };
    let (_, _, about) = get_raw(router_with(limits), "/about", None).await;
    assert!(about.contains("7 tokens per second, up to 70 at once"), "{about}");
    assert!(about.contains("<td>17</td>"));
    // The downloads' limits as the defaults set them.
    assert!(about.contains("16384 KiB/s a client, 2 transfers of one client of 8 in all"), "{about}");
    assert!(about.contains("takes nothing for 30 s, or reads slower than 64 KiB/s beyond that, is cut"), "{about}");
    let (_, _, about) = get_raw(router(), "/about", None).await;
    assert!(about.contains("no limit on this server"));
    // Without a proof store nothing is searched in the background, whatever the settings say.
    assert!(about.contains("Search in the background</th><td>none on this server"), "{about}");
    let scratch = tempfile::tempdir().unwrap();
    let (store, _) = shogi4_proofs::ProofStore::open(&scratch.path().join("proofs.redb")).unwrap();
    let state = AppState::load(tables_dir(), TableLoading::default(), ServiceLimits::default()).unwrap();
    let (_, _, about) =
        get_raw(app(Arc::new(state.with_proof_store(store)), &CorsPolicy::default()), "/about", None).await;
    assert!(about.contains("Search in the background</th><td>1 thread, at the lowest priority"), "{about}");
    assert!(about.contains("5 times at most"), "{about}");
}

#[tokio::test]
async fn tables_name_their_longest_win_and_it_probes_as_one() {
    let (_, _, tables) = get("/tables").await;
    for table in tables["tables"].as_array().unwrap() {
        let longest = &table["longest_win"];
        let dtw = longest["dtw"].as_u64().unwrap();
        let (status, _, probed) =
            get(&format!("/probe?pos={}", percent_encoded(longest["sfen"].as_str().unwrap().as_bytes()))).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!((probed["category"].as_str(), probed["dtw"].as_u64()), (Some("win"), Some(dtw)), "{table}");
        let histogram = table["histogram"].as_array().unwrap();
        let longest_odd = (0..histogram.len()).rev().find(|&d| d % 2 == 1 && histogram[d].as_u64() > Some(0));
        assert_eq!(longest_odd, Some(dtw as usize));
    }
}

/// Free files are compressed once per encoding, not for every request: the Swagger bundle
/// (over a megabyte) fetched again and again costs a copy, and decodes to the same bytes.
#[tokio::test]
async fn embedded_files_are_compressed_once_per_encoding() {
    use std::io::Read;
    let router = router();
    let fetch = |encoding: &'static str| {
        let router = router.clone();
        async move {
            let request = Request::get("/docs/swagger-ui-bundle.js")
                .header(header::ACCEPT_ENCODING, encoding)
                .body(Body::empty())
                .unwrap();
            let started = std::time::Instant::now();
            let response = router.oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let coding = response.headers().get(header::CONTENT_ENCODING).map(|v| v.to_str().unwrap().to_string());
            let body = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
            (coding, body, started.elapsed())
        }
    };
    let (_, plain, _) = fetch("identity").await;
    assert!(plain.len() > 1 << 20, "{} bytes", plain.len());
    for (encoding, name) in [("gzip", "gzip"), ("gzip, deflate, br", "br")] {
        let (coding, first, compressing) = fetch(encoding).await;
        assert_eq!(coding.as_deref(), Some(name));
        let mut again = std::time::Duration::ZERO;
        for _ in 0..20 {
            let (coding, body, took) = fetch(encoding).await;
            assert_eq!((coding.as_deref(), &body), (Some(name), &first));
            again += took;
        }
        // Twenty kept answers together cost less than the one compression.
        assert!(again < compressing, "{name}: 20 repeats took {again:?}, the first {compressing:?}");
        let mut decoded = Vec::new();
        match name {
            "gzip" => flate2::read::GzDecoder::new(&first[..]).read_to_end(&mut decoded).unwrap(),
            _ => brotli::Decompressor::new(&first[..], 4096).read_to_end(&mut decoded).unwrap(),
        };
        assert!(decoded == plain, "{name} does not decode to the file");
    }
}

/// Unreadable batch entries are answered, so they are charged: they cannot be sent for free.
#[tokio::test]
async fn unreadable_batch_entries_cost_tokens() {
    let limits =
        ServiceLimits { rate: RateSettings { per_second: 1, burst: 5, ..RateSettings::default() }, ..limits() };
    let router = router_with(limits);
    let garbage = serde_json::json!({ "positions": ["x", "y", "z"] });
    let (status, _, body) = send(router.clone(), post_json(&garbage.to_string())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, headers, body) = send(router, post_json(&garbage.to_string())).await;
    assert_problem(status, &headers, &body, StatusCode::TOO_MANY_REQUESTS);
}

/// The served OpenAPI text states the limits this server was started with, not the defaults.
#[tokio::test]
async fn the_served_spec_states_the_configured_limits() {
    let limits =
        ServiceLimits { rate: RateSettings { per_second: 7, burst: 35, ..RateSettings::default() }, ..limits() };
    let (status, _, spec) = send(router_with(limits), Request::get("/openapi.json").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let text = spec["info"]["description"].as_str().unwrap();
    assert!(text.contains("7 tokens a second, 35 at most"), "{text}");
    assert!(!text.contains("{rate}") && !text.contains("{downloads}") && !text.contains("{stall}"), "{text}");
    let (_, _, spec) = get("/openapi.json").await;
    let text = spec["info"]["description"].as_str().unwrap();
    assert!(text.contains("none on this server (rate limiting is off)"), "{text}");
}

/// Every problem a route answers is named in its OpenAPI document, under its status: the
/// requests that provoke each route's problems (bad and illegal positions, a closed game
/// without a table with search off, a malformed or oversized body, too many positions, a URI
/// or a declared body over the limit, a spent rate limit, a missing file, a range past a
/// file's end), and each answer's `type` looked up in the generated document.
#[tokio::test]
async fn every_problem_a_route_answers_is_in_its_document() {
    let limits = ServiceLimits {
        max_batch: 2,
        max_uri_bytes: 512,
        max_body_bytes: 4096,
        search: SearchSettings { workers: 0, ..SearchSettings::default() },
        rate: RateSettings { per_second: 1, burst: 25, ..RateSettings::default() },
        ..ServiceLimits::default()
    };
    let spec: Json = serde_json::to_value(openapi::spec_with(&limits)).unwrap();
    let long = format!("/probe?pos={}", "k".repeat(600));
    let position_requests = |path: &str| {
        [
            format!("{path}?pos=k3/4/4/K3_b_Q_1"),      // unparsable
            format!("{path}?position=k3/4/4/K3_b_C_1"), // no `pos`
            format!("{path}?pos=kk2/4/4/K3_b_-_1"),     // illegal
            format!("{path}?pos=k3/4/4/K3_b_R_1"),      // KKR: no table, no search
            long.replace("/probe", path),
        ]
    };
    let mut requests: Vec<(&str, &str, Request<Body>)> = Vec::new();
    for (path, uri) in position_requests("/probe").map(|uri| ("/probe", uri)) {
        requests.push(("get", path, Request::get(uri).body(Body::empty()).unwrap()));
    }
    for (path, uri) in position_requests("/mainline").map(|uri| ("/mainline", uri)) {
        requests.push(("get", path, Request::get(uri).body(Body::empty()).unwrap()));
    }
    let post = |body: String| {
        Request::post("/probe").header(header::CONTENT_TYPE, "application/json").body(Body::from(body)).unwrap()
    };
    requests.push(("post", "/probe", post("{not json".into())));
    requests.push((
        "post",
        "/probe",
        post(r#"{"positions": ["k3/4/4/K3 b C 1", "k3/4/4/K3 b C 1", "k3/4/4/K3 b C 1"]}"#.into()),
    ));
    requests.push(("post", "/probe", post(format!(r#"{{"positions": ["{}"]}}"#, "k".repeat(5000)))));
    for path in ["/tables", "/health", "/metrics", "/files", "/files/KKC.s4tb"] {
        let declared = Request::get(path).header(header::CONTENT_LENGTH, "999999").body(Body::empty()).unwrap();
        requests.push(("get", path, declared));
        requests.push(("get", path, Request::get(format!("{path}?{}", "x".repeat(600))).body(Body::empty()).unwrap()));
    }
    requests.push(("get", "/files/{name}", Request::get("/files/KKQ.s4tb").body(Body::empty()).unwrap()));
    let past_end =
        Request::get("/files/KKC.s4tb").header(header::RANGE, "bytes=99999999-").body(Body::empty()).unwrap();
    requests.push(("get", "/files/{name}", past_end));
    // The same client until its tokens are spent.
    for _ in 0..30 {
        requests.push(("get", "/tables", Request::get("/tables").body(Body::empty()).unwrap()));
        requests.push(("get", "/files", Request::get("/files").body(Body::empty()).unwrap()));
    }
    for path in ["/probe", "/mainline", "/files/{name}"] {
        let uri =
            if path == "/files/{name}" { "/files/KKC.s4tb".to_string() } else { format!("{path}?pos=k3/4/4/K3_b_C_1") };
        requests.push(("get", path, Request::get(uri).body(Body::empty()).unwrap()));
    }
    requests.push(("post", "/probe", post(r#"{"positions": ["k3/4/4/K3 b C 1"]}"#.into())));

    let router = router_with(limits);
    let mut seen = std::collections::BTreeSet::new();
    for (method, path, request) in requests {
        let (status, headers, body) = send(router.clone(), request).await;
        let template = if path.starts_with("/files/") { "/files/{name}" } else { path };
        if !status.is_client_error() && !status.is_server_error() {
            continue;
        }
        assert_eq!(headers[header::CONTENT_TYPE], "application/problem+json", "{method} {path}: {status}");
        let kind = body["type"].as_str().unwrap().to_string();
        let documented = &spec["paths"][template][method]["responses"][status.as_str()];
        let listed = documented["description"].as_str().unwrap_or_default();
        assert!(
            listed.contains(&format!("`{kind}`")),
            "{method} {template} answers {status} {kind}, not in {documented}"
        );
        assert!(documented["content"]["application/problem+json"].is_object(), "{method} {template} {status}");
        seen.insert((method, template, kind));
    }
    // The requests provoked what they were written for.
    let kinds: std::collections::BTreeSet<&str> = seen.iter().map(|(_, _, kind)| kind.as_str()).collect();
    for kind in [
        "/problems/unparsable-position",
        "/problems/bad-request",
        "/problems/illegal-position",
        "/problems/no-table",
        "/problems/uri-too-long",
        "/problems/body-too-large",
        "/problems/batch-too-large",
        "/problems/rate-limited",
        "/problems/no-such-file",
        "/problems/range-not-satisfiable",
    ] {
        assert!(kinds.contains(kind), "{kind} never answered: {seen:?}");
    }
    assert!(seen.len() >= 30, "{} (route, problem) pairs: {seen:?}", seen.len());
}
