//! The CLI and the API speak one language: `shogi4 probe|mainline POS --json` prints exactly
//! the body that `GET /probe|/mainline?pos=POS` sends from the same tables, errors and
//! searched positions included (the CLI's problem document on stderr; a search's work
//! statistics aside), and `shogi4 info --json` is a `GET /tables` entry.

use std::process::Command;
use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use serde_json::Value as Json;
use shogi4_engine::MaterialIndex;
use shogi4_server::search::SearchSettings;
use shogi4_server::{app, AppState, CorsPolicy, ServiceLimits, TableLoading};
use shogi4_tablebase::{solve, Silent};
use tower::ServiceExt;

/// What the CLI printed, as text (so field order counts): stdout on success, the problem on
/// stderr on failure.
fn cli(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_shogi4")).args(args).output().expect("the binary runs");
    let text = if output.status.success() { output.stdout } else { output.stderr };
    (output.status.success(), String::from_utf8(text).unwrap().trim_end().to_string())
}

/// The body without a search's work statistics (its milliseconds differ run to run).
fn without_search_stats(body: &str) -> String {
    match body.find(r#""search":{"#) {
        Some(start) => {
            let end = start + body[start..].find("},").expect("stats close") + 2;
            format!("{}{}", &body[..start], &body[end..])
        }
        None => body.to_string(),
    }
}

/// A search budget in nodes alone, so that a cold search gives the same answer every time.
const SEARCH_NODES: u64 = 20_000;

fn limits() -> ServiceLimits {
    let search =
        SearchSettings { nodes: SEARCH_NODES, time: std::time::Duration::from_secs(600), ..SearchSettings::default() };
    ServiceLimits { search, ..ServiceLimits::default() }
}

fn percent_encoded(text: &str) -> String {
    text.bytes().map(|b| format!("%{b:02X}")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_json_is_the_api_body() {
    let dir = tempfile::tempdir().unwrap();
    let games = ["KK", "KKC", "KKCF"];
    for name in games {
        solve(name.parse().unwrap(), &Silent).table.write_to_dir(dir.path()).unwrap();
    }
    let tables = dir.path().to_str().unwrap();
    // A fresh server per request: its searchers then start as cold as the CLI's.
    let get = |uri: String| {
        let router = app(
            Arc::new(AppState::load(dir.path(), TableLoading::default(), limits()).unwrap()),
            &CorsPolicy::default(),
        );
        async move {
            let response = router.oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
            let ok = response.status().is_success();
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
            (ok, String::from_utf8(bytes.to_vec()).unwrap())
        }
    };

    let mut positions = vec![
        "trfk/3c/C3/KFRT b - 1".to_string(), // the full game: searched
        "k3/4/1K2/4 w Ccfrt 1".to_string(),  // no table for KKCCFRT: searched
        "k3/4/4/K1C1 w FRT 1".to_string(),   // no table for KKCFRT: searched
        "k3/4/4/K3 b Q 1".to_string(),       // unparsable
        "kk2/4/4/K3 b - 1".to_string(),      // illegal
        "k3/4/4/K+C2 w - 1".to_string(),
        "k3/4/4/K3[C] w 0 1".to_string(), // FEN
    ];
    for name in games {
        let index = MaterialIndex::new(name.parse().unwrap());
        let step = (index.slots() / 40).max(1);
        for slot in (0..index.slots()).step_by(step as usize) {
            let position = index.position_at(slot);
            positions.push(position.to_sfen());
            positions.push(position.flipped().to_sfen());
        }
    }
    let mut compared = 0;
    let mut searched = 0;
    for (i, pos) in positions.iter().enumerate() {
        for endpoint in ["probe", "mainline"] {
            if endpoint == "mainline" && i % 5 != 0 {
                continue;
            }
            let nodes = SEARCH_NODES.to_string();
            let args = [endpoint, pos, "--tables", tables, "--json", "--search-ms", "0", "--search-nodes", &nodes];
            let (cli_ok, from_cli) = cli(&args);
            let (api_ok, from_api) = get(format!("/{endpoint}?pos={}", percent_encoded(pos))).await;
            assert_eq!(cli_ok, api_ok, "{endpoint} {pos}");
            assert_eq!(without_search_stats(&from_cli), without_search_stats(&from_api), "{endpoint} {pos}");
            searched += usize::from(from_api.contains(r#""source":"search""#));
            compared += 1;
        }
    }
    assert!(compared > 200 && searched >= 4, "{compared} compared, {searched} searched");

    let (_, listed) = get("/tables".to_string()).await;
    let listed: Json = serde_json::from_str(&listed).unwrap();
    for (i, name) in games.iter().enumerate() {
        let file = dir.path().join(format!("{name}.s4tb"));
        let (ok, info) = cli(&["info", file.to_str().unwrap(), "--json"]);
        assert!(ok);
        assert_eq!(serde_json::from_str::<Json>(&info).unwrap(), listed["tables"][i]);
    }
}

/// The same, for answers the proof store and a certificate give: `shogi4 probe|mainline
/// --tables DIR --store S` against a server over the same tables, a copy of the same store and
/// the certificates of `DIR/certificates`.
#[tokio::test(flavor = "multi_thread")]
async fn cli_json_is_the_api_body_for_stored_and_certified_answers() {
    let repository = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    std::fs::create_dir_all(tables.join("certificates")).unwrap();
    solve("KK".parse().unwrap(), &Silent).table.write_to_dir(&tables).unwrap();
    std::fs::copy(repository.join("tables/certificates/a2a3.s4cert"), tables.join("certificates/a2a3.s4cert")).unwrap();
    // The published opening proofs in a store; each side gets a copy, since both record.
    let seeded = dir.path().join("seeded.redb");
    {
        let (store, _) = shogi4_proofs::ProofStore::open(&seeded).unwrap();
        store.import(&repository.join("tables/opening.proofs"), shogi4_proofs::Origin::Import).unwrap();
    }

    let after_c1b2 = "trfk/3c/CR2/KF1T w - 1"; // proven in the store, not within the budget
    let after_a2a3 = "trfk/C2c/4/KFRT w - 1"; // certified by a2a3.s4cert
    let mut positions = vec![after_c1b2.to_string(), after_a2a3.to_string()];
    for pos in [after_c1b2, after_a2a3] {
        let position = shogi4_engine::Position::parse(pos).unwrap();
        positions.extend(position.successors().map(|(_, child)| child.to_sfen()));
    }
    let (mut compared, mut stored, mut certified) = (0, 0, 0);
    for (i, pos) in positions.iter().enumerate() {
        for endpoint in ["probe", "mainline"] {
            if endpoint == "mainline" && i % 3 != 0 {
                continue;
            }
            let (for_cli, for_api) =
                (dir.path().join(format!("cli-{i}.redb")), dir.path().join(format!("api-{i}.redb")));
            std::fs::copy(&seeded, &for_cli).unwrap();
            std::fs::copy(&seeded, &for_api).unwrap();
            let nodes = SEARCH_NODES.to_string();
            let (table_dir, store) = (tables.to_str().unwrap(), for_cli.to_str().unwrap());
            let args = [endpoint, pos, "--tables", table_dir, "--store", store, "--json", "--search-ms", "0"];
            let (cli_ok, from_cli) = cli(&[&args[..], &["--search-nodes", &nodes]].concat());

            let (store, _) = shogi4_proofs::ProofStore::open(&for_api).unwrap();
            let state = AppState::load(&tables, TableLoading::default(), limits()).unwrap().with_proof_store(store);
            let (proven, report) = shogi4_answer::Certified::load(&tables.join("certificates"));
            assert!(report.iter().all(|(_, loaded)| loaded.is_ok()) && !proven.is_empty());
            state.search.set_certified(proven);
            let router = app(Arc::new(state), &CorsPolicy::default());
            let uri = format!("/{endpoint}?pos={}", percent_encoded(pos));
            let response = router.oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
            let api_ok = response.status().is_success();
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
            let from_api = String::from_utf8(bytes.to_vec()).unwrap();

            assert_eq!(cli_ok, api_ok, "{endpoint} {pos}");
            assert_eq!(without_search_stats(&from_cli), without_search_stats(&from_api), "{endpoint} {pos}");
            stored += usize::from(from_api.contains(r#""source":"store""#));
            certified += usize::from(from_api.contains(r#""source":"certificate""#));
            compared += 1;
        }
    }
    assert!(
        compared >= 15 && stored >= 2 && certified >= 2,
        "{compared} compared, {stored} stored, {certified} certified"
    );
}

/// `shogi4 publish DIR` writes what a server serving DIR sends its mirrors: `SHA256SUMS` and
/// `manifest.json`, byte for byte (one writer of both, where a shell script once wrote its own).
#[tokio::test(flavor = "multi_thread")]
async fn published_files_are_the_servers() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["KK", "KKC", "KKCF"] {
        solve(name.parse().unwrap(), &Silent).table.write_to_dir(dir.path()).unwrap();
    }
    let state = AppState::load(dir.path(), TableLoading::default(), limits()).unwrap();
    let router = app(Arc::new(state), &CorsPolicy::default());
    let (ok, said) = cli(&["publish", dir.path().to_str().unwrap()]);
    assert!(ok, "{said}");
    for name in ["SHA256SUMS", "manifest.json"] {
        let request = Request::get(format!("/files/{name}")).body(Body::empty()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert!(response.status().is_success(), "{name}");
        let served = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        let written = std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&served), "{name}");
    }
    let sums = std::fs::read_to_string(dir.path().join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 3, "{sums}");
    // A damaged table is refused with its reason, and nothing is written.
    let damaged = dir.path().join("KKC.s4tb");
    let mut bytes = std::fs::read(&damaged).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&damaged, bytes).unwrap();
    std::fs::remove_file(dir.path().join("SHA256SUMS")).unwrap();
    let (ok, said) = cli(&["publish", dir.path().to_str().unwrap()]);
    assert!(!ok && said.contains("KKC.s4tb"), "{said}");
    assert!(!dir.path().join("SHA256SUMS").exists());
}
