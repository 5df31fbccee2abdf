//! The engine against what is known: proven facts are taken as exact, a repetition on the
//! path is a draw, and in closed games whose tables are solved here its moves keep the wins
//! the tables prove and its forced results agree with them.

use shogi4_engine::{MaterialIndex, Move, Played, Position};
use shogi4_play::score::{from_outcome, verdict, win_in, Verdict};
use shogi4_play::{Engine, Limits, Oracle};
use shogi4_search::{Cancel, Outcome};
use shogi4_tablebase::{solve, Silent, Table, Tablebase, Value};

/// An oracle that knows one position.
struct Knows(Position, Outcome);

impl Oracle for Knows {
    fn proven(&self, position: &Position) -> Option<Outcome> {
        (*position == self.0).then_some(self.1)
    }
}

fn depth(n: u32) -> Limits {
    Limits { depth: Some(n), ..Limits::default() }
}

fn after(position: &Position, mv: &str) -> Position {
    match position.play(position.parse_move(mv).unwrap()).unwrap() {
        Played::Position(next) => next,
        Played::RoyalCaptured => panic!("{mv} ends the game"),
    }
}

#[test]
fn a_proven_root_gets_its_proven_score() {
    let engine = Engine::new(4);
    let start = Position::start();
    let oracle = Knows(start, Outcome::Proven(Value::Win(41)));
    let analysis = engine.search(&start, &[], &depth(4), &oracle, &Cancel::default(), |_| {});
    assert_eq!(analysis.score(), Some(win_in(41)));
    assert_eq!(analysis.proven, Some(Outcome::Proven(Value::Win(41))));
    // Without the oracle the same search gives an estimate.
    let analysis = engine.search(&start, &[], &depth(4), &(), &Cancel::default(), |_| {});
    assert!(matches!(verdict(analysis.score().unwrap()), Verdict::Centipawns(_)));
    assert_eq!(analysis.proven, None);
}

#[test]
fn a_proven_child_is_an_exact_score_in_the_search() {
    // The oracle proves that after d1c2 the second player loses in 20: the first player wins
    // in 21 by d1c2, which no evaluation can beat.
    let start = Position::start();
    let child = after(&start, "d1c2");
    let oracle = Knows(child, Outcome::Proven(Value::Loss(20)));
    let engine = Engine::new(4);
    let analysis = engine.search(&start, &[], &depth(3), &oracle, &Cancel::default(), |_| {});
    assert_eq!(analysis.best_move().unwrap().to_string(), "d1c2");
    assert_eq!(analysis.score(), Some(win_in(21)));
    // A proven draw there scores exactly 0 in that move's line.
    let oracle = Knows(child, Outcome::Proven(Value::Draw));
    let limits = Limits { depth: Some(3), lines: 8, ..Limits::default() };
    let analysis = engine.search(&start, &[], &limits, &oracle, &Cancel::default(), |_| {});
    let line = analysis.lines.iter().find(|l| l.moves[0].to_string() == "d1c2").unwrap();
    assert_eq!(line.score, 0);
}

#[test]
fn a_repetition_on_the_path_is_a_draw() {
    // The game went P, a1b1, a4b4, b1a1, b4a4 and is back at P: a1b1 now repeats Q.
    let p = Position::parse("k3/4/4/K3 b C 1").unwrap();
    let q = after(&p, "a1b1");
    let r = after(&q, "a4b4");
    let s = after(&r, "b1a1");
    assert_eq!(after(&s, "b4a4"), p);
    let history = [p.key(), q.key(), r.key(), s.key()];
    let engine = Engine::new(4);
    let limits = Limits { depth: Some(4), lines: 16, ..Limits::default() };
    let score_of = |history: &[u128]| {
        engine.clear();
        let analysis = engine.search(&p, history, &limits, &(), &Cancel::default(), |_| {});
        analysis.lines.iter().find(|l| l.moves[0].to_string() == "a1b1").unwrap().score
    };
    assert_ne!(score_of(&[]), 0, "without the history the carp in hand is worth something");
    assert_eq!(score_of(&history), 0);
}

#[test]
fn the_table_oracle_gives_the_table_value() {
    let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
    let index = MaterialIndex::new(table.header().material);
    let tablebase = Tablebase::from_tables([table]);
    let engine = Engine::new(4);
    for slot in (0..index.slots()).step_by(9_973).take(50) {
        let position = index.position_at(slot);
        let truth = tablebase.value(&position).unwrap();
        let analysis = engine.search(&position, &[], &depth(2), &tablebase, &Cancel::default(), |_| {});
        assert_eq!(analysis.score(), from_outcome(Outcome::Proven(truth), 0), "{}", position.to_sfen());
    }
}

/// In closed games solved here, searched without the tables: the engine's move keeps every
/// short proven win, and every forced result it reports is true.
#[test]
fn moves_keep_the_tables_wins_and_forced_results_are_true() {
    let mut kept = 0;
    let mut wins = 0;
    let mut claims = 0;
    let mut wrong = Vec::new();
    for game in ["KKCF", "KKRT", "KKCFR"] {
        let table = Table::new(solve(game.parse().unwrap(), &Silent).table.to_bytes()).unwrap();
        let index = MaterialIndex::new(table.header().material);
        let tablebase = Tablebase::from_tables([table]);
        let engine = Engine::new(8);
        let mut random = 0x2545_F491_4F6C_DD1Du64 ^ index.slots();
        for _ in 0..150 {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            let position = index.position_at(random % index.slots());
            let truth = tablebase.value(&position).unwrap();
            engine.clear();
            let analysis = engine.search(&position, &[], &depth(8), &(), &Cancel::default(), |_| {});
            let Some(mv) = analysis.best_move() else { continue };
            if let Value::Win(n) = truth {
                if n <= 7 {
                    wins += 1;
                    kept += usize::from(keeps_win(&tablebase, &position, mv));
                }
            }
            let claim = verdict(analysis.score().unwrap());
            let true_claim = match claim {
                Verdict::Win(k) => matches!(truth, Value::Win(d) if d <= k),
                Verdict::Loss(k) => matches!(truth, Value::Loss(d) if d >= k),
                Verdict::Centipawns(_) => true,
            };
            claims += usize::from(!matches!(claim, Verdict::Centipawns(_)));
            if !true_claim {
                wrong.push(format!("{}: engine {claim:?}, table {truth}", position.to_sfen()));
            }
        }
    }
    assert!(wins >= 50 && claims >= 50, "too few positions checked: {wins} short wins, {claims} forced results");
    assert_eq!(kept, wins, "short wins kept");
    assert!(wrong.is_empty(), "{} of {claims} forced results contradict the tables: {wrong:#?}", wrong.len());
}

/// Whether `mv` keeps the win: it captures the royal, or leaves the opponent lost.
fn keeps_win(tablebase: &Tablebase<Table<Vec<u8>>>, position: &Position, mv: Move) -> bool {
    match position.play(mv).unwrap() {
        Played::RoyalCaptured => true,
        Played::Position(next) => matches!(tablebase.value(&next), Ok(Value::Loss(_))),
    }
}

#[test]
fn a_position_the_proof_store_proves_gets_its_proven_score() {
    // The store as the server and the CLI hand it to the engine: through the search's Recall.
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = shogi4_proofs::ProofStore::open(&dir.path().join("proofs.redb")).unwrap();
    let start = Position::start();
    let child = after(&start, "c1b2");
    store
        .record(
            &[(child.key(), Outcome::Bounded { win: false, at_least: 30, at_most: 60 })],
            shogi4_proofs::Origin::Search,
        )
        .unwrap();
    let engine = Engine::new(4);
    let oracle = shogi4_play::Recalled(&store);
    let analysis = engine.search(&start, &[], &depth(3), &oracle, &Cancel::default(), |_| {});
    // A loss within 60 for the second player after c1b2: the first player wins within 61.
    assert_eq!(analysis.best_move().unwrap().to_string(), "c1b2");
    assert_eq!(analysis.score(), Some(win_in(61)));
    // The root itself, once stored, is the proven score at the root.
    store.record(&[(start.key(), Outcome::Proven(Value::Win(41)))], shogi4_proofs::Origin::Search).unwrap();
    let analysis = engine.search(&start, &[], &depth(3), &oracle, &Cancel::default(), |_| {});
    assert_eq!((analysis.score(), analysis.proven), (Some(win_in(41)), Some(Outcome::Proven(Value::Win(41)))));
}
