//! Starting the real `shogi4-server` binary for the tests that talk to it over TCP.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Starts the server with `args` (which should bind port 0) and waits for the address it
/// announces: the process (stdout taken, stderr discarded) and `host:port`.
pub fn spawn_server<I, S>(args: I) -> (Child, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi4-server"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server binary starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().strip_prefix("listening on http://").expect("the server prints its address").to_string();
    (child, address)
}
