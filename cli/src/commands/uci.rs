//! `shogi4 uci`: the engine over the Universal Chess Interface, as Fairy-Stockfish speaks it
//! for its `shogi4` variant, so that match runners and variant front-ends can use it.
//!
//! Positions come as `position startpos` or `position fen FEN` (Fairy-Stockfish's FEN: the
//! carp is `P`, the hand in brackets, `w` the first player; SFEN is read too), followed by
//! `moves` in Fairy-Stockfish's notation (`c1b2`, `P@b2`, `d2d1+`). `go` takes `movetime`,
//! `wtime`/`btime`/`winc`/`binc`/`movestogo`, `depth`, `nodes` and `infinite`, and searches
//! on a thread of its own so that `stop`, `isready` and `quit` are answered at once. Bad input
//! is answered with `info string` and never ends the engine: an unreadable position leaves
//! the one before; moves are played up to the first illegal one.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use shogi4_engine::{Played, Position};
use shogi4_play::score::{verdict, Verdict};
use shogi4_play::{Engine, Limits, Line, Oracle, Progress, Pruning};
use shogi4_search::Cancel;

/// What `uci` announces, and the options it takes.
const DEFAULT_HASH_MB: usize = 64;
const MAX_HASH_MB: usize = 4096;
const MAX_THREADS: usize = 64;
const MAX_LINES: usize = 16;
/// Kept back from the clock for the time a move takes to reach the runner.
const MOVE_OVERHEAD: Duration = Duration::from_millis(30);

/// The game as `position` set it: the root and the keys of the positions before it.
struct Game {
    position: Position,
    history: Vec<u128>,
}

/// A search under way.
struct Running {
    cancel: Cancel,
    thread: JoinHandle<()>,
}

/// Speaks UCI on stdin and stdout until `quit` or the end of input. `oracle` is what the
/// engine takes as proven (the tables, and a proof store if one was named).
pub fn run(oracle: Arc<dyn Oracle + Send>) -> std::io::Result<()> {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let say = |text: &str| write_line(&out, text);
    let mut engine = Arc::new(Engine::new(DEFAULT_HASH_MB));
    let mut hash_mb = DEFAULT_HASH_MB;
    let mut threads = 1;
    let mut lines = 1;
    let mut pruning = Pruning::default();
    let mut game = Game { position: Position::start(), history: Vec::new() };
    let mut running: Option<Running> = None;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, args)) = words.split_first() else { continue };
        match command {
            "uci" => {
                say(&format!("id name Shogi4 {}", env!("CARGO_PKG_VERSION")));
                say("id author the Shogi4 tablebase developers");
                say("option name UCI_Variant type combo default shogi4 var shogi4");
                say(&format!("option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"));
                say(&format!("option name Threads type spin default 1 min 1 max {MAX_THREADS}"));
                say(&format!("option name MultiPV type spin default 1 min 1 max {MAX_LINES}"));
                let mut defaults = Pruning::default();
                for (name, field) in Pruning::SWITCHES {
                    say(&format!("option name {name} type check default {}", field(&mut defaults)));
                }
                say("uciok");
            }
            "isready" => say("readyok"),
            "ucinewgame" => {
                finish(&mut running);
                engine.clear();
            }
            "setoption" => {
                finish(&mut running);
                match set_option(args) {
                    Ok(("hash", value)) => match parse_in(value, 1, MAX_HASH_MB) {
                        // A table the system cannot give would abort the engine mid-game.
                        Ok(mb) if shogi4_tablebase::available_memory().is_some_and(|free| (mb as u64) << 20 > free) => {
                            say(&format!("info string error: Hash: {mb} MiB is more than the memory available"))
                        }
                        Ok(mb) if mb != hash_mb => {
                            hash_mb = mb;
                            engine = Arc::new(Engine::new(mb));
                        }
                        Ok(_) => {}
                        Err(e) => say(&format!("info string error: Hash: {e}")),
                    },
                    Ok(("threads", value)) => match parse_in(value, 1, MAX_THREADS) {
                        Ok(n) => threads = n,
                        Err(e) => say(&format!("info string error: Threads: {e}")),
                    },
                    Ok(("multipv", value)) => match parse_in(value, 1, MAX_LINES) {
                        Ok(n) => lines = n,
                        Err(e) => say(&format!("info string error: MultiPV: {e}")),
                    },
                    Ok(("uci_variant", value)) if value.eq_ignore_ascii_case("shogi4") => {}
                    Ok(("uci_variant", value)) => {
                        say(&format!("info string error: variant {value:?} is not played here; only shogi4"))
                    }
                    Ok((name, value)) => match (switch(name), value) {
                        (Some(field), "true" | "false") => *field(&mut pruning) = value == "true",
                        (Some(_), _) => say(&format!("info string error: {name}: {value:?} is not true or false")),
                        (None, _) => say(&format!("info string error: no option {name:?}")),
                    },
                    Err(e) => say(&format!("info string error: {e}")),
                }
            }
            "position" => {
                finish(&mut running);
                let (read, error) = read_position(args);
                if let Some(read) = read {
                    game = read;
                }
                if let Some(message) = error {
                    say(&format!("info string error: {message}"));
                }
            }
            "go" => {
                finish(&mut running);
                let limits = match go_limits(args, game.position.turn() == shogi4_engine::Color::First) {
                    Ok(limits) => Limits { threads, lines, pruning, ..limits },
                    Err(e) => {
                        say(&format!("info string error: {e}"));
                        continue;
                    }
                };
                let cancel = Cancel::default();
                let (engine, oracle, out, cancel_inside) =
                    (engine.clone(), oracle.clone(), out.clone(), cancel.clone());
                let (root, history) = (game.position, game.history.clone());
                let thread = std::thread::spawn(move || {
                    let say = |text: &str| write_line(&out, text);
                    let analysis = engine.search(&root, &history, &limits, &*oracle, &cancel_inside, |progress| {
                        for text in info_lines(progress) {
                            say(&text);
                        }
                    });
                    match analysis.best_move() {
                        Some(mv) => say(&format!("bestmove {}", mv.to_fairy())),
                        None => say("bestmove (none)"),
                    }
                });
                running = Some(Running { cancel, thread });
            }
            "stop" => finish(&mut running),
            "quit" => {
                finish(&mut running);
                return Ok(());
            }
            other => say(&format!("info string error: unknown command {other:?}")),
        }
    }
    finish(&mut running);
    Ok(())
}

/// Writes one line to the shared output and flushes it: the main loop and the search thread
/// both answer, a line at a time. A runner that has gone away is not an error here.
fn write_line(out: &Mutex<std::io::Stdout>, text: &str) {
    let mut out = out.lock().expect("stdout lock");
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Stops the search under way, if any, and waits for its `bestmove`.
fn finish(running: &mut Option<Running>) {
    if let Some(Running { cancel, thread }) = running.take() {
        cancel.cancel();
        let _ = thread.join();
    }
}

/// `name NAME value VALUE` as (lowercase name, value).
fn set_option<'a>(args: &[&'a str]) -> Result<(&'static str, &'a str), String> {
    let value_at = args.iter().position(|&w| w == "value");
    let name: Vec<&str> = args.iter().skip(1).take(value_at.map_or(args.len(), |v| v - 1)).copied().collect();
    if args.first() != Some(&"name") || name.is_empty() {
        return Err("setoption needs `name NAME value VALUE`".into());
    }
    let value = value_at.and_then(|v| args.get(v + 1)).copied().unwrap_or("");
    let name = name.join(" ").to_ascii_lowercase();
    let known = ["hash", "threads", "multipv", "uci_variant"];
    if let Some(&k) = known.iter().find(|&&k| k == name) {
        return Ok((k, value));
    }
    match Pruning::SWITCHES.iter().find(|(k, _)| k.eq_ignore_ascii_case(&name)) {
        Some(&(k, _)) => Ok((k, value)),
        None => Err(format!("no option {name:?}")),
    }
}

/// The field of the pruning switch named `name` (as [`Pruning::SWITCHES`] spells it).
fn switch(name: &str) -> Option<fn(&mut Pruning) -> &mut bool> {
    Pruning::SWITCHES.iter().find(|(k, _)| *k == name).map(|&(_, field)| field)
}

fn parse_in(value: &str, low: usize, high: usize) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if (low..=high).contains(&n) => Ok(n),
        _ => Err(format!("{value:?} is not a number from {low} to {high}")),
    }
}

/// Reads `startpos|fen FEN… [moves M…]`: the game as far as it could be read (none if its
/// start could not be; the moves before an illegal one), and what could not be read.
fn read_position(args: &[&str]) -> (Option<Game>, Option<String>) {
    let moves_at = args.iter().position(|&w| w == "moves").unwrap_or(args.len());
    let start = match args.first() {
        Some(&"startpos") if moves_at == 1 => Position::start(),
        Some(&"fen") if moves_at > 1 => {
            let text = args[1..moves_at].join(" ");
            match Position::parse(&text) {
                Ok(position) => position,
                Err(e) => return (None, Some(format!("position {text:?}: {e}"))),
            }
        }
        _ => return (None, Some("position needs `startpos` or `fen FEN`, then optionally `moves …`".into())),
    };
    let mut game = Game { position: start, history: Vec::new() };
    for &text in args.iter().skip(moves_at + 1) {
        let mv = match game.position.parse_move(text) {
            Ok(mv) => mv,
            Err(e) => return (Some(game), Some(format!("{e}; the position is the one before it"))),
        };
        match game.position.play(mv) {
            Ok(Played::Position(next)) => {
                game.history.push(game.position.key());
                game.position = next;
            }
            Ok(Played::RoyalCaptured) => {
                return (Some(game), Some(format!("move {text} captures the royal: the game is over")));
            }
            Err(e) => return (Some(game), Some(e.to_string())),
        }
    }
    (Some(game), None)
}

/// The limits a `go` command asks for; `first` says whether the first player (`w`) moves.
fn go_limits(args: &[&str], first: bool) -> Result<Limits, String> {
    let mut limits = Limits::default();
    let (mut own_time, mut own_increment, mut moves_to_go) = (None, 0u64, None);
    let mut words = args.iter();
    while let Some(&word) = words.next() {
        let mut number = || -> Result<u64, String> {
            let text = words.next().ok_or(format!("go {word} needs a number"))?;
            text.parse::<u64>().map_err(|_| format!("go {word}: {text:?} is not a number"))
        };
        match word {
            "movetime" => limits.time = Some(Duration::from_millis(number()?).saturating_sub(MOVE_OVERHEAD)),
            "depth" => limits.depth = Some(number()?.clamp(1, 100) as u32),
            "nodes" => limits.nodes = Some(number()?.max(1)),
            "wtime" | "btime" => {
                let n = number()?;
                if (word == "wtime") == first {
                    own_time = Some(n);
                }
            }
            "winc" | "binc" => {
                let n = number()?;
                if (word == "winc") == first {
                    own_increment = n;
                }
            }
            "movestogo" => moves_to_go = Some(number()?.max(1)),
            "infinite" | "ponder" => {}
            other => return Err(format!("go: unknown word {other:?}")),
        }
    }
    if let Some(time) = own_time {
        // A share of what is left, most of the increment, never more than half the clock.
        let share = time / moves_to_go.unwrap_or(20).min(20) + own_increment * 3 / 4;
        let budget = Duration::from_millis(share.min(time / 2)).saturating_sub(MOVE_OVERHEAD);
        limits.time = Some(limits.time.map_or(budget, |t| t.min(budget)).max(Duration::from_millis(5)));
    }
    Ok(limits)
}

/// The `info` lines of one completed iteration, one per line searched.
fn info_lines(progress: &Progress<'_>) -> Vec<String> {
    let ms = progress.elapsed.as_millis().max(1);
    let nps = u128::from(progress.nodes) * 1000 / ms;
    progress
        .lines
        .iter()
        .enumerate()
        .map(|(index, Line { score, moves })| {
            let score = match verdict(*score) {
                Verdict::Win(plies) => format!("mate {}", plies.div_ceil(2)),
                Verdict::Loss(plies) => format!("mate -{}", plies / 2),
                Verdict::Centipawns(cp) => format!("cp {cp}"),
            };
            let pv: Vec<String> = moves.iter().map(|m| m.to_fairy()).collect();
            format!(
                "info depth {} seldepth {} multipv {} score {score} nodes {} nps {nps} time {ms} pv {}",
                progress.depth,
                progress.seldepth,
                index + 1,
                progress.nodes,
                pv.join(" ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_read_up_to_the_first_bad_move() {
        let (game, error) = read_position(&["startpos", "moves", "c1b2", "b4c3"]);
        assert_eq!((game.unwrap().history.len(), error), (2, None));
        let (partial, message) = read_position(&["startpos", "moves", "c1b2", "zz", "b4c3"]);
        assert_eq!(partial.unwrap().history.len(), 1);
        assert!(message.unwrap().contains("zz"));
        let fen = ["fen", "t2k/2fp/PR2/KF1T[r]", "b", "-", "-", "0", "3"];
        assert_eq!(read_position(&fen).0.unwrap().position.to_fen(), "t2k/2fp/PR2/KF1T[r] b - - 0 1");
        let (none, error) = read_position(&["fen", "nonsense"]);
        assert!(none.is_none() && error.is_some());
    }

    #[test]
    fn clocks_give_a_share_of_the_movers_time() {
        let limits = go_limits(&["wtime", "10000", "btime", "500", "winc", "100"], true).unwrap();
        assert_eq!(limits.time, Some(Duration::from_millis(10000 / 20 + 75) - MOVE_OVERHEAD));
        let limits = go_limits(&["wtime", "10000", "btime", "500"], false).unwrap();
        assert_eq!(limits.time, Some(Duration::from_millis(5)));
        assert!(go_limits(&["depth", "x"], true).is_err());
    }
}
