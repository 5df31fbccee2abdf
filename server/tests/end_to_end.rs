//! End to end: solve small tables, start the real `shogi4-server` binary on a free port, and
//! query it over TCP like any client would. Every move's value must agree with the position's
//! value, and the mainline must end in a royal capture after exactly `dtw` plies.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use serde_json::Value as Json;
use shogi4_engine::{Material, MaterialIndex};
use shogi4_tablebase::{solve, Silent};

/// The server process, killed if the test fails.
struct Server {
    child: Child,
    address: String,
}

impl Server {
    fn start(tables: &std::path::Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_shogi4-server"))
            .args(["--bind", "127.0.0.1:0", "--no-solve", "--tables"])
            .arg(tables)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server binary starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let address =
            line.trim().strip_prefix("listening on http://").expect("the server prints its address").to_string();
        Server { child, address }
    }

    /// One HTTP/1.1 request over a fresh TCP connection: (status, JSON body).
    fn get(&self, path_and_query: &str) -> (u16, Json) {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        write!(stream, "GET {path_and_query} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.address).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").expect("a complete response");
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_str(body).unwrap_or(Json::Null))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
