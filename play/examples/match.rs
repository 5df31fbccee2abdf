//! A match between two UCI engines (two builds of `shogi4 uci`, the same build with other
//! options, or another engine that speaks Fairy-Stockfish's `shogi4` UCI), refereed by the
//! rules of `shogi4-engine`, with its result as Elo and a 95% interval.
//!
//! `cargo run --release -p shogi4-play --example match -- 'CMD A' 'CMD B' [PAIRS] [LIMIT] [JOBS] [LEVEL]`
//!
//! `LIMIT` is what each move gets: `200ms` (`go movetime`) or `20000n` (`go nodes`); default
//! `100ms`. Openings are the lines of four plies from the start after which neither royal is
//! attacked, a different one for each pair; with `LEVEL` (centipawns), only those that this
//! crate's engine scores within ±`LEVEL` for the side to move after 100,000 nodes, so that
//! fewer pairs are decided by the opening alone. Each is
//! played twice with the colours swapped (a pair), so neither side profits from an opening
//! that favours one colour. A game ends at a royal capture, when the side to move has no legal
//! move, at a position's third occurrence (a draw) or after 200 plies (a draw). A command is
//! run by `sh -c`; `setoption` lines for one side go after a `;;` in its command, e.g.
//! `'target/release/shogi4 uci;;setoption name Hash value 16'`. `scripts/match.sh` builds
//! the two sides and runs this.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use shogi4_engine::{Played, Position};
use shogi4_play::{Engine as Searcher, Limits};
use shogi4_search::Cancel;

/// The longest game.
const MAX_PLIES: usize = 200;

/// One engine process.
struct Engine {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Engine {
    fn start(spec: &str) -> Engine {
        let mut parts = spec.split(";;");
        let command = parts.next().expect("a command");
        let mut child = Command::new("sh")
            .args(["-c", command])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let input = child.stdin.take().expect("piped");
        let output = BufReader::new(child.stdout.take().expect("piped"));
        let mut engine = Engine { child, input, output };
        engine.send("uci");
        engine.wait_for("uciok");
        engine.send("setoption name UCI_Variant value shogi4");
        for option in parts {
            engine.send(option.trim());
        }
        engine.send("isready");
        engine.wait_for("readyok");
        engine
    }

    fn send(&mut self, line: &str) {
        writeln!(self.input, "{line}").and_then(|_| self.input.flush()).expect("the engine reads its input");
    }

    /// Reads lines until one starts with `word`; returns it.
    fn wait_for(&mut self, word: &str) -> String {
        let mut line = String::new();
        loop {
            line.clear();
            if self.output.read_line(&mut line).expect("the engine's output") == 0 {
                panic!("the engine ended before {word:?}");
            }
            if line.starts_with(word) {
                return line.trim().to_string();
            }
        }
    }

    fn best_move(&mut self, moves: &[String], go: &str) -> String {
        self.send(&format!("position startpos moves {}", moves.join(" ")));
        self.send(go);
        let line = self.wait_for("bestmove");
        line.split_whitespace().nth(1).unwrap_or("(none)").to_string()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "quit");
        let _ = self.child.wait();
    }
}

/// Plays one game from `opening`; returns the first engine's score (1, ½ or 0) and the plies.
fn play(first: &mut Engine, second: &mut Engine, opening: &[String], go: &str) -> (f64, usize) {
    let mut position = Position::start();
    let mut moves: Vec<String> = Vec::new();
    let mut seen: Vec<u128> = vec![position.key()];
    for text in opening {
        let mv = position.parse_move(text).expect("an opening of legal moves");
        let Ok(Played::Position(next)) = position.play(mv) else { panic!("an opening that does not end the game") };
        position = next;
        moves.push(text.clone());
        seen.push(position.key());
    }
    first.send("ucinewgame");
    second.send("ucinewgame");
    loop {
        if moves.len() >= MAX_PLIES || seen.iter().filter(|&&k| k == position.key()).count() >= 3 {
            return (0.5, moves.len());
        }
        let first_to_move = moves.len().is_multiple_of(2);
        if position.legal_moves().is_empty() {
            return (if first_to_move { 0.0 } else { 1.0 }, moves.len());
        }
        let engine = if first_to_move { &mut *first } else { &mut *second };
        let text = engine.best_move(&moves, go);
        let Ok(mv) = position.parse_move(&text) else {
            eprintln!("illegal move {text:?} after {}: forfeit", moves.join(" "));
            return (if first_to_move { 0.0 } else { 1.0 }, moves.len());
        };
        moves.push(text);
        match position.play(mv).expect("a legal move") {
            Played::RoyalCaptured => return (if first_to_move { 1.0 } else { 0.0 }, moves.len()),
            Played::Position(next) => {
                position = next;
                seen.push(position.key());
            }
        }
    }
}

/// Plies of an opening.
const OPENING_PLIES: usize = 4;

/// Every line of [`OPENING_PLIES`] plies from the start after which neither royal is attacked,
/// as move lists, in a fixed order that spreads the first moves out (consecutive openings
/// differ early); pair `i` plays opening `i`, so no two pairs of a match repeat one.
fn openings() -> Vec<Vec<String>> {
    let mut lines = vec![(Position::start(), Vec::new())];
    for _ in 0..OPENING_PLIES {
        let mut next = Vec::new();
        for (position, moves) in &lines {
            for mv in position.legal_moves().iter() {
                // Openings that leave a royal to be taken at once decide nothing about the engines.
                if let Ok(Played::Position(after)) = position.play(*mv) {
                    if !after.can_capture_royal() && !after.threatens_royal() {
                        let mut moves: Vec<String> = moves.clone();
                        moves.push(mv.to_fairy());
                        next.push((after, moves));
                    }
                }
            }
        }
        lines = next;
    }
    // A stride prime to the count walks every opening once, far apart in move order.
    let count = lines.len();
    let stride = (count / 7..).find(|s| gcd(*s, count) == 1).unwrap_or(1);
    (0..count).map(|i| lines[(i * stride) % count].1.clone()).collect()
}

/// Whether `searcher` scores the position after `line` within ±`level` centipawns (a mate
/// score never is). One searcher scores every opening, its table cleared for each.
fn is_level(searcher: &Searcher, line: &[String], level: i32) -> bool {
    let mut position = Position::start();
    for text in line {
        let mv = position.parse_move(text).expect("an opening of legal moves");
        let Ok(Played::Position(next)) = position.play(mv) else { return false };
        position = next;
    }
    let limits = Limits { nodes: Some(100_000), ..Limits::default() };
    searcher.clear();
    let analysis = searcher.search(&position, &[], &limits, &(), &Cancel::default(), |_| {});
    analysis.score().is_some_and(|score| score.abs() <= level)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Elo from a score share.
fn elo(share: f64) -> f64 {
    let share = share.clamp(1e-6, 1.0 - 1e-6);
    -400.0 * (1.0 / share - 1.0).log10()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b, ..] = &args[..] else {
        eprintln!("usage: match 'CMD A' 'CMD B' [PAIRS] [LIMIT] [JOBS] [LEVEL]");
        std::process::exit(2);
    };
    let pairs: usize = args.get(2).and_then(|x| x.parse().ok()).unwrap_or(32);
    let limit = args.get(3).map_or("100ms", |s| s.as_str());
    let jobs: usize = args.get(4).and_then(|x| x.parse().ok()).unwrap_or(1).max(1);
    let level: Option<i32> = args.get(5).and_then(|x| x.parse().ok());
    let go = if let Some(ms) = limit.strip_suffix("ms") {
        format!("go movetime {ms}")
    } else if let Some(n) = limit.strip_suffix('n') {
        format!("go nodes {n}")
    } else {
        eprintln!("LIMIT is like 200ms or 20000n");
        std::process::exit(2);
    };
    let mut openings = openings();
    if let Some(level) = level {
        let all = openings.len();
        let searcher = Searcher::new(16);
        openings.retain(|line| is_level(&searcher, line, level));
        eprintln!("{} of {all} openings within ±{level} centipawns", openings.len());
    }
    let results: Vec<(f64, f64, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..jobs)
            .map(|job| {
                let (openings, go) = (&openings, &go);
                scope.spawn(move || {
                    let (mut engine_a, mut engine_b) = (Engine::start(a), Engine::start(b));
                    let mut out = Vec::new();
                    for pair in (job..pairs).step_by(jobs) {
                        let opening = &openings[pair % openings.len()];
                        let (x, plies_x) = play(&mut engine_a, &mut engine_b, opening, go);
                        let (y, plies_y) = play(&mut engine_b, &mut engine_a, opening, go);
                        eprintln!(
                            "pair {pair:3} {}: A {x} as first ({plies_x} plies), {} as second ({plies_y})",
                            opening.join(" "),
                            1.0 - y
                        );
                        out.push((x, 1.0 - y, plies_x + plies_y));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a match thread")).collect()
    });
    // Pairs are the unit: their scores are independent where single games of one opening
    // are not.
    let n = results.len() as f64;
    let pair_scores: Vec<f64> = results.iter().map(|(x, y, _)| (x + y) / 2.0).collect();
    let mean = pair_scores.iter().sum::<f64>() / n;
    let variance = pair_scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let margin = 1.96 * (variance / n).sqrt();
    let (wins, draws): (f64, f64) = results.iter().fold((0.0, 0.0), |(w, d), (x, y, _)| {
        let count = |s: f64| (f64::from(u8::from(s == 1.0)), f64::from(u8::from(s == 0.5)));
        let (wx, dx) = count(*x);
        let (wy, dy) = count(*y);
        (w + wx + wy, d + dx + dy)
    });
    let games = 2.0 * n;
    println!(
        "A vs B: {} games ({} pairs, {limit} a move): A {wins} wins, {draws} draws, {} losses; score {:.1}%; \
         Elo {:+.0} (95%: {:+.0} to {:+.0})",
        games,
        n,
        games - wins - draws,
        100.0 * mean,
        elo(mean),
        elo(mean - margin),
        elo(mean + margin)
    );
}
