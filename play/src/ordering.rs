//! Move ordering: which move a node tries first. The table's move, then captures (the most
//! valuable victim first, by the least valuable attacker), promotions, the two killer moves of
//! the ply, and the quiet moves by their history score. A good order is what makes alpha-beta
//! cut; it never changes what a full-width search would find.

use arrayvec::ArrayVec;
use shogi4_engine::{Color, Kind, Move, Position, MAX_MOVES};

/// A node's moves, on the stack.
pub type MoveBuffer = ArrayVec<Move, MAX_MOVES>;
/// Their order scores.
pub type ScoreBuffer = ArrayVec<i32, MAX_MOVES>;

/// Distinct [`encode`] values, 0 (no move) included.
pub const ENCODED_MOVES: usize = 321;

/// A move as 9 bits, unique within a position and stable across positions: 1–256 for board
/// moves (origin and destination), 257–320 for drops (kind and destination). 0 is no move.
#[inline]
pub fn encode(mv: Move) -> u16 {
    match mv {
        Move::Board { from, to, .. } => 1 + ((from.index() as u16) << 4 | to.index() as u16),
        Move::Drop { kind, to } => {
            257 + ((kind.hand_index().expect("never a royal drop") as u16) << 4 | to.index() as u16)
        }
    }
}

/// A rough value per kind for ordering captures (royal, C, F, R, T).
const VICTIM: [i32; 5] = [1_000, 10, 30, 25, 25];

/// The per-thread memory that orders quiet moves: killers by ply, history by side and move.
pub struct Ordering {
    killers: Vec<[u16; 2]>,
    history: [[i32; ENCODED_MOVES]; 2],
}

/// The most plies a search line can run to (the search stops extending beyond it).
pub const MAX_PLY: usize = 128;

impl Default for Ordering {
    fn default() -> Self {
        Ordering { killers: vec![[0; 2]; MAX_PLY + 1], history: [[0; ENCODED_MOVES]; 2] }
    }
}

impl Ordering {
    /// Scores every move of `moves` for the order at `ply`, `table_move` first.
    pub fn score(&self, position: &Position, moves: &[Move], table_move: u16, ply: usize) -> ScoreBuffer {
        let mut out = ScoreBuffer::new();
        let us = position.turn();
        for &mv in moves {
            let code = encode(mv);
            let score = if code == table_move {
                1 << 30
            } else if let Some(victim) = captured(position, mv) {
                let attacker = match mv {
                    Move::Board { from, .. } => position.piece_at(from).map_or(0, |p| VICTIM[p.kind as usize]),
                    Move::Drop { .. } => 0,
                };
                (1 << 28) + VICTIM[victim as usize] * 64 - attacker
            } else if mv.promotes() {
                1 << 27
            } else if self.killers[ply][0] == code {
                (1 << 26) + 1
            } else if self.killers[ply][1] == code {
                1 << 26
            } else {
                self.history[us.index()][code as usize]
            };
            out.push(score);
        }
        out
    }

    /// Records that the quiet move `mv` cut off at `ply` with `depth` left; the quiet moves
    /// tried before it in `tried` are marked down.
    pub fn reward(&mut self, us: Color, mv: Move, depth: i32, ply: usize, tried: &[Move]) {
        let code = encode(mv);
        let killers = &mut self.killers[ply];
        if killers[0] != code {
            killers[1] = killers[0];
            killers[0] = code;
        }
        let bonus = (depth * depth).min(400);
        let history = &mut self.history[us.index()];
        gravity(&mut history[code as usize], bonus);
        for &other in tried {
            gravity(&mut history[encode(other) as usize], -bonus);
        }
    }
}

/// Moves a history score toward ±16384 by `bonus`, more slowly the nearer it is.
fn gravity(entry: &mut i32, bonus: i32) {
    *entry += bonus * 32 - *entry * bonus.abs() / 512;
    *entry = (*entry).clamp(-(1 << 20), 1 << 20);
}

/// The kind `mv` captures, if any.
#[inline]
pub fn captured(position: &Position, mv: Move) -> Option<Kind> {
    match mv {
        Move::Board { to, .. } => position.piece_at(to).map(|p| p.kind),
        Move::Drop { .. } => None,
    }
}

/// Sorts `moves` by `scores`, highest first (stable, so equal scores keep generation order).
pub fn sort(moves: &mut [Move], scores: &mut [i32]) {
    // Insertion sort: lists are short and mostly a few moves matter.
    for i in 1..moves.len() {
        let (mv, score) = (moves[i], scores[i]);
        let mut j = i;
        while j > 0 && scores[j - 1] < score {
            moves[j] = moves[j - 1];
            scores[j] = scores[j - 1];
            j -= 1;
        }
        moves[j] = mv;
        scores[j] = score;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_distinct_within_a_position() {
        let position = Position::parse("t2k/2fc/CR2/KF1T w r 1").unwrap();
        let moves = position.legal_moves();
        let mut codes: Vec<u16> = moves.iter().map(|&m| encode(m)).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), moves.len());
        assert!(codes.iter().all(|&c| c > 0 && (c as usize) < ENCODED_MOVES));
    }
}
