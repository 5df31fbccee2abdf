//! The engine as its users drive it: `shogi4 uci` spoken to by a match runner, bad input
//! included, and `shogi4 analyse`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Sends `script` to `shogi4 uci` line by line, waiting after each `go` for its `bestmove`,
/// then `quit`; returns every line it printed and its exit status.
fn uci(script: &[&str]) -> (Vec<String>, bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi4"))
        .args(["uci", "--tables", "/nonexistent"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    let mut read_until = |lines: &mut Vec<String>, word: &str| loop {
        let mut line = String::new();
        assert!(output.read_line(&mut line).unwrap() > 0, "the engine ended before {word:?}: {lines:#?}");
        let line = line.trim().to_string();
        let done = line.starts_with(word);
        lines.push(line);
        if done {
            return;
        }
    };
    for &command in script {
        writeln!(input, "{command}").unwrap();
        input.flush().unwrap();
        match command.split_whitespace().next() {
            Some("go") => read_until(&mut lines, "bestmove"),
            Some("isready") => read_until(&mut lines, "readyok"),
            Some("uci") => read_until(&mut lines, "uciok"),
            _ => {}
        }
    }
    writeln!(input, "quit").unwrap();
    drop(input);
    for _ in 0..100 {
        if let Some(status) = child.try_wait().unwrap() {
            let mut rest = String::new();
            while output.read_line(&mut rest).unwrap_or(0) > 0 {}
            lines.extend(rest.lines().map(str::to_string));
            return (lines, status.success());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    panic!("the engine did not quit: {lines:#?}");
}

fn bestmove(lines: &[String], nth: usize) -> String {
    lines.iter().filter_map(|l| l.strip_prefix("bestmove ")).nth(nth).unwrap().to_string()
}

#[test]
fn uci_plays_fairy_stockfish_notation_and_survives_bad_input() {
    let (lines, quit_cleanly) = uci(&[
        "uci",
        "setoption name UCI_Variant value shogi4",
        "isready",
        // A royal to be taken at once: in Fairy-Stockfish's FEN, with the carp as P.
        "position fen k3/1K2/4/4[P] w - - 0 1",
        "go depth 3",
        "position fen nonsense",
        "position startpos moves c1b2 zz9 b4c3",
        "setoption name Hash value 0",
        "setoption name Nonsense value 1",
        // Pruning switches are named in any case; a value other than true or false is refused.
        "setoption name movecountpruning value true",
        "setoption name Futility value maybe",
        "bogus",
        "isready",
        // The position before the bad move stood: the second player moves after c1b2.
        "go nodes 2000",
        "position startpos moves c1b2 c4c3 b2c3",
        "go movetime 100",
    ]);
    assert!(quit_cleanly, "{lines:#?}");
    assert!(lines.contains(&"uciok".to_string()) && lines.contains(&"readyok".to_string()));
    assert!(lines.iter().any(|l| l == "option name UCI_Variant type combo default shogi4 var shogi4"));
    for (name, _) in shogi4_play::Pruning::SWITCHES {
        assert!(lines.iter().any(|l| l.starts_with(&format!("option name {name} type check default "))), "{name}");
    }
    assert_eq!(bestmove(&lines, 0), "b3a4");
    assert!(lines.iter().any(|l| l.starts_with("info depth 1 ") && l.contains("score mate 1")), "{lines:#?}");
    let errors: Vec<&String> = lines.iter().filter(|l| l.starts_with("info string error:")).collect();
    assert_eq!(errors.len(), 6, "{errors:#?}");
    assert!(errors.iter().any(|e| e.contains("Futility: \"maybe\"")), "{errors:#?}");
    assert!(errors[0].contains("nonsense") && errors[1].contains("zz9"), "{errors:#?}");
    // Each best move is legal where it was asked: after c1b2 (the move before the bad one),
    // then after c1b2 c4c3 b2c3.
    let after = |moves: &[&str]| {
        let mut position = shogi4_engine::Position::start();
        for text in moves {
            position = position.play_unchecked(position.parse_move(text).unwrap());
        }
        position
    };
    let second = bestmove(&lines, 1);
    assert!(after(&["c1b2"]).parse_move(&second).is_ok(), "{second}");
    let third = bestmove(&lines, 2);
    assert!(after(&["c1b2", "c4c3", "b2c3"]).parse_move(&third).is_ok(), "{third}");
}

#[test]
fn analyse_prints_an_estimate_or_a_proof() {
    let output = Command::new(env!("CARGO_BIN_EXE_shogi4"))
        .args(["analyse", "trfk/3c/C3/KFRT_b_-_1", "--depth", "6", "--ms", "0", "--lines", "3", "--json"])
        .args(["--tables", "/nonexistent"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["depth"], 6);
    assert_eq!(report["lines"].as_array().unwrap().len(), 3);
    assert!(report["proven"].is_null());
    let first = &report["lines"][0];
    assert!(first["score_cp"].is_i64() && first["pv"][0].is_string(), "{report}");
    let output = Command::new(env!("CARGO_BIN_EXE_shogi4"))
        .args(["analyse", "k3/1K2/4/4_b_C_1", "--depth", "3", "--tables", "/nonexistent"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("win in 1") && text.contains("best b3a4"), "{text}");
}

/// A certificate in the tables directory is exact to the engine: the position after 1. a2a3,
/// which `a2a3.s4cert` proves a win for the second player to move, is scored as a proven win,
/// and the text says within what range; without the certificate it is an estimate.
#[test]
fn analyse_takes_a_certificates_value_as_proven() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("certificates")).unwrap();
    let published = concat!(env!("CARGO_MANIFEST_DIR"), "/../tables/certificates/a2a3.s4cert");
    std::fs::copy(published, dir.path().join("certificates/a2a3.s4cert")).unwrap();
    let analyse = |tables: &std::path::Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_shogi4"))
            .args(["analyse", "trfk/C2c/4/KFRT_w_-_1", "--depth", "4", "--ms", "0", "--tables"])
            .arg(tables)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let proven = analyse(dir.path());
    let last = proven.lines().last().unwrap();
    assert!(last.contains("the score is proven (table, certificate or proof store): win"), "{proven}");
    assert!(proven.contains("line 1: win in "), "{proven}");
    let alone = analyse(std::path::Path::new("/nonexistent"));
    assert!(alone.lines().last().unwrap().ends_with("an estimate"), "{alone}");
}
