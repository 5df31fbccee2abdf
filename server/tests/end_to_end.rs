//! End to end: solve small tables, start the real `shogi4-server` binary on a free port, and
//! query it over TCP like any client would. Every move's value must agree with the position's
//! value, and the mainline must end in a royal capture after exactly `dtw` plies.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Child;

use common::spawn_server;
use serde_json::Value as Json;
use shogi4_engine::{Material, MaterialIndex};
use shogi4_tablebase::{solve, Silent};

/// The server process, killed if the test fails.
struct Server {
    child: Child,
    address: String,
}

impl Server {
    /// The server on `tables`, rate limiting off (these tests send thousands of requests).
    fn start(tables: &std::path::Path) -> Server {
        Server::start_with(tables, &["--rate-limit", "0"])
    }

    fn start_with(tables: &std::path::Path, flags: &[&str]) -> Server {
        Server::start_on(tables, std::path::Path::new("none"), flags)
    }

    /// The server on `tables` with its proof store at `store` (`none`: no store).
    fn start_on(tables: &std::path::Path, store: &std::path::Path, flags: &[&str]) -> Server {
        let mut args: Vec<std::ffi::OsString> = ["--bind", "127.0.0.1:0", "--no-solve"].map(Into::into).into();
        args.extend(["--proof-store".into(), store.into(), "--tables".into(), tables.into()]);
        args.extend(flags.iter().map(Into::into));
        let (child, address) = spawn_server(args);
        Server { child, address }
    }

    /// One HTTP/1.1 request over a fresh TCP connection: (status, JSON body).
    fn get(&self, path_and_query: &str) -> (u16, Json) {
        let (status, _, body) = self.get_from(None, path_and_query);
        (status, body)
    }

    /// One request from a chosen local address (127.0.0.2 is loopback too): (status, head, body).
    fn get_from(&self, local: Option<&str>, path_and_query: &str) -> (u16, String, Json) {
        let mut stream = match local {
            None => TcpStream::connect(&self.address).unwrap(),
            Some(local) => connect_from(local, &self.address),
        };
        write!(stream, "GET {path_and_query} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.address).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").expect("a complete response");
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        (status, head.to_ascii_lowercase(), serde_json::from_str(body).unwrap_or(Json::Null))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP connection to `address` from the local address `local` (bound before connecting).
fn connect_from(local: &str, address: &str) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
        socket.connect(address.parse().unwrap()).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// A temporary directory holding the solved tables of `games`.
fn solved(games: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for game in games {
        solve(game.parse().unwrap(), &Silent).table.write_to_dir(dir.path()).unwrap();
    }
    dir
}

fn url(sfen: &str) -> String {
    sfen.replace(' ', "_").replace('+', "%2B")
}

/// The value a position must have, from its moves as the server reports them.
fn check_moves_agree(probe: &Json) {
    let moves = probe["moves"].as_array().unwrap();
    let category = probe["category"].as_str().unwrap();
    let dtw = probe["dtw"].as_u64();
    let categories: Vec<&str> = moves.iter().map(|m| m["category"].as_str().unwrap()).collect();
    match category {
        "win" => {
            let best = moves.iter().filter(|m| m["category"] == "win").map(|m| m["dtw"].as_u64().unwrap()).min();
            assert_eq!(best, dtw, "{probe}");
        }
        "loss" => {
            assert!(categories.iter().all(|&c| c == "loss"), "{probe}");
            let longest = moves.iter().map(|m| m["dtw"].as_u64().unwrap()).max().unwrap_or(0);
            assert_eq!(Some(longest), dtw, "{probe}");
        }
        _ => {
            assert!(!categories.contains(&"win"), "{probe}");
            assert!(categories.contains(&"draw"), "{probe}");
        }
    }
}

#[test]
fn served_answers_are_consistent() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let games = ["KK", "KKC", "KKR", "KKT"];
    for name in games {
        solve(name.parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    }
    let server = Server::start(dir);

    let (status, health) = server.get("/health");
    assert_eq!(status, 200);
    assert_eq!(health["tables"], games.len());

    let mut checked = 0;
    let mut lines = 0;
    for name in games {
        let material: Material = name.parse().unwrap();
        let index = MaterialIndex::new(material);
        let step = (index.slots() / 150).max(1);
        for slot in (0..index.slots()).step_by(step as usize) {
            let position = index.position_at(slot);
            for p in [position, position.flipped()] {
                let (status, probe) = server.get(&format!("/probe?pos={}", url(&p.to_sfen())));
                assert_eq!(status, 200, "{probe}");
                check_moves_agree(&probe);
                checked += 1;
                if probe["category"] == "draw" || slot % (7 * step) != 0 {
                    continue;
                }
                let (status, line) = server.get(&format!("/mainline?pos={}", url(&p.to_sfen())));
                assert_eq!(status, 200);
                let moves = line["mainline"].as_array().unwrap();
                assert_eq!(moves.len() as u64, line["dtw"].as_u64().unwrap(), "{line}");
                if let Some(last) = moves.last() {
                    assert_eq!(last["sfen"], Json::Null, "the line ends in a royal capture: {line}");
                }
                lines += 1;
            }
        }
    }
    assert!(checked > 1000 && lines > 50, "{checked} probes, {lines} mainlines");

    // The start position has no table: it is searched, and answered.
    let (status, start) = server.get("/probe?pos=trfk/3c/C3/KFRT_b_-_1");
    assert_eq!(status, 200);
    assert_eq!(start["source"], "search");
    assert_eq!(start["material"], "KKCCFFRRTT");
    let (status, _) = server.get("/probe?pos=%ZZ%ZZ");
    assert_eq!(status, 400);
}

#[test]
fn sigterm_shuts_down_gracefully() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    solve("KK".parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    let mut server = Server::start(dir);
    assert_eq!(server.get("/health").0, 200);
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let status = server.child.wait().unwrap();
    assert!(status.success(), "exit status after SIGTERM: {status}");
}

/// SIGTERM closes the proof store (issue #57, item 2): a background search running at the
/// signal is cancelled, its entry stays queued, and the file is left closed, so that it opens
/// read-only without redb's repair and keeps what the searches wrote. On the build before,
/// the background threads kept the store open to the end of the process and the read-only
/// open was refused.
#[test]
fn sigterm_closes_the_proof_store() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    solve("KK".parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    let store = dir.join("proofs.redb");
    let flags = ["--rate-limit", "0", "--background-workers", "1", "--background-ms", "60000", "--search-ms", "200"];
    let mut server = Server::start_on(dir, &store, &flags);
    // The start has no table: searched, and its moves queued for the background search.
    assert_eq!(server.get("/probe?pos=trfk/3c/C3/KFRT_b_-_1").0, 200);
    std::thread::sleep(std::time::Duration::from_millis(700));
    let started = std::time::Instant::now();
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let status = server.child.wait().unwrap();
    assert!(status.success(), "exit status after SIGTERM: {status}");
    assert!(started.elapsed() < std::time::Duration::from_secs(8), "shutdown took {:?}", started.elapsed());
    let reopened = shogi4_proofs::ProofStore::open_read_only(&store).expect("the store was closed cleanly");
    assert!(reopened.len().unwrap() > 0, "the searches' records were kept");
}

/// Twenty positions of one game, none in a table: the second to the twenty-first ply of a
/// line from the start.
const A_GAME: [&str; 20] = [
    "trfk/3c/CF2/K1RT w - 1",
    "t1fk/2rc/CF2/K1RT b - 1",
    "t1fk/2rc/CF2/1KRT w - 1",
    "tkf1/2rc/CF2/1KRT b - 1",
    "tkf1/2rc/CFT1/1KR1 w - 1",
    "tk2/2rc/CFf1/1KR1 b t 1",
    "tk2/2rc/C1F1/1KR1 w Ft 1",
    "tkt1/2rc/C1F1/1KR1 b F 1",
    "tkt1/2Fc/C3/1KR1 w FR 1",
    "tk2/2tc/C3/1KR1 b FRf 1",
    "tk2/2tc/CR2/1KR1 w Ff 1",
    "tk2/2tc/CRf1/1KR1 b F 1",
    "tk2/2Rc/C1f1/1KR1 w FT 1",
    "tk2/2fc/C3/1KR1 b FTr 1",
    "tk2/2fc/CF2/1KR1 w Tr 1",
    "tk2/2fc/CF1r/1KR1 b T 1",
    "tk2/2fc/CF1r/TKR1 w - 1",
    "tk2/2fc/CF2/TK+r1 b r 1",
    "tk2/2Tc/CF2/1K+r1 w Fr 1",
    "t3/2kc/CF2/1K+r1 b Frt 1",
];

/// A batch of a game's twenty positions on an idle server, with a search budget of 100 ms
/// and a proof store (so that each answer queues positions): every entry is answered, those the
/// batch's budget left little time for by a shallower search (issue #57, item 8). On the
/// build before, half of them or more got 503 `search-busy` although no worker was busy.
#[test]
fn a_batch_of_a_games_positions_is_answered_entry_by_entry() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    solve("KK".parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    let server = Server::start_on(dir, &dir.join("proofs.redb"), &["--rate-limit", "0", "--search-ms", "100"]);
    let body = serde_json::json!({ "positions": A_GAME }).to_string();
    let mut stream = TcpStream::connect(&server.address).unwrap();
    write!(
        stream,
        "POST /probe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let answer: Json = serde_json::from_str(body).unwrap();
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), 20);
    for entry in results {
        assert!(entry["error"].is_null(), "{entry}");
        assert_eq!(entry["result"]["source"], "search", "{entry}");
    }
}

/// Search workers are shared fairly (issue #57, item 9): four clients keep two searches each
/// waiting all the time, on two workers; a fifth that sends one search at a time is answered
/// by search nearly every time, since a freed worker goes to the client holding fewest. On the
/// build before (first come, first served), it waited behind the others' eight and was
/// refused `search-busy` nearly every time.
#[test]
fn a_client_searching_now_and_then_is_served_beside_clients_that_flood() {
    let scratch = solved(&["KK"]);
    let flags = ["--rate-limit", "0", "--search-workers", "2", "--search-ms", "300", "--search-cache", "1"];
    let server = Server::start_with(scratch.path(), &flags);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let floods: Vec<_> = (0..8)
        .map(|i| {
            let (address, stop) = (server.address.clone(), std::sync::Arc::clone(&stop));
            std::thread::spawn(move || {
                let local = format!("127.0.0.{}", 2 + i / 2);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut stream = connect_from(&local, &address);
                    let sfen = url(A_GAME[i % A_GAME.len()]);
                    let _ = write!(stream, "GET /probe?pos={sfen} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                    let _ = stream.read_to_string(&mut String::new());
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut refused = 0;
    for sfen in &A_GAME[10..20] {
        let (status, _, problem) = server.get_from(Some("127.0.0.9"), &format!("/probe?pos={}", url(sfen)));
        if status == 503 {
            assert_eq!(problem["type"], "/problems/search-busy", "{problem}");
            refused += 1;
        } else {
            assert_eq!(status, 200, "{problem}");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for flood in floods {
        flood.join().unwrap();
    }
    assert!(refused <= 1, "{refused} of 10 searches refused beside the floods");
}

/// `/tables` and one-byte ranges of a table file cost a token each (issue #57, item 10): a
/// client with a burst of 4 gets two listings and two ranges, and then 429 on both routes. On
/// the build before, both were free: a flood of them cost the server and the client nothing.
#[test]
fn table_listings_and_one_byte_ranges_cost_tokens() {
    let scratch = solved(&["KK"]);
    let server = Server::start_with(scratch.path(), &["--rate-limit", "1", "--rate-burst", "4"]);
    let range = |server: &Server| {
        let mut stream = TcpStream::connect(&server.address).unwrap();
        write!(stream, "GET /files/KK.s4tb HTTP/1.1\r\nHost: x\r\nRange: bytes=0-0\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        String::from_utf8_lossy(&response).split_whitespace().nth(1).unwrap().parse::<u16>().unwrap()
    };
    assert_eq!(server.get("/tables").0, 200);
    assert_eq!(range(&server), 206);
    assert_eq!(server.get("/tables").0, 200);
    assert_eq!(range(&server), 206);
    let (status, problem) = server.get("/tables");
    assert_eq!((status, problem["type"].as_str()), (429, Some("/problems/rate-limited")), "{problem}");
    assert_eq!(range(&server), 429);
    // Health stays free: a load balancer's checks never spend a client's tokens.
    assert_ne!(server.get("/health").0, 429);
}

/// Download slots are shared (issue #57, item 5): two clients that hold transfers open
/// (paced at 16 KiB/s, so that each lasts) cannot take every slot; a third client, holding
/// none, still gets one. On the build before, the second client's second transfer took the
/// last slot and the newcomer got 503 `downloads-busy`.
#[test]
fn a_client_holding_no_download_gets_a_slot_beside_clients_holding_several() {
    let scratch = solved(&["KKCF"]);
    let flags = ["--download-kib-per-second", "16", "--max-downloads", "4", "--max-downloads-per-client", "2"];
    let server = Server::start_with(scratch.path(), &flags);
    // A transfer's status line; the connection is kept open (and never read), holding its slot.
    let start = |local: &str| {
        let mut stream = connect_from(local, &server.address);
        write!(stream, "GET /files/KKCF.s4tb HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        let status = String::from_utf8_lossy(&head[9..12]).parse::<u16>().unwrap();
        (status, stream)
    };
    let (first, _a1) = start("127.0.0.2");
    let (second, _a2) = start("127.0.0.2");
    let (third, _b1) = start("127.0.0.3");
    assert_eq!((first, second, third), (200, 200, 200));
    // One slot left: kept for a client that has none.
    let (fourth, _b2) = start("127.0.0.3");
    assert_eq!(fourth, 503, "a client's second transfer took the last slot");
    let (newcomer, _c1) = start("127.0.0.4");
    assert_eq!(newcomer, 200, "a client holding no transfer was refused");
    let (full, _d1) = start("127.0.0.5");
    assert_eq!(full, 503, "more transfers than slots");
}

#[test]
fn clients_are_rate_limited_each_on_its_own() {
    let scratch = solved(&["KKC"]);
    // One token a second, three at most: a fourth probe in a row must wait.
    let server = Server::start_with(scratch.path(), &["--rate-limit", "1", "--rate-burst", "3"]);
    let probe = "/probe?pos=k3/4/4/K3_b_C_1";
    for _ in 0..3 {
        assert_eq!(server.get_from(Some("127.0.0.1"), probe).0, 200);
    }
    let (status, head, problem) = server.get_from(Some("127.0.0.1"), probe);
    assert_eq!(status, 429, "{problem}");
    assert_eq!(problem["type"], "/problems/rate-limited");
    assert!(head.contains("retry-after: 1"), "{head}");
    assert!(head.contains("x-ratelimit-limit: 3") && head.contains("x-ratelimit-remaining: 0"), "{head}");
    // Another address has its own budget; the exempt endpoints stay open to both.
    assert_eq!(server.get_from(Some("127.0.0.2"), probe).0, 200);
    assert_eq!(server.get_from(Some("127.0.0.1"), "/health").0, 200);
    assert_eq!(server.get_from(Some("127.0.0.1"), "/metrics").0, 200);
    // A search costs 10 tokens: more than this client can ever hold.
    let (status, _, problem) = server.get_from(Some("127.0.0.3"), "/probe?pos=trfk/3c/C3/KFRT_b_-_1");
    assert_eq!(status, 429);
    assert!(problem["detail"].as_str().unwrap().contains("costs 10 tokens"), "{problem}");
}

#[test]
fn the_concurrency_limit_is_one_for_the_whole_server() {
    let scratch = solved(&["KK"]);
    let flags = ["--rate-limit", "0", "--concurrency", "1", "--search-ms", "1500", "--search-nodes", "1000000000000"];
    let server = Server::start_with(scratch.path(), &flags);
    // A search of the start (no table holds it) holds the one slot for its budget...
    let address = server.address.clone();
    let searching = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(&address).unwrap();
        write!(stream, "GET /probe?pos=trfk/3c/C3/KFRT_b_-_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    });
    std::thread::sleep(std::time::Duration::from_millis(400));
    // ...so a GET on another route is refused too, with a time to come back.
    let (status, head, problem) = server.get_from(None, "/probe?pos=k3/4/4/K3_b_-_1");
    assert_eq!(status, 429, "{problem}");
    assert_eq!(problem["type"], "/problems/overloaded");
    assert!(head.contains("retry-after: 1"), "{head}");
    assert!(searching.join().unwrap().starts_with("HTTP/1.1 200"));
    assert_eq!(server.get("/probe?pos=k3/4/4/K3_b_-_1").0, 200);
}

/// Bodies sent a byte at a time hold no request slot (issue #57, item 1): with one slot and
/// four bodies stalled, other clients are answered, and each stalled body gets 408
/// `body-timeout` at its own deadline. On the build before, every other request got 429
/// until the stalled ones reached `--timeout-ms`.
#[test]
fn stalled_bodies_hold_no_request_slot_and_time_out() {
    let scratch = solved(&["KK"]);
    let flags = ["--rate-limit", "0", "--concurrency", "1", "--body-timeout-ms", "1000", "--timeout-ms", "60000"];
    let server = Server::start_with(scratch.path(), &flags);
    let started = std::time::Instant::now();
    let mut stalled: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.address).unwrap();
            write!(
                stream,
                "POST /probe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n["
            )
            .unwrap();
            stream
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    for _ in 0..3 {
        let (status, problem) = server.get("/probe?pos=k3/4/4/K3_b_-_1");
        assert_eq!(status, 200, "{problem}");
    }
    for stream in &mut stalled {
        stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        assert!(response.starts_with("HTTP/1.1 408"), "{response}");
        assert!(response.contains("/problems/body-timeout"), "{response}");
    }
    let waited = started.elapsed();
    assert!(waited < std::time::Duration::from_secs(4), "the stalled bodies were answered after {waited:?}");
}

/// How long until the server closes `stream` (reads until end of stream or reset).
fn time_until_closed(stream: &mut TcpStream, limit: std::time::Duration) -> std::time::Duration {
    let started = std::time::Instant::now();
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut sink = Vec::new();
    let _ = stream.read_to_end(&mut sink);
    started.elapsed()
}

#[test]
fn silent_and_surplus_connections_are_closed() {
    let scratch = solved(&["KK"]);
    let flags = ["--rate-limit", "0", "--header-timeout-ms", "500", "--max-connections", "2"];
    let server = Server::start_with(scratch.path(), &flags);
    let limit = std::time::Duration::from_secs(5);
    // A client that sends one byte and then nothing is dropped at the header deadline.
    let mut slow = TcpStream::connect(&server.address).unwrap();
    slow.write_all(b"G").unwrap();
    let waited = time_until_closed(&mut slow, limit);
    assert!(waited < std::time::Duration::from_millis(2000), "a silent client stayed {waited:?}");
    // Two idle connections fill the cap: a third is closed at once, not queued.
    let _first = TcpStream::connect(&server.address).unwrap();
    let _second = TcpStream::connect(&server.address).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut third = TcpStream::connect(&server.address).unwrap();
    let _ = write!(third, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    let waited = time_until_closed(&mut third, limit);
    assert!(waited < std::time::Duration::from_millis(400), "the surplus connection waited {waited:?}");
    // Once the idle ones time out, the server answers again.
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert_eq!(server.get("/health").0, 200);
}

#[test]
fn shutdown_does_not_wait_for_a_stuck_client() {
    let scratch = solved(&["KK"]);
    let flags = ["--rate-limit", "0", "--header-timeout-ms", "60000", "--shutdown-grace-ms", "500"];
    let mut server = Server::start_with(scratch.path(), &flags);
    // A request that never finishes its body.
    let mut stuck = TcpStream::connect(&server.address).unwrap();
    write!(stuck, "POST /probe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99\r\n\r\n{{")
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let status = server.child.wait().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(3), "shutdown took {:?}", started.elapsed());
    assert!(status.success(), "{status}");
}

/// A compressed table served from its file, damaged in place with its size and time kept
/// (so that only the blocks' checksums can tell): answers from it are 503 `table-changed`,
/// never a 500 and never a value from the damaged bytes, and `/health` reports it (issue #57,
/// item 10). On the build before, the damaged blocks gave 500 and `/health` said `ok`.
#[test]
fn a_damaged_block_of_a_mapped_table_is_a_changed_table() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let solved = solve("KKCF".parse().unwrap(), &Silent).table;
    let packed = shogi4_tablebase::Table::new(solved.to_bytes()).unwrap().to_compressed(&Silent).unwrap();
    let file = dir.join("KKCF.s4tb");
    std::fs::write(&file, &packed).unwrap();
    let server = Server::start_with(dir, &["--rate-limit", "0", "--copy-budget-mb", "0"]);
    let index = MaterialIndex::new("KKCF".parse::<Material>().unwrap());
    let positions: Vec<String> = (0..index.slots())
        .step_by((index.slots() / 200).max(1) as usize)
        .map(|slot| index.position_at(slot))
        .filter(|p| !p.legal_moves().is_empty())
        .map(|p| url(&p.to_sfen()))
        .collect();
    assert_eq!(server.get(&format!("/probe?pos={}", positions[0])).0, 200);
    // The middle third of the file, blocks only, turned over; size and time as they were.
    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    let mut bytes = packed.clone();
    let (from, to) = (bytes.len() / 3, 2 * bytes.len() / 3);
    for byte in &mut bytes[from..to] {
        *byte ^= 0x5A;
    }
    {
        let mut handle = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        handle.write_all(&bytes).unwrap();
        handle.set_modified(modified).unwrap();
    }
    let mut changed = 0;
    for position in &positions {
        let (status, answer) = server.get(&format!("/probe?pos={position}"));
        assert_ne!(status, 500, "{answer}");
        if status == 503 {
            assert_eq!(answer["type"], "/problems/table-changed", "{answer}");
            changed += 1;
        } else {
            assert_eq!(changed, 0, "answered from a table already found damaged: {answer}");
        }
    }
    assert!(changed > 0, "no probe met the damaged blocks: the test shows nothing");
    let (status, health) = server.get("/health");
    assert_eq!((status, health["status"].as_str()), (503, Some("degraded")), "{health}");
    assert!(health["rejected"][0]["error"].as_str().unwrap().contains("fail their checks"), "{health}");
}

/// Sends SIGHUP and waits until `/tables` lists exactly the `expected` closed games.
fn reload_and_wait(server: &Server, expected: &[&str]) {
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGHUP) };
    for _ in 0..100 {
        let (_, tables) = server.get("/tables");
        let names: Vec<&str> =
            tables["tables"].as_array().unwrap().iter().map(|t| t["material"].as_str().unwrap()).collect();
        if names == expected {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the reload never showed {expected:?}");
}

#[test]
fn served_tables_survive_their_files_and_reload_on_sighup() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let kkc = solve("KKC".parse().unwrap(), &Silent).table;
    kkc.write_to_dir(dir).unwrap();
    solve("KK".parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    let server = Server::start(dir);
    let pid = server.child.id();
    let probe = "/probe?pos=k3/4/4/K3_b_C_1";
    let (_, before) = server.get(probe);
    assert_eq!(before["source"], "table");
    assert_eq!(before["dtw"], 9);

    // Truncated, then overwritten in place: the server keeps answering from what it verified.
    let file = dir.join("KKC.s4tb");
    let size = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(size / 2).unwrap();
    assert_eq!(server.get(probe), (200, before.clone()));
    std::fs::write(&file, vec![0x55u8; size as usize]).unwrap();
    assert_eq!(server.get(probe), (200, before.clone()));
    assert_eq!(server.get("/health").0, 200);

    // A new table added by rename, then SIGHUP: served by the same process. The damaged KKC
    // file is refused on reload and health says so, but the copy verified before goes on
    // answering: a damaged replacement never takes a good table out of service.
    solve("KKF".parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    reload_and_wait(&server, &["KK", "KKC", "KKF"]);
    let (status, health) = server.get("/health");
    assert_eq!((status, health["status"].as_str()), (503, Some("degraded")), "{health}");
    assert!(health["rejected"][0]["file"].as_str().unwrap().ends_with("KKC.s4tb"), "{health}");
    assert!(health["rejected"][0]["error"].as_str().unwrap().contains("still served"), "{health}");
    assert_eq!(server.get(probe), (200, before.clone()));

    // A good KKC replaces the damaged one by rename: back in the set, healthy again.
    kkc.write_to_dir(dir).unwrap();
    reload_and_wait(&server, &["KK", "KKC", "KKF"]);
    // The set's names were the same before: wait for the reload to clear the refusal.
    for _ in 0..100 {
        if server.get("/health").0 == 200 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(server.get(probe), (200, before));
    assert_eq!(server.get("/health").0, 200);
    assert_eq!(server.child.id(), pid);
}

#[test]
fn missing_tables_are_solved_in_the_background_while_the_server_answers() {
    let scratch = tempfile::tempdir().unwrap();
    let flags = ["--bind", "127.0.0.1:0", "--solve-missing", "2", "--proof-store", "none", "--rate-limit", "0"];
    let mut args: Vec<std::ffi::OsString> = flags.map(Into::into).into();
    args.extend(["--tables".into(), scratch.path().into()]);
    let (child, address) = spawn_server(args);
    let server = Server { child, address };
    // It listens at once and says what it is doing.
    let (status, health) = server.get("/health");
    assert_eq!((status, health["status"].as_str()), (503, Some("solving")), "{health}");
    assert!(!health["solving"].as_array().unwrap().is_empty());
    // A position of a game still being solved: come back later (or the table answers, if its
    // game was done in between).
    let (status, answer) = server.get("/probe?pos=k3/4/4/K3_b_CC_1");
    assert!(
        status == 503 && answer["type"] == "/problems/table-being-solved" || answer["source"] == "table",
        "{answer}"
    );
    let started = std::time::Instant::now();
    while server.get("/health").0 != 200 {
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "still solving");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (_, tables) = server.get("/tables");
    assert_eq!(tables["tables"].as_array().unwrap().len(), 15);
    assert!(tables.get("solving").is_none(), "{tables}");
    assert_eq!(server.get("/probe?pos=k3/4/4/K3_b_CC_1").1["source"], "table");
}

#[test]
fn tables_beyond_the_copy_budget_are_served_from_their_files_and_guarded() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let kkc = solve("KKC".parse().unwrap(), &Silent).table;
    kkc.write_to_dir(dir).unwrap();
    solve("KKF".parse().unwrap(), &Silent).table.write_to_dir(dir).unwrap();
    // A budget of 0: every table is its own file, mapped.
    let server = Server::start_with(dir, &["--rate-limit", "0", "--copy-budget-mb", "0"]);
    let pid = server.child.id();
    let probe = "/probe?pos=k3/4/4/K3_b_C_1";
    let other = "/probe?pos=k3/4/4/K3_b_F_1";
    let (status, before) = server.get(probe);
    assert_eq!((status, before["dtw"].as_u64()), (200, Some(9)));
    let (_, kkf) = server.get(other);

    // Written in place with other bytes of the same size: refused, never answered from them.
    let file = dir.join("KKC.s4tb");
    let size = std::fs::metadata(&file).unwrap().len();
    std::fs::write(&file, vec![0x55u8; size as usize]).unwrap();
    let (status, problem) = server.get(probe);
    assert_eq!((status, problem["type"].as_str()), (503, Some("/problems/table-changed")), "{problem}");
    assert_eq!(problem["material"], "KKC");
    let (status, health) = server.get("/health");
    assert_eq!((status, health["status"].as_str()), (503, Some("degraded")), "{health}");
    assert!(health["rejected"][0]["file"].as_str().unwrap().ends_with("KKC.s4tb"), "{health}");
    assert_eq!(server.get(other), (200, kkf.clone()), "the other table is untouched");

    // Restored by rename and reloaded: answers again. (The set lists the same games before
    // and after, so the reload is awaited by health, which is degraded until it is done.)
    kkc.write_to_dir(dir).unwrap();
    reload_until_healthy(&server);
    assert_eq!(server.get(probe), (200, before.clone()));

    // Truncated to nothing: every page of the mapping is gone. Reading one raises SIGBUS,
    // which must not kill the server; the request gets the problem.
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(0).unwrap();
    for _ in 0..3 {
        let (status, problem) = server.get(probe);
        assert_eq!((status, problem["type"].as_str()), (503, Some("/problems/table-changed")), "{problem}");
        assert!(problem["detail"].as_str().unwrap().contains("pages lost"), "the fault was caught: {problem}");
    }
    let (status, mainline) = server.get("/mainline?pos=k3/4/4/K3_b_C_1");
    assert_eq!((status, mainline["type"].as_str()), (503, Some("/problems/table-changed")), "{mainline}");
    assert_eq!(server.get(other), (200, kkf));
    kkc.write_to_dir(dir).unwrap();
    reload_until_healthy(&server);
    assert_eq!(server.get(probe), (200, before));
    assert_eq!(server.child.id(), pid);
}

/// Sends SIGHUP and waits until `/health` says ok.
fn reload_until_healthy(server: &Server) {
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGHUP) };
    for _ in 0..200 {
        if server.get("/health").0 == 200 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("still unhealthy after the reload");
}

/// One address holding keep-alive connections (refreshed with a free `/health`) cannot take
/// every slot: past its own cap its connections are closed, and another client is served.
/// A keep-alive connection is closed after its last allowed request.
#[test]
fn one_client_cannot_hold_every_connection() {
    let scratch = solved(&["KK"]);
    let flags = [
        "--rate-limit",
        "0",
        "--max-connections",
        "8",
        "--max-connections-per-client",
        "3",
        "--max-requests-per-connection",
        "5",
    ];
    let server = Server::start_with(scratch.path(), &flags);
    let limit = std::time::Duration::from_secs(5);
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..8 {
        let mut stream = connect_from("127.0.0.1", &server.address);
        write!(stream, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut reply = [0u8; 12];
        match stream.read_exact(&mut reply) {
            Ok(()) => held.push(stream),
            Err(_) => refused += 1,
        }
    }
    assert_eq!((held.len(), refused), (3, 5), "the per-client cap did not hold");
    // Everyone else is still served, from another address.
    assert_eq!(server.get_from(Some("127.0.0.2"), "/health").0, 200);
    // A keep-alive connection answers five requests, then closes.
    let mut stream = connect_from("127.0.0.3", &server.address);
    for _ in 0..5 {
        write!(stream, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    }
    let waited = time_until_closed(&mut stream, limit);
    assert!(waited < std::time::Duration::from_secs(2), "the connection stayed open {waited:?}");
}

/// When one client holds every slot (its own cap allowing it), a newcomer from elsewhere is
/// not refused: an idle connection of the heaviest client is closed for it. The heaviest
/// client's own next connection is still refused.
#[test]
fn a_full_server_sheds_the_heaviest_clients_idle_connection_for_a_newcomer() {
    let scratch = solved(&["KK"]);
    let flags = ["--rate-limit", "0", "--max-connections", "6", "--max-connections-per-client", "6"];
    let server = Server::start_with(scratch.path(), &flags);
    let mut held = Vec::new();
    for _ in 0..6 {
        let mut stream = connect_from("127.0.0.1", &server.address);
        write!(stream, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut reply = [0u8; 12];
        stream.read_exact(&mut reply).unwrap();
        held.push(stream);
    }
    let mut newcomer = connect_from("127.0.0.2", &server.address);
    write!(newcomer, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reply = [0u8; 12];
    newcomer.read_exact(&mut reply).expect("the newcomer was refused");
    assert_eq!(&reply, b"HTTP/1.1 200");
    // Full again (five and the newcomer's, kept open): the heaviest client gets no slot by
    // shedding its own.
    let mut own = connect_from("127.0.0.1", &server.address);
    let _ = write!(own, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    let waited = time_until_closed(&mut own, std::time::Duration::from_secs(5));
    assert!(waited < std::time::Duration::from_millis(400), "the surplus connection waited {waited:?}");
}

/// A published certificate is checked at start-up and then answers for the positions it
/// proves, with or without a proof store: the position after 1. a2a3 is a proven loss for the
/// first player, `source` names the certificate, and its bound is the certificate's. A
/// corrupted certificate beside it is refused and serves nothing.
#[test]
fn a_certificate_answers_for_its_positions_and_names_itself() {
    let scratch = solved(&["KK"]);
    let certificates = scratch.path().join("certificates");
    std::fs::create_dir(&certificates).unwrap();
    let published = concat!(env!("CARGO_MANIFEST_DIR"), "/../tables/certificates/a2a3.s4cert");
    let bytes = std::fs::read(published).unwrap();
    std::fs::write(certificates.join("a2a3.s4cert"), &bytes).unwrap();
    // The same tree with its last entry's bound raised: the checker refuses it.
    let mut corrupted = bytes.clone();
    let last = corrupted.len() - 1;
    corrupted[last] ^= 0x40;
    assert!(shogi4_certificate::verify(&corrupted).is_err());
    std::fs::write(certificates.join("bad.s4cert"), &corrupted).unwrap();
    let server = Server::start_with(scratch.path(), &["--rate-limit", "0", "--search-ms", "50"]);
    let start = shogi4_engine::Position::start();
    let mv = start.legal_moves().iter().copied().find(|mv| mv.to_string() == "a2a3").unwrap();
    let after = start.play_unchecked(mv);
    // The certificates are checked in the background once the server listens.
    let started = std::time::Instant::now();
    let answer = loop {
        let (status, answer) = server.get(&format!("/probe?pos={}", url(&after.to_sfen())));
        assert_eq!(status, 200, "{answer}");
        if answer["source"] == "certificate" {
            break answer;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "never answered from the certificate: {answer}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(answer["certificate"], "a2a3.s4cert", "{answer}");
    assert_eq!(answer["category"], "win", "the second player to move wins: {answer}");
    let at_most = answer["dtw"].as_u64().or(answer["dtw_at_most"].as_u64()).unwrap();
    assert!(at_most <= 21, "the certificate proves a win within 21: {answer}");
    // The start position itself is not covered: it is not named.
    let (_, start_answer) = server.get(&format!("/probe?pos={}", url(&start.to_sfen())));
    assert_ne!(start_answer["source"], "certificate", "{start_answer}");
    assert!(start_answer.get("certificate").is_none(), "{start_answer}");
    // The good certificate's index is kept for the next start; the refused one has none.
    let checked = certificates.join(shogi4_answer::CHECKED);
    assert!(checked.join("a2a3.s4cert.index").is_file());
    assert!(!checked.join("bad.s4cert.index").exists());
}

/// A forged proof store cannot overrule a certificate: records that contradict
/// `a2a3.s4cert` (the position after 1. a2a3 "lost in 4" for the second player, and each of its
/// moves winning for the first) are passed over and counted; the answer is the certificate's
/// win, named for it, and no move in it contradicts it.
#[test]
fn a_forged_store_cannot_overrule_a_certificate() {
    use shogi4_search::Outcome;
    use shogi4_tablebase::Value;
    let scratch = solved(&["KK"]);
    let certificates = scratch.path().join("certificates");
    std::fs::create_dir(&certificates).unwrap();
    let published = concat!(env!("CARGO_MANIFEST_DIR"), "/../tables/certificates/a2a3.s4cert");
    std::fs::copy(published, certificates.join("a2a3.s4cert")).unwrap();
    let start = shogi4_engine::Position::start();
    let mv = start.legal_moves().iter().copied().find(|mv| mv.to_string() == "a2a3").unwrap();
    let after = start.play_unchecked(mv);
    let store_path = scratch.path().join("forged.redb");
    {
        let (store, _) = shogi4_proofs::ProofStore::open(&store_path).unwrap();
        let mut forged = vec![(after.key(), Outcome::Proven(Value::Loss(4)))];
        forged.extend(after.successors().map(|(_, child)| (child.key(), Outcome::Proven(Value::Win(3)))));
        store.record(&forged, shogi4_proofs::Origin::Import).unwrap();
    }
    let mut args: Vec<std::ffi::OsString> =
        ["--bind", "127.0.0.1:0", "--no-solve", "--rate-limit", "0"].map(Into::into).into();
    args.extend(["--search-ms".into(), "200".into(), "--tables".into(), scratch.path().as_os_str().to_owned()]);
    args.extend(["--proof-store".into(), store_path.as_os_str().to_owned()]);
    let (child, address) = spawn_server(args);
    let server = Server { child, address };
    let started = std::time::Instant::now();
    let answer = loop {
        let (status, answer) = server.get(&format!("/probe?pos={}", url(&after.to_sfen())));
        assert_eq!(status, 200, "{answer}");
        if answer["source"] == "certificate" {
            break answer;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "never the certificate's answer: {answer}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(answer["category"], "win", "the forged loss was served: {answer}");
    // A proven win has a winning move in the same answer.
    let moves = answer["moves"].as_array().unwrap();
    assert!(moves.iter().any(|m| m["category"] == "win"), "no winning move beside a proven win: {answer}");
    // The conflict may be counted by the store's writer, after the answer went out.
    let metrics = || {
        let mut stream = TcpStream::connect(&server.address).unwrap();
        write!(stream, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    };
    let asked = std::time::Instant::now();
    while !metrics().contains("proof_conflicts_total") {
        assert!(asked.elapsed() < std::time::Duration::from_secs(20), "conflicts not counted");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The forged record may stay in the store (certificates are not copied into it): it is
    // passed over wherever the certificate answers, as above.
}

/// A flood of unreadable `GET /probe` is neither free nor written to the log line by line:
/// each costs a token (so the flood meets 429 once the burst is spent), and routine refusals
/// are logged at debug, so the log stays a few lines long however many arrive.
#[test]
fn a_flood_of_bad_queries_costs_tokens_and_no_log_lines() {
    use std::io::{BufRead, BufReader};
    let scratch = solved(&["KK"]);
    let log = std::fs::File::create(scratch.path().join("server.log")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_shogi4-server"))
        .args(["--bind", "127.0.0.1:0", "--no-solve", "--proof-store", "none", "--rate-burst", "100"])
        .arg("--tables")
        .arg(scratch.path())
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().strip_prefix("listening on http://").unwrap().to_string();
    let server = Server { child, address };
    let lines_before = std::fs::read_to_string(scratch.path().join("server.log")).unwrap().lines().count();
    let mut statuses = std::collections::BTreeMap::new();
    for i in 0..300 {
        let (status, _) = server.get(&format!("/probe?pos=not-a-position-{i}"));
        *statuses.entry(status).or_insert(0) += 1;
    }
    assert!(statuses.get(&429).copied().unwrap_or(0) >= 150, "bad queries were free: {statuses:?}");
    assert!(statuses.get(&400).copied().unwrap_or(0) >= 90, "{statuses:?}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let lines = std::fs::read_to_string(scratch.path().join("server.log")).unwrap().lines().count() - lines_before;
    assert!(lines < 30, "{lines} log lines for 300 refused queries");
}

/// A FIFO named like a table neither blocks start-up nor a reload: it is refused as not a
/// regular file, and the rest is served.
#[test]
fn a_fifo_named_like_a_table_is_refused_without_blocking() {
    let scratch = solved(&["KK"]);
    let fifo = scratch.path().join("KKC.s4tb");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let server = Server::start(scratch.path());
    let (status, health) = server.get("/health");
    assert_eq!((status, health["status"].as_str()), (503, Some("degraded")), "{health}");
    assert!(health["rejected"][0]["file"].as_str().unwrap().ends_with("KKC.s4tb"), "{health}");
    assert!(health["rejected"][0]["error"].as_str().unwrap_or("").contains("not a regular file"), "{health}");
    assert_eq!(server.get("/probe?pos=k3/4/4/K3_b_-_1").0, 200);
}

/// A body announced over the limit is refused at once: the client is not told to go on
/// (`Expect: 100-continue`), and no byte of the body needs to arrive for the 413.
#[test]
fn an_oversized_body_is_refused_before_it_is_sent() {
    let scratch = solved(&["KK"]);
    let server = Server::start(scratch.path());
    for expect in ["Expect: 100-continue\r\n", ""] {
        let mut stream = TcpStream::connect(&server.address).unwrap();
        write!(
            stream,
            "POST /probe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n{expect}\r\n"
        )
        .unwrap();
        stream.set_read_timeout(Some(std::time::Duration::from_secs(3))).unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).expect("an answer without the body");
        assert_eq!(&head, b"HTTP/1.1 413", "{expect:?}: {}", String::from_utf8_lossy(&head));
    }
}

/// A setting the server cannot use stops it before it listens, with exit code 1 and one line
/// naming the flag and what is wrong; nothing is bound.
#[test]
fn an_unusable_setting_stops_the_server_with_the_flag_named() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().to_str().unwrap();
    let cases = [
        (&["--trusted-proxies", "10.0.0.0/33"][..], "--trusted-proxies: invalid trusted proxy \"10.0.0.0/33\""),
        (&["--cors-origins", "https://a.example, *"][..], "--cors-origins: `*` allows any origin and must stand alone"),
        (&["--bind", "256.0.0.1:80"][..], "invalid value '256.0.0.1:80' for '--bind <BIND>'"),
        // 17 tables of 64 GiB: more than any machine here has. Each would be made at a first
        // search, and one that could not be had would abort the server mid-request.
        (
            &["--search-table-mb", "65536", "--search-workers", "16", "--background-workers", "1"][..],
            "--search-table-mb: 16 search and 1 background workers with a table of 65536 MiB each (and the engine's \
             beside each search worker's) need 1114368 MiB",
        ),
    ];
    for (flags, expected) in cases {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_shogi4-server"))
            .args(["--no-solve", "--proof-store", "none", "--tables", tables])
            .args(flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{flags:?}: {stderr}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
        assert!(!String::from_utf8_lossy(&output.stdout).contains("listening"), "{flags:?}");
    }
}
