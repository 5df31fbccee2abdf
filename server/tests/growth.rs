//! Searches under real clients, against the real binary over TCP. The tablebase grows with
//! use: an answer that is not exact queues its position, a background worker searches it
//! further and stores what it proves, and a repeat query gets the deeper answer. The queue is
//! bounded per client and in all, the store survives a `kill -9` in the middle of background
//! work, and clients that hang up mid-search do not multiply the searches.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use common::spawn_server;
use serde_json::Value as Json;
use shogi4_engine::Position;
use shogi4_proofs::ProofStore;

struct Server {
    child: Child,
    address: String,
}

impl Server {
    /// The server with a proof store at `store`, request searches of a fixed node budget (so
    /// that a first answer is never exact), every client's address believed from
    /// `X-Forwarded-For` (so that one machine can play several clients).
    fn start(store: &Path, flags: &[&str]) -> Server {
        Server::start_searching(store, "20000", flags)
    }

    /// The same with request searches of `nodes` nodes.
    fn start_searching(store: &Path, nodes: &str, flags: &[&str]) -> Server {
        let tables = store.parent().unwrap().join("no-tables");
        std::fs::create_dir_all(&tables).unwrap();
        let mut args: Vec<std::ffi::OsString> =
            ["--bind", "127.0.0.1:0", "--no-solve", "--rate-limit", "0", "--search-nodes", nodes]
                .map(Into::into)
                .into();
        args.extend(["--trusted-proxies".into(), "127.0.0.1".into(), "--proof-store".into(), store.into()]);
        args.extend(["--tables".into(), tables.into()]);
        args.extend(flags.iter().map(Into::into));
        let (child, address) = spawn_server(args);
        Server { child, address }
    }

    /// A GET as the client `client`: status and body.
    fn get(&self, client: &str, path_and_query: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        write!(
            stream,
            "GET {path_and_query} HTTP/1.1\r\nHost: {}\r\nX-Forwarded-For: {client}\r\nConnection: close\r\n\r\n",
            self.address
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").expect("a complete response");
        (head.split_whitespace().nth(1).unwrap().parse().unwrap(), body.to_string())
    }

    fn probe(&self, client: &str, sfen: &str) -> Json {
        let (status, body) = self.get(client, &probe_path(sfen));
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// The queue's length as `/metrics` states it.
    fn queue_length(&self) -> f64 {
        let (_, metrics) = self.get("198.51.100.99", "/metrics");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix("search_queue_length "))
            .map_or(0.0, |v| v.trim().parse().unwrap())
    }

    /// The queue's length once it reaches `at_least` (queueing is the store writer's, after
    /// the answer), or after 5 s, plus a moment for anything still being queued.
    fn settled_queue_length(&self, at_least: f64) -> f64 {
        let started = Instant::now();
        while self.queue_length() < at_least && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(200));
        self.queue_length()
    }
}

/// `/probe` for one position, its SFEN made safe for a query string.
fn probe_path(sfen: &str) -> String {
    format!("/probe?pos={}", sfen.replace(' ', "_").replace('+', "%2B"))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Won in 15 by the first player: beyond a 20,000-node search, within a second of one.
const DEEP_WIN: &str = "+C1fk/t3/1K2/TF1+c b 2R 1";

#[test]
fn a_repeat_query_gets_what_the_background_search_proved() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("proofs.redb"), &["--background-ms", "1000"]);
    let first = server.probe("203.0.113.1", DEEP_WIN);
    assert!(first["dtw"].is_null(), "the request's own budget must not reach it: {first}");
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let again = server.probe("203.0.113.1", DEEP_WIN);
        if again["dtw"] == 15 {
            assert_eq!(again["category"], "win");
            // The background proved it: the answer says so.
            assert_eq!(again["source"], "store", "{again}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(90), "never proven in the background: {again}");
    }
}

/// Distinct real-game positions, from seeded random playouts (none of them exact within the
/// request budget, which is what a flood is made of).
fn distinct_positions(count: usize) -> Vec<String> {
    let mut state = 0x5EED_u64;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while out.len() < count {
        let mut position = Position::start();
        for _ in 0..10 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let moves: Vec<_> =
                position.legal_moves().iter().copied().filter(|&mv| !position.exposes_royal(mv)).collect();
            if moves.is_empty() {
                break;
            }
            position = position.play_unchecked(moves[(state % moves.len() as u64) as usize]);
        }
        if seen.insert(position.key()) {
            out.push(position.to_sfen());
        }
    }
    out
}

#[test]
fn a_flood_from_one_client_leaves_the_queue_bounded_and_room_for_others() {
    let dir = tempfile::tempdir().unwrap();
    // A background search long enough that the worker takes at most one entry meanwhile.
    let flags = ["--background-ms", "60000", "--queue-max", "40", "--queue-per-client", "10", "--search-table-mb", "8"];
    let server = Server::start(&dir.path().join("proofs.redb"), &flags);
    let positions = distinct_positions(30);
    for sfen in &positions[..25] {
        server.probe("203.0.113.7", sfen);
    }
    let flooded = server.settled_queue_length(10.0);
    assert!(flooded > 0.0 && flooded <= 10.0, "one client's share is 10: {flooded}");
    // Another client is still served, and its positions still queued.
    let other = server.probe("198.51.100.20", &positions[29]);
    assert!(other["category"].is_string());
    assert!(server.settled_queue_length(flooded + 1.0) > flooded, "the other client's positions were queued too");
}

/// A client's share of the queue holds across restarts (issue #57, item 7): its entries in
/// the store count against it when the server starts again, so a client cannot fill the
/// queue by waiting for restarts. On the build before, each start granted every client a
/// fresh share.
#[test]
fn a_clients_share_of_the_queue_holds_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("proofs.redb");
    // One background worker, busy for a day with the first entry it takes.
    let flags =
        ["--background-ms", "86400000", "--queue-max", "100", "--queue-per-client", "10", "--search-table-mb", "8"];
    let positions = distinct_positions(40);
    let before = {
        let server = Server::start(&store, &flags);
        for sfen in &positions[..20] {
            server.probe("203.0.113.7", sfen);
        }
        server.settled_queue_length(10.0)
    };
    assert!(before > 0.0 && before <= 10.0, "one client's share is 10: {before}");
    let server = Server::start(&store, &flags);
    for sfen in &positions[20..40] {
        server.probe("203.0.113.7", sfen);
    }
    let after = server.settled_queue_length(before + 5.0);
    assert!(after <= before + 1.0, "the client queued {} more after the restart", after - before);
}

#[test]
fn the_store_survives_kill_9_during_background_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    {
        let mut server = Server::start(&path, &["--background-ms", "200"]);
        for sfen in distinct_positions(6) {
            server.probe("203.0.113.9", &sfen);
        }
        // Background searches are running now; kill in the middle of them.
        std::thread::sleep(Duration::from_millis(700));
        server.child.kill().unwrap();
        server.child.wait().unwrap();
    }
    let (store, opened) = ProofStore::open(&path).unwrap();
    assert_eq!(opened, shogi4_proofs::Opened::Fine, "the store was not damaged");
    let (good, bad) = store.verify().unwrap();
    assert!(good > 0 && bad == 0, "{good} good, {bad} bad records");
    // And a server starts on it again and works the rest of the queue.
    drop(store);
    let server = Server::start(&path, &["--background-ms", "200"]);
    assert_eq!(server.probe("203.0.113.9", DEEP_WIN)["sfen"], DEEP_WIN);
}

/// Searches hand what they establish to the store's writer thread; SIGTERM lets it commit
/// its backlog before the process ends (a background worker still holds the service then,
/// so nothing is dropped that would do it).
#[test]
fn what_searches_recorded_just_before_sigterm_is_on_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proofs.redb");
    let positions = distinct_positions(6);
    let mut server = Server::start(&path, &["--background-ms", "200", "--shutdown-grace-ms", "500"]);
    // The positions the server answered as won or lost, each recorded by its search.
    let proven: Vec<Position> = positions
        .iter()
        .filter(|sfen| ["win", "loss"].contains(&server.probe("203.0.113.9", sfen)["category"].as_str().unwrap()))
        .map(|sfen| Position::parse(sfen).unwrap())
        .collect();
    assert!(proven.len() >= 2, "only {} proven: nothing to show", proven.len());
    // SAFETY: kill(2) on the child this test started.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    assert!(server.child.wait().unwrap().success());
    let (store, _) = ProofStore::open(&path).unwrap();
    let known = store.recall(&proven).unwrap();
    assert!(known.iter().all(Option::is_some), "proven positions missing from the store: {known:?}");
}

/// Resident memory of a process, in bytes (Linux).
fn resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

#[test]
fn clients_that_hang_up_mid_search_do_not_multiply_the_searches() {
    let dir = tempfile::tempdir().unwrap();
    // One worker with a 64 MiB table, long searches, no background work: a hang-up must not
    // leave its search running beside the next one.
    let flags = ["--search-workers", "1", "--search-ms", "3000", "--background-workers", "0"];
    let server = Server::start_searching(&dir.path().join("proofs.redb"), "1000000000", &flags);
    let before = resident_bytes(server.child.id());
    for sfen in distinct_positions(12) {
        let mut stream = TcpStream::connect(&server.address).unwrap();
        let path = probe_path(&sfen);
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        drop(stream);
    }
    std::thread::sleep(Duration::from_millis(500));
    let grown = resident_bytes(server.child.id()).saturating_sub(before);
    // One searcher's tables (64 MiB) and change; twelve would be 768 MiB.
    assert!(grown < 160 << 20, "resident memory grew by {} MiB", grown >> 20);
}

/// A search whose client hung up is cancelled: its worker is free for the next client at
/// once, not after the rest of the budget.
#[test]
fn a_hang_up_cancels_its_search_and_frees_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--search-workers", "1", "--search-ms", "2000", "--background-workers", "0"];
    let server = Server::start_searching(&dir.path().join("proofs.redb"), "1000000000", &flags);
    // The start position is far from proven: its search would take the whole budget.
    let start = Position::start().to_sfen();
    let mut stream = TcpStream::connect(&server.address).unwrap();
    let path = format!("/probe?pos={}", start.replace(' ', "_"));
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(stream);
    let asked = Instant::now();
    server.probe("203.0.113.8", &start);
    // Its own search (2 s) and change; waiting out the first one's would add 1.7 s.
    let took = asked.elapsed();
    assert!(took < Duration::from_millis(3000), "the second client waited {took:?}");
}

/// Threads of a process (Linux).
fn threads(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|v| v.trim().parse().ok()).unwrap()
}

/// The attack from many addresses: 36 clients, each hanging up right after asking for a long
/// search. Memory stays within the workers' tables, the threads within the pools, and SIGTERM
/// still ends the server within its grace period, though searches were running.
#[test]
fn hang_ups_from_many_addresses_stay_bounded_and_sigterm_ends_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let flags =
        ["--search-workers", "2", "--search-ms", "5000", "--background-workers", "0", "--shutdown-grace-ms", "1500"];
    let mut server = Server::start_searching(&dir.path().join("proofs.redb"), "1000000000", &flags);
    let pid = server.child.id();
    let (memory_before, threads_before) = (resident_bytes(pid), threads(pid));
    for (i, sfen) in distinct_positions(36).iter().enumerate() {
        let mut stream = TcpStream::connect(&server.address).unwrap();
        let path = probe_path(sfen);
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.{}\r\n\r\n", i + 10).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        drop(stream);
    }
    std::thread::sleep(Duration::from_millis(500));
    let grown = resident_bytes(pid).saturating_sub(memory_before);
    // Two searchers' tables (2 × 64 MiB) and change; one per client would be 2.3 GiB.
    assert!(grown < 224 << 20, "resident memory grew by {} MiB", grown >> 20);
    let added = threads(pid).saturating_sub(threads_before);
    assert!(added <= 8, "{added} threads more than before the attack");
    // SIGTERM while the searches still run: the server is gone within its grace period.
    // SAFETY: kill(2) on the child this test started.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let started = Instant::now();
    while server.child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_millis(4000), "still running 4 s after SIGTERM (grace 1.5 s)");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A batch shares one deadline for waiting and searching: while another client keeps the one
/// search worker busy, a batch of searched positions still ends within twice the search
/// budget, each entry answered or refused as `search-busy`.
#[test]
fn a_busy_batch_ends_within_twice_the_search_budget() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--search-workers", "1", "--search-ms", "300", "--background-workers", "0"];
    let server = Server::start_searching(&dir.path().join("proofs.redb"), "1000000000", &flags);
    let positions = distinct_positions(40);
    let busy = std::thread::scope(|scope| {
        let hog = scope.spawn(|| {
            // The hog's own searches wait for the worker too: while the batch holds it, one
            // of them may be refused as busy, which is as it should be.
            for sfen in &positions[12..24] {
                let path = probe_path(sfen);
                let (status, body) = server.get("203.0.113.5", &path);
                let busy = status == 503 && body.contains("search-busy");
                assert!(status == 200 || busy, "{status} {body}");
            }
        });
        std::thread::sleep(Duration::from_millis(150));
        let body = serde_json::json!({ "positions": positions[24..36] }).to_string();
        let started = Instant::now();
        let mut stream = TcpStream::connect(&server.address).unwrap();
        write!(
            stream,
            "POST /probe HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.6\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let took = started.elapsed();
        let still_busy = !hog.is_finished();
        hog.join().unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let batch: Json = serde_json::from_str(body).unwrap();
        let results = batch["results"].as_array().unwrap();
        assert_eq!(results.len(), 12);
        let refused =
            results.iter().filter(|e| e["error"]["type"].as_str().is_some_and(|t| t.ends_with("search-busy")));
        let refused = refused.count();
        let answered = results.iter().filter(|e| e["result"]["category"].is_string()).count();
        assert_eq!(refused + answered, 12, "{batch}");
        assert!(took < Duration::from_millis(600), "the batch took {took:?}");
        still_busy
    });
    assert!(busy, "the other client's searches ended before the batch: nothing was tested");
}

/// The queue lives in the store, so a restarted server states its length at once: before,
/// `search_queue_length` was missing from `/metrics` until something was queued again.
#[test]
fn the_queue_length_is_published_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("proofs.redb");
    // One background worker, busy for a day with the first position it takes: the rest wait.
    let flags = ["--background-ms", "86400000", "--search-ms", "30"];
    {
        let server = Server::start(&store, &flags);
        server.probe("203.0.113.7", DEEP_WIN);
        assert!(server.settled_queue_length(1.0) >= 1.0);
    }
    // Restarted without background workers, so that nothing is taken from the queue either.
    let server = Server::start(&store, &["--background-workers", "0"]);
    let (_, metrics) = server.get("198.51.100.99", "/metrics");
    let line = metrics.lines().find(|line| line.starts_with("search_queue_length "));
    let length: f64 =
        line.expect("search_queue_length after a restart").split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(length >= 1.0, "{line:?}");
}
