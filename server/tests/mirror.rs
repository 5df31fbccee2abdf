//! A mirror, end to end: `scripts/mirror-tables.sh` fetches a table set from the real server
//! over TCP, is killed in the middle of a transfer, runs again, resumes that transfer with a
//! byte range, and ends with every file byte for byte the server's.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::spawn_server;
use shogi4_tablebase::{solve, Silent};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/mirror-tables.sh")
}

fn mirror(url: &str, dir: &Path) -> Command {
    let mut command = Command::new("bash");
    command.arg(script()).arg(url).arg(dir).stdout(Stdio::null()).stderr(Stdio::null());
    command
}

fn metrics(address: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn a_mirror_resumes_an_interrupted_transfer_and_verifies_every_byte() {
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mirror");
    let _ = std::fs::remove_dir_all(&scratch);
    let (source, copy) = (scratch.join("source"), scratch.join("copy"));
    for name in ["KK", "KKC", "KKCF"] {
        solve(name.parse().unwrap(), &Silent).table.write_to_dir(&source).unwrap();
    }
    // 64 KiB/s: the KKCF table (about 285 KiB) takes seconds, time enough to interrupt it.
    let flags = ["--bind", "127.0.0.1:0", "--no-solve", "--proof-store", "none", "--download-kib-per-second", "64"];
    let (mut server, address) =
        spawn_server(flags.iter().map(Into::into).chain(["--tables".into(), source.clone().into_os_string()]));
    let url = format!("http://{address}");

    // The first run, killed (the script and its curl) once part of KKCF has arrived.
    let mut first = mirror(&url, &copy).process_group(0).spawn().unwrap();
    let part = copy.join(".KKCF.s4tb.part");
    let started = Instant::now();
    while std::fs::metadata(&part).map_or(0, |m| m.len()) < 64 * 1024 {
        assert!(started.elapsed() < Duration::from_secs(60), "no part of KKCF arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the process group this test created; no memory is involved.
    unsafe { libc::kill(-(first.id() as i32), libc::SIGKILL) };
    first.wait().unwrap();
    let whole = std::fs::metadata(source.join("KKCF.s4tb")).unwrap().len();
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept < whole, "the transfer finished before it was interrupted");
    assert!(!copy.join("KKCF.s4tb").exists(), "an unverified file took its final name");

    // The second run resumes from the part and verifies everything.
    let status = mirror(&url, &copy).status().unwrap();
    assert!(status.success(), "the mirror script failed");
    for name in ["KK.s4tb", "KKC.s4tb", "KKCF.s4tb"] {
        let (ours, theirs) = (std::fs::read(copy.join(name)).unwrap(), std::fs::read(source.join(name)).unwrap());
        assert!(ours == theirs, "{name} differs from the server's");
    }
    assert!(!part.exists(), "the part was left behind");
    let sums = std::fs::read_to_string(copy.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 3);
    assert!(copy.join("manifest.json").exists());
    // It resumed rather than starting over: the server answered one range request.
    let metrics = metrics(&address);
    assert!(
        metrics.lines().any(|l| l.starts_with("http_requests_total") && l.contains("status=\"206\"")),
        "no range request was answered:\n{metrics}"
    );
    let _ = server.kill();
    let _ = server.wait();
}
