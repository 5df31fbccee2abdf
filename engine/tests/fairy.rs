//! Fairy-Stockfish's notation for its `shogi4` variant, as UCI front-ends and match runners
//! send it: its FEN (the carp is `P`, the hands in brackets, `w` the first player, castling and
//! en-passant fields and counters after) and its moves (`c1b2`, `P@b2`, `d2d1+`). Read,
//! replayed and written back.

use shogi4_engine::{Color, Kind, Move, Played, Position, Square};

fn square(name: &str) -> Square {
    Square::parse(name).unwrap()
}

#[test]
fn fairy_stockfish_fens_are_read_and_written_back() {
    // As that engine writes them (the issue that asked for this quotes both).
    let start = Position::parse("trfk/3p/P3/KFRT[-] w 0 1").unwrap();
    assert_eq!(start, Position::start());
    assert_eq!(start.to_fen(), "trfk/3p/P3/KFRT[] w - - 0 1");
    let position = Position::parse("t2k/2fp/PR2/KF1T[r] b - - 0 3").unwrap();
    assert_eq!(position.turn(), Color::Second);
    assert_eq!(position.hand(Color::Second).count(Kind::RaccoonDog), 1);
    let carp = position.piece_at(square("a2")).unwrap();
    assert_eq!((carp.color, carp.kind), (Color::First, Kind::Carp));
    let carp = position.piece_at(square("d3")).unwrap();
    assert_eq!((carp.color, carp.kind), (Color::Second, Kind::Carp));
    // Written back in the same notation (the counters are not kept), and read back the same.
    assert_eq!(position.to_fen(), "t2k/2fp/PR2/KF1T[r] b - - 0 1");
    assert_eq!(Position::parse(&position.to_fen()).unwrap(), position);
    assert_eq!(position.to_sfen(), "t2k/2fc/CR2/KF1T w r 1");
}

#[test]
fn fairy_stockfish_moves_are_replayed() {
    // A game in that engine's moves: board moves, captures, drops of every kind, the carp's
    // written `P@`, and a forced promotion written with its `+`.
    let moves = [
        "c1b2", "b4c3", "b2c3", "c4c3", "R@c1", "R@b2", "b1b2", "d3d2", "c1d2", "c3b3", "P@b1", "b3b2", "a1b2", "F@b3",
        "b1b3", "a4b3", "b2b3", "P@d3", "d1d3", "d4d3", "F@b2", "d3d2", "b2b4+",
    ];
    let mut position = Position::start();
    for text in moves {
        let mv = position.parse_move(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(mv.to_fairy(), text, "written back as read");
        position = match position.play(mv).unwrap() {
            Played::Position(next) => next,
            Played::RoyalCaptured => panic!("{text} ended the game"),
        };
        assert_eq!(Position::parse(&position.to_fen()).unwrap(), position);
    }
    assert_eq!(position.to_fen(), "1+F2/1K2/P2k/4[PFRTrt] b - - 0 1");
    let fox = position.piece_at(square("b4")).unwrap();
    assert_eq!((fox.color, fox.kind, fox.promoted), (Color::First, Kind::Fox, true));
}

#[test]
fn every_move_survives_the_fairy_notation() {
    for sfen in ["trfk/3c/C3/KFRT b - 1", "t2k/2fc/CR2/KF1T w r 1", "k3/1+C2/4/K3 b CFrt 1", "4/t1k+R/4/1K2 b - 1"] {
        let position = Position::parse(sfen).unwrap();
        for &mv in position.legal_moves().iter() {
            let text = mv.to_fairy();
            assert_eq!(position.parse_move(&text), Ok(mv), "{sfen}: {text}");
            if let Move::Drop { kind: Kind::Carp, .. } = mv {
                assert!(text.starts_with("P@"), "{text}");
            }
        }
    }
}

/// The published self-play games of Fairy-Stockfish itself: every move is read, is legal here,
/// is written back as that engine wrote it, every position between survives the FEN both ways,
/// and each game ends where the record ends, by a Royal capture of the side the result names.
#[test]
fn fairy_stockfish_self_play_games_are_replayed_to_their_recorded_end() {
    let games = include_str!("data/fairy_selfplay.txt");
    let mut played = 0;
    for (number, line) in games.lines().filter(|l| !l.starts_with('#')).enumerate() {
        let mut fields = line.split_whitespace();
        let winner = match fields.next() {
            Some("1-0") => Color::First,
            Some("0-1") => Color::Second,
            other => panic!("game {number}: result {other:?}"),
        };
        let plies: usize = fields.next().unwrap().parse().unwrap();
        let moves: Vec<&str> = fields.collect();
        assert_eq!(moves.len(), plies, "game {number}");
        let mut position = Position::start();
        for (ply, text) in moves.iter().enumerate() {
            let mv = position.parse_move(text).unwrap_or_else(|e| panic!("game {number} ply {ply} {text}: {e}"));
            assert_eq!(mv.to_fairy(), *text, "game {number} ply {ply}");
            let mover = position.turn();
            match position.play(mv).unwrap() {
                Played::Position(next) => {
                    assert!(ply + 1 < plies, "game {number}: no Royal captured by its last move {text}");
                    assert_eq!(Position::parse(&next.to_fen()).unwrap(), next, "game {number} ply {ply}");
                    position = next;
                }
                Played::RoyalCaptured => {
                    assert_eq!(ply + 1, plies, "game {number}: a Royal captured at ply {ply}, before the record ends");
                    assert_eq!(mover, winner, "game {number}");
                }
            }
            played += 1;
        }
    }
    assert_eq!(played, 483, "every move of the sixteen games");
}
