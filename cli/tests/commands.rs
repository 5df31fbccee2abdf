//! The `shogi4` binary as a user runs it: output formats, exit codes, and the solve → info →
//! audit → probe round trip, including an audit that must fail.

use std::path::Path;
use std::process::{Command, Output};

fn shogi4(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shogi4")).args(args).output().expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn perft_prints_one_line_per_depth_and_json() {
    let output = shogi4(&["perft", "4"]);
    assert!(output.status.success());
    assert_eq!(stdout(&output), "1 8\n2 64\n3 626\n4 6304\n");
    let output = shogi4(&["perft", "--pos", "trfk/3c/C3/KFRT[]_w_0_1", "2", "--json"]);
    assert_eq!(stdout(&output).trim(), r#"{"nodes":[8,64],"pos":"trfk/3c/C3/KFRT b - 1"}"#);
}

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    for args in
        [&["perft", "--pos", "trfk/3c/C3/KFRX b - 1", "2"][..], &["count", "KKX"], &["probe", "k3/4/4/K3 b Q 1"]]
    {
        let output = shogi4(args);
        assert!(!output.status.success(), "{args:?}");
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(message.starts_with("shogi4: "), "{args:?}: {message}");
    }
}

#[test]
fn table_sizes_out_of_range_are_refused_before_anything_is_allocated() {
    for size in ["0", "65537", "99999999999999"] {
        let output = shogi4(&["search", "--table-mb", size, "trfk/3c/C3/KFRT b - 1"]);
        assert_eq!(output.status.code(), Some(2), "--table-mb {size}");
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(message.contains("is not in 1..=65536"), "{message}");
    }
}

/// What the machine cannot hold is refused with a message and exit code 1, before it is
/// allocated: a failed allocation would abort the process (exit 134, a backtrace).
#[test]
fn work_larger_than_the_memory_is_refused_not_aborted() {
    // A solve of the full game's material needs tens of terabytes on any machine.
    let output = shogi4(&["bench", "KKCCFFRRTT"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("needs about"));
    // A 64 GiB transposition table, where the machine has less available.
    if shogi4_tablebase::available_memory().is_some_and(|bytes| bytes < 64 << 30) {
        let (dir, pos) = (tempfile::tempdir().unwrap(), "k3/4/4/K3 b C 1");
        let out = dir.path().join("x.s4cert");
        let certify = ["certify", pos, "--out", out.to_str().unwrap(), "--table-mb", "65536"];
        for args in [&["search", pos, "--table-mb", "65536"][..], &certify] {
            let output = shogi4(args);
            assert_eq!(output.status.code(), Some(1), "{args:?}");
            assert!(String::from_utf8_lossy(&output.stderr).contains("a smaller table"), "{args:?}");
        }
    }
}

#[test]
fn count_reproduces_the_published_figures() {
    let output = shogi4(&["count", "KKCCFFRRTT", "--json"]);
    assert_eq!(
        stdout(&output).trim(),
        r#"{"material":"KKCCFFRRTT","positions":146855796943200,"slots":36713949235800}"#
    );
}

#[test]
fn solve_info_audit_probe_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let output = shogi4(&["solve", "KK", "KKC", "--out", out, "--json"]);
    assert!(output.status.success());
    let lines: Vec<serde_json::Value> = stdout(&output).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["material"], "KKC");
    assert_eq!(lines[1]["positions"], 24_480);
    for key in ["wins", "losses", "draws", "max_dtw", "histogram", "seconds", "edges", "ns_per_edge", "peak_rss_bytes"]
    {
        assert!(!lines[1][key].is_null(), "{key}");
    }

    let table = dir.path().join("KKC.s4tb");
    let info: serde_json::Value =
        serde_json::from_str(&stdout(&shogi4(&["info", table.to_str().unwrap(), "--json"]))).unwrap();
    assert_eq!(info["wins"], lines[1]["wins"]);
    assert!(shogi4(&["audit", out]).status.success());

    let probe = shogi4(&["probe", "k3/4/4/K3 b C 1", "--tables", out, "--json"]);
    let probe: serde_json::Value = serde_json::from_str(&stdout(&probe)).unwrap();
    assert_eq!(probe["category"], "win");
    assert_eq!(probe["dtw"], 9);

    // --missing leaves a valid table alone.
    let again = shogi4(&["solve", "KKC", "--out", out, "--missing", "--json"]);
    assert!(again.status.success());
    assert_eq!(stdout(&again), "");

    corrupt_and_audit(&table);
    stray_overflow_byte_fails_the_audit(dir.path());
}

/// A value byte of 255 with no overflow entry: the audit says FAIL with the slot and exits 1.
fn stray_overflow_byte_fails_the_audit(dir: &Path) {
    let out = dir.to_str().unwrap();
    assert!(shogi4(&["solve", "KKC", "--out", out]).status.success());
    let table = dir.join("KKC.s4tb");
    let mut bytes = std::fs::read(&table).unwrap();
    let values_offset = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    bytes[values_offset + 77] = 0xFF;
    std::fs::write(&table, bytes).unwrap();
    let output = shogi4(&["audit", table.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("slot 77: ") && text.contains("no entry for it"), "{text}");
}

/// Damages one value: the audit must fail, naming an offending position as SFEN.
fn corrupt_and_audit(table: &Path) {
    let mut bytes = std::fs::read(table).unwrap();
    let values_offset = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    bytes[values_offset + 100] ^= 2;
    std::fs::write(table, bytes).unwrap();
    let output = shogi4(&["audit", table.to_str().unwrap()]);
    assert!(!output.status.success());
    let text = stdout(&output);
    assert!(text.contains("checksum mismatch"), "{text}");
    assert!(text.contains("slot 100: "), "{text}");
}

/// `shogi4 prove` killed with SIGKILL mid-run (searching two leaves at once) leaves a store
/// that opens cleanly, keeps what was committed, and a second run resumes: it expands what
/// the store knows without searching it again.
#[test]
fn prove_survives_kill_9_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("proofs.redb");
    let args =
        ["prove", "--positions", "40", "--ms", "40", "--table-mb", "4", "--store", store.to_str().unwrap(), "--json"];
    // Killed while two searches run side by side; resumed with one.
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi4")).args(args).args(["--threads", "2"]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(900));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let output = shogi4(&args);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("damaged"));
    let summary: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert!(summary["resumed"].as_u64().unwrap() > 0, "nothing survived the kill: {summary}");
    assert_eq!(summary["searched"], 40, "{summary}");
    assert_eq!(summary["replies"].as_object().unwrap().len(), 8, "{summary}");
    assert!(summary["records"].as_u64().unwrap() > 40, "{summary}");
}

/// A prover's store carried through a file resumes where it stopped only with its unknown
/// outcomes (`proofs export --with-unknown`): each marks a position analysed, so the next run
/// expands it from the store instead of searching it again.
#[test]
fn a_prover_resumes_from_an_export_with_its_unknowns() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let json = |output: Output| -> serde_json::Value {
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_str(stdout(&output).trim()).unwrap()
    };
    let prove = |store: &str, positions: &str| {
        json(shogi4(&["prove", "--positions", positions, "--ms", "30", "--table-mb", "4", "--store", store, "--json"]))
    };
    let first = prove(&path("first.redb"), "15");
    assert_eq!(first["searched"], 15, "{first}");
    let proofs = json(shogi4(&["proofs", "export", &path("p.proofs"), "--store", &path("first.redb"), "--json"]));
    let export = ["proofs", "export", &path("all.proofs"), "--store", &path("first.redb"), "--with-unknown", "--json"];
    let everything = json(shogi4(&export));
    assert_eq!(proofs["unknown"], 0, "{proofs}");
    let unknown = everything["unknown"].as_u64().unwrap();
    assert!(unknown > 0, "{everything}");
    assert_eq!(everything["records"].as_u64(), proofs["records"].as_u64().map(|n| n + unknown));
    let mut resumed = Vec::new();
    for (file, store) in [("p.proofs", "b.redb"), ("all.proofs", "c.redb")] {
        json(shogi4(&["proofs", "import", &path(file), "--store", &path(store), "--json"]));
        resumed.push(prove(&path(store), "1")["resumed"].as_u64().unwrap());
    }
    assert!(resumed[1] > resumed[0], "resumed from the proofs alone and with the unknowns: {resumed:?}");
    let refused = shogi4(&["proofs", "import", &path("all.proofs"), "--store", &path("d.redb"), "--with-unknown"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--with-unknown is for export"));
    // A file that is not an export is refused before the store is opened: no store is begun.
    std::fs::write(path("notes.txt"), "not an export\n").unwrap();
    let refused = shogi4(&["proofs", "import", &path("notes.txt"), "--store", &path("e.redb")]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a proof export"));
    assert!(!dir.path().join("e.redb").exists(), "a refused import began a store");
    // Nor does an export from a store that is not there.
    let refused = shogi4(&["proofs", "export", &path("f.proofs"), "--store", &path("f.redb")]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no proof store at"));
    assert!(!dir.path().join("f.redb").exists() && !dir.path().join("f.proofs").exists());
}

/// A certificate is imported as the outcomes its checker proves (`proofs import FILE.s4cert`),
/// the way a server merges the published ones: then `probe --store` answers its position from
/// the store. A damaged certificate is refused before a store is begun.
#[test]
fn a_certificate_is_imported_as_what_it_proves() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let published = concat!(env!("CARGO_MANIFEST_DIR"), "/../tables/certificates/a2a3.s4cert");
    let output = shogi4(&["proofs", "import", published, "--store", &path("s.redb"), "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let imported: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert!(imported["records"].as_u64().unwrap() > 1_000, "{imported}");
    assert!(imported["changed"].as_u64().unwrap() > 1_000, "{imported}");
    let probe = shogi4(&[
        "probe",
        "trfk/C2c/4/KFRT w - 1",
        "--store",
        &path("s.redb"),
        "--tables",
        &path("none"),
        "--json",
        "--search-ms",
        "1",
    ]);
    let answer: serde_json::Value = serde_json::from_str(stdout(&probe).trim()).unwrap();
    assert_eq!((answer["category"].as_str(), answer["source"].as_str()), (Some("win"), Some("store")), "{answer}");
    let mut bytes = std::fs::read(published).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(path("bad.s4cert"), bytes).unwrap();
    let refused = shogi4(&["proofs", "import", &path("bad.s4cert"), "--store", &path("t.redb")]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("certificate refused"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!dir.path().join("t.redb").exists(), "a refused import began a store");
}

/// Commands that write a file replace only a file of their own kind: an export over the store
/// it reads (or any database), a certificate over a device node or a text file, and tables
/// compressed into their own directory are refused, and the file is left as it was.
#[test]
fn no_command_replaces_a_file_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let store = path("proofs.redb");
    let made = shogi4(&["prove", "--positions", "2", "--ms", "20", "--table-mb", "4", "--store", &store]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let before = std::fs::read(&store).unwrap();
    let refused = shogi4(&["proofs", "export", &store, "--store", &store]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("refusing to replace"), "{refused:?}");
    assert!(std::fs::read(&store).unwrap() == before, "the store was touched");
    // An export may replace an export.
    for _ in 0..2 {
        assert!(shogi4(&["proofs", "export", &path("p.proofs"), "--store", &store]).status.success());
    }
    std::fs::write(path("notes.txt"), "my notes\n").unwrap();
    for out in [path("notes.txt"), "/dev/null".to_string(), dir.path().to_str().unwrap().to_string()] {
        let refused = shogi4(&["certify", "k3/4/1K2/4 b C 1", "--out", &out, "--ms", "100"]);
        assert_eq!(refused.status.code(), Some(1), "{out}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("refusing to replace"), "{out}: {refused:?}");
    }
    assert_eq!(std::fs::read_to_string(path("notes.txt")).unwrap(), "my notes\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }
    let tables = dir.path().join("tables");
    assert!(shogi4(&["solve", "KK", "--out", tables.to_str().unwrap()]).status.success());
    let refused = shogi4(&["compress", tables.to_str().unwrap(), "--out", tables.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("rewritten in place"), "{refused:?}");
}

/// `shogi4 probe --store` follows the server's policy for a position without a table: it
/// searches on top of the store and records what it proved, so that the same query answers
/// from the store the second time; without `--store`, nothing is recorded anywhere.
#[test]
fn probe_with_a_store_records_and_then_answers_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let (tables, store) = (dir.path().join("no-tables"), dir.path().join("proofs.redb"));
    let args = ["probe", "k3/4/4/K3 b C 1", "--tables", tables.to_str().unwrap(), "--search-table-mb", "4", "--json"];
    let plain: serde_json::Value = serde_json::from_str(stdout(&shogi4(&args)).trim()).unwrap();
    assert_eq!((plain["source"].as_str(), plain["dtw"].as_u64()), (Some("search"), Some(9)), "{plain}");
    assert!(!store.exists());
    // `none` is no store, as the server's `--proof-store none`: no file of that name appears.
    let none = Command::new(env!("CARGO_BIN_EXE_shogi4"))
        .args([&args[..], &["--store", "none"]].concat())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(none.status.success(), "{}", String::from_utf8_lossy(&none.stderr));
    assert!(!dir.path().join("none").exists(), "a store file named none was created");
    let with_store = [&args[..], &["--store", store.to_str().unwrap()]].concat();
    let first: serde_json::Value = serde_json::from_str(stdout(&shogi4(&with_store)).trim()).unwrap();
    assert_eq!(first["source"], "search", "{first}");
    let second: serde_json::Value = serde_json::from_str(stdout(&shogi4(&with_store)).trim()).unwrap();
    assert_eq!(second["source"], "store", "{second}");
    assert_eq!((second["category"].as_str(), second["dtw"].as_u64()), (Some("win"), Some(9)), "{second}");
}

/// `shogi4 prove` keeps within its limits: transposition tables (one a thread) that leave too
/// little of the memory limit are refused before anything is written, and a store already at its size
/// limit stops the run before its first search, with the reason and the store's knowledge of
/// the replies reported.
#[test]
fn prove_keeps_within_its_memory_and_store_limits() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("proofs.redb");
    let store_arg = store.to_str().unwrap();
    let refused = shogi4(&["prove", "--table-mb", "64", "--max-memory", "100M", "--store", store_arg]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("does not fit a memory limit of 100 MiB"));
    // A table each: 32 MiB would fit for one thread, not for two.
    let args = ["prove", "--table-mb", "32", "--threads", "2", "--max-memory", "100M", "--store", store_arg];
    let refused = shogi4(&args);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("2 thread(s) does not fit"));
    assert!(!store.exists(), "a refused run wrote its store");
    // Without a time limit, each search needs a node budget.
    let refused = shogi4(&["prove", "--ms", "0", "--store", store_arg]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--ms 0 needs --nodes"));
    assert!(!store.exists(), "a refused run wrote its store");
    let grown =
        shogi4(&["prove", "--positions", "20", "--ms", "20", "--table-mb", "4", "--store", store_arg, "--json"]);
    assert!(grown.status.success(), "{}", String::from_utf8_lossy(&grown.stderr));
    let grown: serde_json::Value = serde_json::from_str(stdout(&grown).trim()).unwrap();
    assert_eq!(grown["ended"], "budget spent", "{grown}");
    assert!(!grown["line"].as_array().unwrap().is_empty(), "{grown}");
    let bytes = std::fs::metadata(&store).unwrap().len();
    let limit = bytes.to_string();
    let args = ["prove", "--positions", "20", "--ms", "20", "--table-mb", "4", "--max-store", &limit];
    let stopped = shogi4(&[&args[..], &["--store", store_arg, "--json"]].concat());
    assert!(stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stderr));
    let stopped: serde_json::Value = serde_json::from_str(stdout(&stopped).trim()).unwrap();
    assert_eq!(stopped["ended"], "the store's size limit is reached", "{stopped}");
    assert_eq!(stopped["searched"], 0, "{stopped}");
    // Opening may let redb trim the file; it must not grow.
    assert!(std::fs::metadata(&store).unwrap().len() <= bytes, "the store grew past its limit");
    assert_eq!(stopped["replies"]["a1a3"], grown["replies"]["a1a3"], "{stopped}");
}

/// What `shogi4 prove` records, searched or back-propagated, is what the table says: it is run
/// from the longest win of a closed game (as if the game had no table), and every position
/// within a few plies that the store then holds is checked against the table. Once with one
/// thread, once with several leaves searched side by side.
#[test]
fn prove_records_only_what_the_table_confirms() {
    use shogi4_tablebase::{solve, Silent, Table};
    let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
    for threads in ["1", "3"] {
        prove_from_the_longest_win(&table, threads);
    }
}

fn prove_from_the_longest_win(table: &shogi4_tablebase::Table<Vec<u8>>, threads: &str) {
    let (longest, start) = table.longest_win().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("proofs.redb");
    let sfen = start.to_sfen();
    // A node budget, not a time: every run makes the same choices, on any machine.
    let args = ["prove", "--from", &sfen, "--positions", "60", "--ms", "0", "--nodes", "20000", "--threads", threads];
    let output = shogi4(&[&args[..], &["--table-mb", "4", "--store", store.to_str().unwrap(), "--json"]].concat());
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let searched = summary["searched"].as_u64().unwrap();
    assert!((1..=60).contains(&searched), "{threads} threads: {summary}");
    assert_eq!(summary["threads"].to_string(), threads, "{summary}");
    let (checked, proven) = store_agrees_with_table(&store, &start, table);
    assert!(proven > 20 && checked > proven, "{threads} threads: {checked} checked, {proven} proven: {summary}");
    // Settled or not, the start is never claimed as anything but a win.
    let start_value = summary["start"].as_str().unwrap();
    assert!(start_value.starts_with("win") || start_value.starts_with("unknown"), "win in {longest}: {summary}");
}

/// Every position within four plies of `start` that the store at `store` holds is checked
/// against the table: (positions checked, of them proven won or lost).
fn store_agrees_with_table(
    store: &std::path::Path,
    start: &shogi4_engine::Position,
    table: &shogi4_tablebase::Table<Vec<u8>>,
) -> (usize, usize) {
    use shogi4_search::Outcome;
    use shogi4_tablebase::Value;
    let (store, _) = shogi4_proofs::ProofStore::open(store).unwrap();
    let mut seen = std::collections::HashSet::from([start.key()]);
    let mut frontier = vec![*start];
    let (mut checked, mut proven) = (0, 0);
    for _ in 0..=4 {
        let mut next = Vec::new();
        for position in frontier {
            let truth = table.value_of(&position).unwrap();
            if let Some(outcome) = store.get(position.key()).unwrap() {
                checked += 1;
                proven += usize::from(outcome.proven_win().is_some());
                let holds = match (outcome.proven_win(), outcome.distance_bounds(), outcome) {
                    (Some(win), Some((at_least, at_most)), _) => {
                        matches!(truth, Value::Win(_)) == win
                            && truth.dtw().is_some_and(|d| (at_least..=at_most).contains(&d))
                    }
                    (_, _, Outcome::Unknown { no_result_within }) => truth.dtw().is_none_or(|d| d > no_result_within),
                    // A search proves draws too (both value questions refuted by repetitions).
                    (_, _, Outcome::Proven(Value::Draw)) => truth == Value::Draw,
                    _ => false,
                };
                assert!(holds, "{}: stored {outcome:?}, table {truth}", position.to_sfen());
            }
            for &mv in position.legal_moves().iter().filter(|&&mv| !position.captures_royal(mv)) {
                let child = position.play_unchecked(mv);
                if seen.insert(child.key()) {
                    next.push(child);
                }
            }
        }
        frontier = next;
    }
    (checked, proven)
}

/// `shogi4 prove --steer` from the longest win of a closed game (as if it had no table), on a
/// node budget: it proves the win, every position it stores is what the table says, and a
/// second run over the same store finds the start proven without a search.
#[test]
fn the_steered_prover_proves_the_longest_win_and_keeps_only_truths() {
    use shogi4_tablebase::{solve, Silent, Table};
    let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
    let (longest, start) = table.longest_win().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("proofs.redb");
    let sfen = start.to_sfen();
    let side = if start.turn() == shogi4_engine::Color::First { "first" } else { "second" };
    let run = |positions: &str| {
        let args =
            ["prove", "--steer", side, "--from", &sfen, "--positions", positions, "--ms", "0", "--nodes", "20000"];
        let output = shogi4(
            &[&args[..], &["--guide-nodes", "2000", "--table-mb", "4", "--store", store.to_str().unwrap(), "--json"]]
                .concat(),
        );
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_str::<serde_json::Value>(stdout(&output).trim()).unwrap()
    };
    let summary = run("2000");
    assert_eq!(summary["status"], "proven", "win in {longest}: {summary}");
    assert!(summary["proof_positions"].as_u64().unwrap() >= 1, "{summary}");
    assert!(summary["start"].as_str().unwrap().starts_with("win"), "{summary}");
    let (checked, proven) = store_agrees_with_table(&store, &start, &table);
    assert!(proven >= 5 && checked >= proven, "{checked} checked, {proven} proven: {summary}");
    let again = run("2000");
    assert_eq!((again["status"].as_str(), again["searched"].as_u64()), (Some("proven"), Some(0)), "{again}");
}

/// `prove --steer --certified`, over a store of its own and with the first store as the
/// engine's hints, leaves a store from which `certify --store` writes the certificate with
/// leaf budgets too small to prove anything, i.e. without a search; from the uncertified
/// store the same assembly fails. Hints that are not there are refused.
#[test]
fn a_certified_steered_run_is_certified_from_its_store_alone() {
    use shogi4_tablebase::{solve, Silent, Table};
    let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
    let (_, start) = table.longest_win().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let sfen = start.to_sfen();
    let side = if start.turn() == shogi4_engine::Color::First { "first" } else { "second" };
    let steered = [
        "prove",
        "--steer",
        side,
        "--from",
        &sfen,
        "--positions",
        "2000",
        "--ms",
        "0",
        "--nodes",
        "20000",
        "--guide-nodes",
        "2000",
    ];
    let plain = shogi4(&[&steered[..], &["--table-mb", "4", "--store", &path("plain.redb")]].concat());
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let missing =
        shogi4(&[&steered[..], &["--certified", "--hints", &path("none.redb"), "--store", &path("c.redb")]].concat());
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("--hints"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    let certified = shogi4(
        &[
            &steered[..],
            &["--table-mb", "4", "--certified", "--hints", &path("plain.redb"), "--store", &path("c.redb"), "--json"],
        ]
        .concat(),
    );
    assert!(certified.status.success(), "{}", String::from_utf8_lossy(&certified.stderr));
    let summary: serde_json::Value = serde_json::from_str(stdout(&certified).trim()).unwrap();
    assert_eq!(summary["status"], "proven", "{summary}");
    let assemble = |store: &str| {
        shogi4(&[
            "certify",
            &sfen,
            "--store",
            &path(store),
            "--ms",
            "0",
            "--nodes",
            "1",
            "--out",
            &path(&format!("{store}.s4cert")),
        ])
    };
    let from_certified = assemble("c.redb");
    assert!(from_certified.status.success(), "{}", String::from_utf8_lossy(&from_certified.stderr));
    assert!(String::from_utf8_lossy(&from_certified.stderr).contains(" 0 leaves searched"));
    assert!(shogi4(&["verify-proof", &path("c.redb.s4cert")]).status.success());
    let from_plain = assemble("plain.redb");
    assert!(
        !from_plain.status.success(),
        "the uncertified store was spelt out without searching: the test shows nothing"
    );
    // With a folder of kept leaves: a pass that cannot search names in `open.txt` the leaves
    // it could not certify, each a position the store proves won; a pass that can keeps every
    // leaf's certificate there, and from those a pass that cannot search succeeds.
    let pass = |leaves: &str, nodes: &str, out: &str| {
        let leaves = path(leaves);
        std::fs::create_dir_all(&leaves).unwrap();
        let args =
            ["certify", &sfen, "--store", &path("plain.redb"), "--ms", "0", "--nodes", nodes, "--leaves", &leaves];
        shogi4(&[&args[..], &["--out", &path(out)]].concat())
    };
    assert!(!pass("blind", "1", "blind.s4cert").status.success());
    let open = std::fs::read_to_string(dir.path().join("blind/open.txt")).unwrap();
    assert!(!open.is_empty(), "a pass failed and named no leaf");
    // Probed on a copy: a probe records what its search found, within a time budget, and
    // the passes below must walk the store the steered run left, not one that depends on how
    // busy the machine was (CI once met a leaf no pass could certify after such records).
    std::fs::copy(path("plain.redb"), path("probed.redb")).unwrap();
    for leaf in open.lines().take(3) {
        let probe = shogi4(&["probe", leaf, "--store", &path("probed.redb"), "--json"]);
        let answer: serde_json::Value = serde_json::from_str(stdout(&probe).trim()).unwrap();
        assert_eq!(answer["category"], "win", "{leaf}: {answer}");
    }
    // The leaves a pass named open are not searched again by the next, even with a budget that
    // certifies many of them, until `open.txt` is deleted.
    let still_open = || {
        let named = std::fs::read_to_string(dir.path().join("blind/open.txt")).unwrap();
        open.lines().filter(|leaf| named.lines().any(|again| again == *leaf)).count()
    };
    assert!(!pass("blind", "200000", "again.s4cert").status.success());
    let not_searched = still_open();
    std::fs::remove_file(dir.path().join("blind/open.txt")).unwrap();
    pass("blind", "200000", "again.s4cert");
    let searched = if dir.path().join("blind/open.txt").exists() { still_open() } else { 0 };
    assert!(not_searched > searched, "{not_searched} named open again unsearched, {searched} once searched");
    let searching = pass("kept", "200000", "searched.s4cert");
    assert!(searching.status.success(), "{}", String::from_utf8_lossy(&searching.stderr));
    let kept = std::fs::read_dir(dir.path().join("kept")).unwrap().count();
    assert!(kept > 1, "{kept} files kept");
    let resumed = pass("kept", "1", "resumed.s4cert");
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(shogi4(&["verify-proof", &path("resumed.s4cert")]).status.success());
    // The kept leaves rewritten in the compact form (as `scripts/pack-leaves.sh` packs them)
    // seed a pass as well.
    std::fs::create_dir_all(path("packed")).unwrap();
    for file in std::fs::read_dir(dir.path().join("kept")).unwrap() {
        let file = file.unwrap().path();
        if file.extension().is_some_and(|e| e == "s4cert") {
            let to = dir.path().join("packed").join(file.file_name().unwrap());
            assert!(shogi4(&["verify-proof", file.to_str().unwrap(), "--compact", to.to_str().unwrap()])
                .status
                .success());
            assert!(std::fs::read(&to).unwrap().starts_with(shogi4_certificate::COMPACT_MAGIC));
        }
    }
    let from_packed = pass("packed", "1", "packed.s4cert");
    assert!(from_packed.status.success(), "{}", String::from_utf8_lossy(&from_packed.stderr));
    assert!(shogi4(&["verify-proof", &path("packed.s4cert")]).status.success());
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    use std::io::BufRead;
    // perft 8 prints its last lines after a pause: by then the reader has gone.
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi4"))
        .args(["perft", "8"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert_eq!(first, "1 8\n");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_game_too_big_for_the_memory_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let output = shogi4(&["solve", "KK", "KKCFR", "--out", out, "--max-memory", "20M"]);
    assert_eq!(output.status.code(), Some(1));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("solving KKCFR needs about") && message.contains("nothing was written"), "{message}");
    assert!(message.contains("the limit is --max-memory"), "{message}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "not even the small game was solved");
    // The full game needs far more than any machine here has.
    let output = shogi4(&["solve", "KKCCFFRRTT", "--out", out]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("needs about"));
    assert!(shogi4(&["solve", "KK", "--out", out, "--max-memory", "1G"]).status.success());
}

/// `shogi4 solve --resume` killed with SIGKILL mid-solve resumes from its checkpoint and
/// writes the same bytes as an uninterrupted solve; a checkpoint of another game is refused.
#[test]
fn solve_resumes_after_kill_9_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let args = ["solve", "KKCFR", "--out", out, "--resume", "--checkpoint-secs", "0", "--threads", "1"];
    let checkpoint = dir.path().join(".KKCFR.s4tb.checkpoint");
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi4")).args(args).spawn().unwrap();
    let started = std::time::Instant::now();
    while !checkpoint.exists() {
        assert!(started.elapsed().as_secs() < 120, "no checkpoint appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(!dir.path().join("KKCFR.s4tb").exists(), "the solve finished before the kill");
    assert!(checkpoint.exists());

    let output = shogi4(&args);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!checkpoint.exists(), "the checkpoint is removed once the table is written");
    let straight = shogi4_tablebase::solve("KKCFR".parse().unwrap(), &shogi4_tablebase::Silent).table.to_bytes();
    assert!(std::fs::read(dir.path().join("KKCFR.s4tb")).unwrap() == straight, "resumed table differs");

    // Another game's checkpoint in KKCF's place: refused, with the reason, and nothing written.
    std::fs::write(dir.path().join(".KKCF.s4tb.checkpoint"), b"S4CKPT\0\x01 not this one").unwrap();
    let output = shogi4(&["solve", "KKCF", "--out", out, "--resume"]);
    assert_eq!(output.status.code(), Some(1));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains(".KKCF.s4tb.checkpoint") && message.contains("delete it"), "{message}");
    assert!(!dir.path().join("KKCF.s4tb").exists());
}

/// A second `shogi4 prove` on a store that another process holds is refused with a clear
/// message, and the live store is neither moved aside nor touched.
#[test]
fn a_store_held_by_another_process_is_refused_not_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("proofs.redb");
    let args = ["prove", "--positions", "1000", "--ms", "50", "--table-mb", "4", "--store", store.to_str().unwrap()];
    let mut holder = Command::new(env!("CARGO_BIN_EXE_shogi4")).args(args).spawn().unwrap();
    // Until the first process has created and opened it.
    let started = std::time::Instant::now();
    while !store.exists() && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let second = shogi4(&["prove", "--positions", "1", "--store", store.to_str().unwrap()]);
    let still_running = holder.try_wait().unwrap().is_none();
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(still_running, "the first run ended before the second started");
    assert!(!second.status.success());
    let message = String::from_utf8_lossy(&second.stderr);
    assert!(message.contains("held by another process"), "{message}");
    // The holder is named, so the operator knows which process to stop.
    assert!(message.contains(&format!("pid {} (shogi4)", holder.id())), "{message}");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["proofs.redb"], "{names:?}");
}

/// A table file named after another game fails the audit, as the server refuses it.
#[test]
fn a_table_under_another_games_name_fails_the_audit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    assert!(shogi4(&["solve", "KKC", "--out", out]).status.success());
    let renamed = dir.path().join("KKF.s4tb");
    std::fs::rename(dir.path().join("KKC.s4tb"), &renamed).unwrap();
    let output = shogi4(&["audit", renamed.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(stdout(&output).starts_with("FAIL"), "{}", stdout(&output));
}

/// `solve --compress`, `compress`, `info`, `audit`, `probe` on compressed tables, and
/// `compress --plain` back to the very bytes the solver wrote.
#[test]
fn compressed_tables_round_trip_through_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, packed, back) = (dir.path().join("plain"), dir.path().join("packed"), dir.path().join("back"));
    let (plain_s, packed_s, back_s) = (plain.to_str().unwrap(), packed.to_str().unwrap(), back.to_str().unwrap());
    assert!(shogi4(&["solve", "KK", "KKC", "KKCF", "--out", plain_s]).status.success());
    let output = shogi4(&["compress", plain_s, "--out", packed_s, "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<serde_json::Value> = stdout(&output).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    let kkcf = &lines[2];
    assert_eq!(kkcf["material"], "KKCF");
    assert!(kkcf["bytes_after"].as_u64().unwrap() < kkcf["bytes_before"].as_u64().unwrap());
    let info = stdout(&shogi4(&["info", packed.join("KKCF.s4tb").to_str().unwrap()]));
    assert!(info.contains("version 4, compressed"), "{info}");
    assert!(shogi4(&["audit", packed_s]).status.success());
    for tables in [plain_s, packed_s] {
        let probe = shogi4(&["probe", "k3/4/4/K3 b C 1", "--tables", tables, "--json"]);
        let probe: serde_json::Value = serde_json::from_str(&stdout(&probe)).unwrap();
        assert_eq!((probe["category"].as_str(), probe["dtw"].as_u64()), (Some("win"), Some(9)), "{tables}");
    }
    assert!(shogi4(&["compress", "--plain", packed_s, "--out", back_s]).status.success());
    for name in ["KK.s4tb", "KKC.s4tb", "KKCF.s4tb"] {
        assert!(std::fs::read(back.join(name)).unwrap() == std::fs::read(plain.join(name)).unwrap(), "{name}");
    }
    // solve --compress writes the compressed form directly.
    let direct = dir.path().join("direct");
    assert!(shogi4(&["solve", "KKCF", "--compress", "--out", direct.to_str().unwrap()]).status.success());
    assert!(std::fs::read(direct.join("KKCF.s4tb")).unwrap() == std::fs::read(packed.join("KKCF.s4tb")).unwrap());
    // More parts per block: a larger file, the same answers; a part count out of range is
    // refused by name.
    let parts = dir.path().join("parts");
    let output = shogi4(&["compress", plain_s, "--parts", "16", "--out", parts.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let size = |dir: &std::path::Path| std::fs::metadata(dir.join("KKCF.s4tb")).unwrap().len();
    assert!(size(&parts) > size(&packed));
    assert!(shogi4(&["audit", parts.to_str().unwrap()]).status.success());
    let refused = shogi4(&["compress", plain_s, "--parts", "17", "--out", parts.to_str().unwrap()]);
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("--parts"));
}

#[test]
fn certify_writes_a_certificate_that_verify_proof_accepts_and_damage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("proof.s4cert");
    let file_arg = file.to_str().unwrap();
    // After 1. a2a3 from the start, the second player wins (a real-game position, no table).
    let output = shogi4(&["certify", "trfk/C2c/4/KFRT w - 1", "--out", file_arg, "--ms", "60000", "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let written: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(written["category"], "win");
    let output = shogi4(&["verify-proof", file_arg, "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let checked: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(written, checked);
    assert!(checked["winner_positions"].as_u64().unwrap() > 1000, "{checked}");
    let text = stdout(&shogi4(&["verify-proof", file_arg]));
    assert!(text.contains("the side to move wins, within"), "{text}");
    // The last entry dropped (every entry is part of the proof), and a truncated file:
    // refused, with the problem document of `--json`.
    let bytes = std::fs::read(&file).unwrap();
    let count_at = 8 + 2 + usize::from(u16::from_le_bytes([bytes[8], bytes[9]])) + 1;
    let mut dropped = bytes[..bytes.len() - 19].to_vec();
    let count = u64::from_le_bytes(dropped[count_at..count_at + 8].try_into().unwrap()) - 1;
    dropped[count_at..count_at + 8].copy_from_slice(&count.to_le_bytes());
    for (name, content) in [("dropped.s4cert", dropped), ("short.s4cert", bytes[..bytes.len() - 7].to_vec())] {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let output = shogi4(&["verify-proof", path.to_str().unwrap(), "--json"]);
        assert!(!output.status.success(), "{name}");
        let problem: serde_json::Value = serde_json::from_slice(&output.stderr).unwrap();
        assert_eq!(problem["type"], "/problems/certificate-rejected", "{name}: {problem}");
    }
    // The same proof in the compact form: the same tree and value, a byte a winner's position.
    let small = dir.path().join("proof2.s4cert");
    let output = shogi4(&["verify-proof", file_arg, "--compact", small.to_str().unwrap(), "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let output = shogi4(&["verify-proof", small.to_str().unwrap(), "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let compact: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    for field in ["sfen", "category", "winner_positions", "loser_positions", "longest_line"] {
        assert_eq!(compact[field], checked[field], "{field}");
    }
    assert!(compact["dtw_at_most"].as_u64() <= checked["dtw_at_most"].as_u64());
    assert!(std::fs::metadata(&small).unwrap().len() * 15 < bytes.len() as u64);
    let compact_bytes = std::fs::read(&small).unwrap();
    let short = dir.path().join("short2.s4cert");
    std::fs::write(&short, &compact_bytes[..compact_bytes.len() - 1]).unwrap();
    assert!(!shogi4(&["verify-proof", short.to_str().unwrap()]).status.success());
    // A position nobody can prove in a few milliseconds: no certificate, no file.
    let none = dir.path().join("none.s4cert");
    let output = shogi4(&["certify", "trfk/3c/C3/KFRT b - 1", "--out", none.to_str().unwrap(), "--ms", "20"]);
    assert!(!output.status.success());
    assert!(!none.exists());
}
