//! Test helpers: a deliberately simple reference move generator and a seeded random source.
// The reference is plain array code on purpose: simple to check by eye, unlike the engine.
#![allow(dead_code, clippy::needless_range_loop, clippy::large_enum_variant)]

use shogi4_engine::{ByColor, Color, Hand, Kind, Material, MaterialIndex, Piece, Position, Setup, Square};

/// xorshift64*: a tiny deterministic random source, so failures reproduce.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One square of the reference board: owner (0 first, 1 second), kind letter, promoted.
pub type Cell = Option<(usize, char, bool)>;

/// The reference state: `board[file][rank]`, hands as counts of C, F, R, T.
#[derive(Clone, Debug, PartialEq)]
pub struct RefPosition {
    pub board: [[Cell; 4]; 4],
    pub hands: [[u8; 4]; 2],
    pub side: usize,
}

/// What a reference move leads to.
#[derive(Clone, Debug, PartialEq)]
pub enum RefOutcome {
    Next(RefPosition),
    RoyalCaptured,
}

const LETTERS: [char; 4] = ['C', 'F', 'R', 'T'];

impl RefPosition {
    pub fn from_engine(p: &Position) -> RefPosition {
        let mut board = [[None; 4]; 4];
        for file in 0..4 {
            for rank in 0..4 {
                let sq = Square::new(file as u8, rank as u8).unwrap();
                board[file][rank] = p.piece_at(sq).map(|piece| {
                    (if piece.color == Color::First { 0 } else { 1 }, piece.kind.letter(), piece.promoted)
                });
            }
        }
        let hand = |c| {
            let h = p.hand(c);
            [Kind::Carp, Kind::Fox, Kind::RaccoonDog, Kind::Tapir].map(|k| h.count(k))
        };
        let side = if p.turn() == Color::First { 0 } else { 1 };
        RefPosition { board, hands: [hand(Color::First), hand(Color::Second)], side }
    }

    pub fn to_setup(&self) -> Setup {
        let mut board = [None; 16];
        for file in 0..4 {
            for rank in 0..4 {
                if let Some((owner, letter, promoted)) = self.board[file][rank] {
                    let color = if owner == 0 { Color::First } else { Color::Second };
                    board[rank * 4 + file] = Some(Piece::new(color, Kind::from_letter(letter).unwrap(), promoted));
                }
            }
        }
        let hands = ByColor { first: Hand(self.hands[0]), second: Hand(self.hands[1]) };
        Setup { board, hands, turn: if self.side == 0 { Color::First } else { Color::Second } }
    }

    /// Directions as (file, rank) steps in the owner's frame (forward = +rank for the first player).
    fn directions(letter: char, promoted: bool) -> Vec<(i32, i32)> {
        let silver = vec![(0, 1), (-1, 1), (1, 1), (-1, -1), (1, -1)];
        match (letter, promoted) {
            ('K', _) => vec![(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)],
            ('C', false) => vec![(0, 1)],
            ('T', false) => vec![(0, 1), (-1, 1), (1, 1)],
            ('R', false) => vec![(-1, 1), (1, 1), (-1, -1), (1, -1)],
            ('F', false) => vec![(0, 1), (0, -1), (-1, 0), (1, 0)],
            ('F', true) => vec![(0, 1), (-1, 1), (1, 1), (-1, 0), (1, 0), (0, -1)],
            _ => silver,
        }
    }

    /// Every legal move as notation with the outcome it leads to.
    pub fn moves(&self) -> Vec<(String, RefOutcome)> {
        let me = self.side;
        let far_rank = if me == 0 { 3 } else { 0 };
        let name = |f: usize, r: usize| format!("{}{}", (b'a' + f as u8) as char, r + 1);
        let on_board = |f: i32, r: i32| (0..4).contains(&f) && (0..4).contains(&r);
        let mut out = Vec::new();
        for f in 0..4 {
            for r in 0..4 {
                let Some((owner, letter, promoted)) = self.board[f][r] else { continue };
                if owner != me {
                    continue;
                }
                for (df, dr) in Self::directions(letter, promoted) {
                    let (df, dr) = if me == 0 { (df, dr) } else { (-df, -dr) };
                    let (mut tf, mut tr) = (f as i32 + df, r as i32 + dr);
                    if !on_board(tf, tr) {
                        continue;
                    }
                    if matches!(self.board[tf as usize][tr as usize], Some((o, _, _)) if o == me) {
                        tf += df;
                        tr += dr;
                        if !on_board(tf, tr) {
                            continue;
                        }
                    }
                    let (tf, tr) = (tf as usize, tr as usize);
                    let target = self.board[tf][tr];
                    if matches!(target, Some((o, _, _)) if o == me) {
                        continue;
                    }
                    let promotes = letter != 'K' && !promoted && tr == far_rank;
                    let text = format!("{}{}{}", name(f, r), name(tf, tr), if promotes { "+" } else { "" });
                    if matches!(target, Some((_, 'K', _))) {
                        out.push((text, RefOutcome::RoyalCaptured));
                        continue;
                    }
                    let mut next = self.clone();
                    if let Some((_, captured, _)) = target {
                        let i = LETTERS.iter().position(|&l| l == captured).unwrap();
                        next.hands[me][i] += 1;
                    }
                    next.board[f][r] = None;
                    next.board[tf][tr] = Some((me, letter, promoted || promotes));
                    next.side = 1 - me;
                    out.push((text, RefOutcome::Next(next)));
                }
            }
        }
        for (i, &letter) in LETTERS.iter().enumerate() {
            if self.hands[me][i] == 0 {
                continue;
            }
            for f in 0..4 {
                for r in 0..4 {
                    if self.board[f][r].is_some() || r == far_rank {
                        continue;
                    }
                    let mut next = self.clone();
                    next.hands[me][i] -= 1;
                    next.board[f][r] = Some((me, letter, false));
                    next.side = 1 - me;
                    out.push((format!("{letter}@{}", name(f, r)), RefOutcome::Next(next)));
                }
            }
        }
        out
    }

    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        self.moves()
            .into_iter()
            .map(|(_, outcome)| match outcome {
                RefOutcome::RoyalCaptured => 1,
                RefOutcome::Next(p) => p.perft(depth - 1),
            })
            .sum()
    }
}

/// Positions from random playouts of the start position and of random closed-game positions
/// (so hands, promoted pieces and crowded boards all occur). Deterministic for a seed.
pub fn sample_positions(count: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng::new(seed);
    let materials = Material::all_up_to(8);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut position = if rng.below(4) == 0 {
            Position::start()
        } else {
            let index = MaterialIndex::new(materials[rng.below(materials.len() as u64) as usize]);
            let mut p = index.position_at(rng.below(index.slots()));
            if rng.below(2) == 0 {
                p = p.flipped();
            }
            if rng.below(2) == 0 {
                p = p.mirrored();
            }
            p
        };
        for _ in 0..60 {
            out.push(position);
            let moves = position.legal_moves();
            if moves.is_empty() || out.len() >= count {
                break;
            }
            let mv = moves[rng.below(moves.len() as u64) as usize];
            if position.captures_royal(mv) {
                break;
            }
            position = position.play_unchecked(mv);
        }
    }
    out
}
