//! The documents name only what the code has: every `--flag` they mention is a flag of
//! `shogi4` (some command of it) or of `shogi4-server`, or one of the few other tools' flags
//! they quote (cargo's, valgrind's); every `shogi4 COMMAND` they show is a command of the binary.
//! A tidy test, as rust-analyzer keeps them: it fails when a document drifts from the code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::CommandFactory;

/// Flags of other tools that the documents quote (cargo's, valgrind's).
const OTHER_TOOLS: [&str; 7] =
    ["--example", "--nocapture", "--release", "--test", "--workspace", "--no-fail-fast", "--tool"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The documents a reader meets: the README, the architecture, every page under docs/, and
/// each folder's README.
fn documents() -> Vec<(PathBuf, String)> {
    let root = repository();
    let mut paths = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for dir in ["docs", "cli", "server", "tables", "play", "answer", "search", "engine", "proofs", "tablebase"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                paths.push(path);
            }
        }
    }
    paths.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect()
}

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_shogi4")).args(args).arg("--help").output().unwrap();
    assert!(output.status.success(), "shogi4 {args:?} --help");
    String::from_utf8(output.stdout).unwrap()
}

/// The binary's commands, from its help.
fn commands() -> Vec<String> {
    let text = help(&[]);
    let listed = text.split("Commands:").nth(1).expect("a list of commands");
    listed
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .filter(|c| c != "help")
        .collect()
}

/// Every `--flag` token in `text`.
fn flags_in(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices("--") {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b == b'-' || b.is_ascii_alphanumeric()) {
            continue;
        }
        let name: String =
            text[at + 2..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-').collect();
        if name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            found.insert(format!("--{}", name.trim_end_matches('-')));
        }
    }
    found
}

#[test]
fn documents_name_only_flags_and_commands_the_code_has() {
    let mut known = BTreeSet::new();
    for command in commands() {
        known.extend(flags_in(&help(&[&command])));
    }
    for sub in ["export", "import"] {
        known.extend(flags_in(&help(&["proofs", sub])));
    }
    known.extend(flags_in(&help(&[])));
    let server = shogi4_server::config::Config::command().render_long_help().to_string();
    known.extend(flags_in(&server));
    known.extend(OTHER_TOOLS.iter().map(|f| f.to_string()));
    assert!(known.contains("--search-table-mb") && known.contains("--lines"), "{known:?}");

    let commands = commands();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, text) in documents() {
        for flag in flags_in(&text) {
            checked += 1;
            if !known.contains(&flag) {
                wrong.push(format!("{}: {flag}", path.display()));
            }
        }
        for prefix in ["`shogi4 ", "release/shogi4 "] {
            for (at, _) in text.match_indices(prefix) {
                let word: String =
                    text[at + prefix.len()..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '-').collect();
                checked += 1;
                if !word.is_empty() && !commands.contains(&word) {
                    wrong.push(format!("{}: shogi4 {word}", path.display()));
                }
            }
        }
    }
    assert!(checked > 150, "only {checked} mentions checked");
    assert!(wrong.is_empty(), "documents name what the code does not have: {wrong:#?}");
}
