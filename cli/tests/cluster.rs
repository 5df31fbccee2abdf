//! Distributed solves through the binary: clusters of processes on loopback give the
//! recorded tables byte for byte, a cluster killed with `kill -9` resumes to the same bytes,
//! and a killed process stops the others.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use shogi4_engine::Material;
use shogi4_tablebase::{recorded_checksum, Table};

fn shogi4() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shogi4"))
}

fn recorded(material: &str) -> u64 {
    recorded_checksum(material.parse().unwrap()).expect("recorded")
}

/// The checksum of a written table, after checking that its bytes match it.
fn checksum_of(path: &Path) -> u64 {
    let table = Table::new(std::fs::read(path).unwrap()).unwrap();
    table.verify_checksum().unwrap();
    table.header().checksum
}

fn cluster_solve(material: &str, out: &Path, shape: &[&str], extra: &[&str]) -> std::process::Output {
    shogi4().args(["solve", material, "--out", out.to_str().unwrap()]).args(shape).args(extra).output().unwrap()
}

/// Held by every test that starts processes of a cluster. A cluster on one machine picks ports
/// free a moment before and binds some of them only once it has reached its peers; two
/// clusters started at once can each reach a port the other took, which is a failure of the
/// test's making, not of the solve's.
fn one_cluster_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static CLUSTERS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    CLUSTERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

const SHAPES: [[&str; 4]; 3] = [
    ["--cluster", "local:4", "--workers", "1"],
    ["--cluster", "local:2", "--workers", "2"],
    ["--cluster", "local:1", "--workers", "16"],
];

#[test]
fn every_game_up_to_three_pieces_on_three_cluster_shapes() {
    let _cluster = one_cluster_at_a_time();
    for material in Material::all_up_to(3) {
        let name = material.to_string();
        for shape in SHAPES {
            let out = tempfile::tempdir().unwrap();
            let output = cluster_solve(&name, out.path(), &shape, &["--json"]);
            assert!(output.status.success(), "{name} {shape:?}: {}", String::from_utf8_lossy(&output.stderr));
            let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(report["material"], name.as_str());
            let written = out.path().join(format!("{name}.s4tb"));
            assert_eq!(checksum_of(&written), recorded(&name), "{name} on {shape:?}");
            // Nothing else is left behind: no host file, no checkpoints, no temporary files.
            assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 1, "{name} on {shape:?}");
        }
    }
}

/// Waits until a line of `child`'s standard error satisfies `seen`; returns the lines read.
fn wait_for_line(child: &mut Child, seen: impl Fn(&str) -> bool) -> Vec<String> {
    let receiver = lines_of(child);
    let mut lines = Vec::new();
    while let Ok(line) = receiver.recv_timeout(Duration::from_secs(120)) {
        let done = seen(&line);
        lines.push(line);
        if done {
            return lines;
        }
    }
    panic!("never saw the line awaited; stderr was:\n{}", lines.join("\n"));
}

/// Starts a cluster solve and kills its launcher (and with it, every process of the
/// cluster) with SIGKILL once it prints `line`.
fn kill_after(material: &str, out: &Path, shape: &[&str], line: &str) {
    let mut launcher = shogi4()
        .args(["solve", material, "--out", out.to_str().unwrap()])
        .args(shape)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_line(&mut launcher, |seen| seen.contains(line));
    launcher.kill().unwrap();
    launcher.wait().unwrap();
    // The processes of the cluster die with their parent; give the kernel a moment.
    std::thread::sleep(Duration::from_millis(500));
}

#[test]
fn a_cluster_killed_mid_run_resumes_to_the_same_bytes_sooner() {
    let _cluster = one_cluster_at_a_time();
    let recorded = recorded("KKCFR");
    let shape = ["--cluster", "local:2", "--workers", "1", "--resume", "--checkpoint-secs", "0"];

    // A full run with checkpoints after every level, for the time to beat.
    let full = tempfile::tempdir().unwrap();
    let output = cluster_solve("KKCFR", full.path(), &shape, &["--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let full_seconds =
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()["seconds"].as_f64().unwrap();
    assert_eq!(checksum_of(&full.path().join("KKCFR.s4tb")), recorded);

    // Killed with SIGKILL after level 30 was checkpointed: the launcher and, with it, every
    // process of the cluster.
    let out = tempfile::tempdir().unwrap();
    kill_after("KKCFR", out.path(), &shape, "checkpoint after level 30");
    assert!(!out.path().join("KKCFR.s4tb").exists());

    let output = cluster_solve("KKCFR", out.path(), &shape, &["--json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let resumed_after = report["resumed_after"].as_u64().expect("it resumed");
    assert!(resumed_after >= 30, "{report}");
    assert_eq!(checksum_of(&out.path().join("KKCFR.s4tb")), recorded);
    let resumed_seconds = report["seconds"].as_f64().unwrap();
    assert!(resumed_seconds < full_seconds, "resumed in {resumed_seconds} s, a full run takes {full_seconds} s");
    let left: Vec<_> = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "checkpoints removed once the table is written: {left:?}");

    // Checkpoints of another cluster shape are refused, not misread.
    let output = cluster_solve("KKCF", out.path(), &shape, &[]);
    assert!(output.status.success());
    kill_after("KKCF", out.path(), &shape, "checkpoint after level 10");
    let output = cluster_solve("KKCF", out.path(), &["--cluster", "local:1", "--workers", "3", "--resume"], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("resume with the same processes and workers per process"), "{stderr}");
    assert!(stderr.contains("--cluster (or --hostfile) and --workers"), "{stderr}");
}

/// The exit code of a cluster process whose port was taken (the binary's `ADDRESS_IN_USE_EXIT`).
const ADDRESS_IN_USE: i32 = 75;

/// Starts a three-process cluster from a host file of free ports on loopback and waits until
/// process 0 reports level 2. The ports are free when picked but released before the
/// processes bind them, so another program (another test's cluster, on the same loopback) may
/// take one in between, or connect to one: then a process exits before the cluster runs (with
/// [`ADDRESS_IN_USE`] when its own port was taken), and the cluster is started again on new
/// ports. What this test checks begins once the cluster runs.
fn start_three(dir: &Path, material: &str) -> Vec<Child> {
    let mut failures = Vec::new();
    for attempt in 0..5 {
        let hosts: Vec<String> = free_ports(3).iter().map(|port| format!("127.0.0.1:{port}")).collect();
        let hostfile = dir.join(format!("hosts-{attempt}"));
        std::fs::write(&hostfile, format!("# a test cluster\n{}\n", hosts.join("\n"))).unwrap();
        let mut processes: Vec<Child> = (0..3)
            .map(|process| {
                shogi4()
                    .args(["solve", material, "--out", dir.to_str().unwrap(), "--hostfile"])
                    .arg(&hostfile)
                    .args(["--process", &process.to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let lines = lines_of(&mut processes[0]);
        let started = Instant::now();
        let mut seen = Vec::new();
        let running = loop {
            assert!(started.elapsed() < Duration::from_secs(120), "no level 2; stderr was:\n{}", seen.join("\n"));
            if let Ok(line) = lines.recv_timeout(Duration::from_millis(50)) {
                if line.contains("level   2") {
                    break true;
                }
                seen.push(line);
            }
            if processes.iter_mut().any(|p| p.try_wait().unwrap().is_some()) {
                break false;
            }
        };
        if running {
            return processes;
        }
        for (i, process) in processes.iter_mut().enumerate() {
            let _ = process.kill();
            let status = process.wait().unwrap();
            let mut message = String::new();
            if let Some(mut stderr) = process.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut stderr, &mut message);
            }
            failures.push(format!("attempt {attempt}, process {i}: {status}: {}", message.trim()));
        }
    }
    panic!("the cluster never started:\n{}", failures.join("\n"));
}

/// `count` distinct ports free a moment ago, below the kernel's ephemeral range as the local
/// launcher picks them: no connection gets one as its source port before its process listens.
fn free_ports(count: usize) -> Vec<u16> {
    let ephemeral: u16 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .map_or(32768, |range| range.split_whitespace().next().unwrap().parse().unwrap());
    let mut held = Vec::new();
    while held.len() < count {
        let random = std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0);
        let port = 10_000 + (random % u64::from(ephemeral - 10_000)) as u16;
        if let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            held.push(listener);
        }
    }
    held.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

/// The lines of `child`'s standard error, read on a thread of their own.
fn lines_of(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let stderr = child.stderr.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

#[test]
fn a_killed_process_stops_the_others_within_seconds() {
    let _cluster = one_cluster_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let mut processes = start_three(dir.path(), "KKCFR");
    processes[1].kill().unwrap();
    processes[1].wait().unwrap();
    let killed = Instant::now();
    for i in [0, 2] {
        loop {
            if let Some(status) = processes[i].try_wait().unwrap() {
                assert!(!status.success(), "process {i} must fail");
                break;
            }
            assert!(killed.elapsed() < Duration::from_secs(10), "process {i} still runs 10 s after its peer died");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let mut message = String::new();
    std::io::Read::read_to_string(&mut processes[2].stderr.take().unwrap(), &mut message).unwrap();
    assert!(message.contains("lost the connection to another process"), "{message}");
    assert!(!dir.path().join("KKCFR.s4tb").exists());
}

#[test]
fn a_process_whose_address_is_taken_says_so_and_exits_with_its_own_code() {
    let _cluster = one_cluster_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let hostfile = dir.path().join("hosts");
    std::fs::write(&hostfile, format!("{}\n{free}\n", taken.local_addr().unwrap())).unwrap();
    let output = shogi4()
        .args(["solve", "KKC", "--out", dir.path().to_str().unwrap(), "--hostfile"])
        .arg(&hostfile)
        .args(["--process", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(ADDRESS_IN_USE), "{stderr}");
    assert!(stderr.contains(&format!("address {} is already in use", taken.local_addr().unwrap())), "{stderr}");

    // Started by a local cluster's launcher, the process leaves the word to it: the launcher
    // starts the cluster again, and a `--json` run that then succeeds says nothing of the race.
    let launched = shogi4()
        .args(["solve", "KKC", "--json", "--out", dir.path().to_str().unwrap(), "--hostfile"])
        .arg(&hostfile)
        .args(["--process", "0"])
        .env("SHOGI4_CLUSTER_LAUNCHED", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&launched.stderr);
    assert_eq!(launched.status.code(), Some(ADDRESS_IN_USE), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn bad_cluster_arguments_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let hostfile = dir.path().join("hosts");
    std::fs::write(&hostfile, "127.0.0.1:1\nnot-an-address\n").unwrap();
    for (args, expected) in [
        (vec!["solve", "KKC", "--out", out, "--cluster", "remote:3"], "expected local:N"),
        (vec!["solve", "KKC", "KKF", "--out", out, "--cluster", "local:2"], "a cluster solves one closed game"),
        (vec!["solve", "KKC", "--out", out, "--cluster", "local:2", "--workers", "0"], "--workers"),
        (vec!["solve", "KKC", "--out", out, "--hostfile", hostfile.to_str().unwrap(), "--process", "0"], "line 2"),
    ] {
        let output = shogi4().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
