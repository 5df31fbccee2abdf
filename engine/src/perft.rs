//! Perft: leaf counts of the move tree, the standard check of a move generator.
//!
//! A move that captures a royal ends the game: its leaf counts once at any deeper depth.

use crate::Position;

/// Number of leaves `depth` plies below `position` (a royal capture is a leaf at any depth).
///
/// ```
/// use shogi4_engine::{perft, Position};
/// assert_eq!(perft(&Position::start(), 3), 626);
/// ```
pub fn perft(position: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = position.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|&mv| if position.captures_royal(mv) { 1 } else { perft(&position.play_unchecked(mv), depth - 1) })
        .sum()
}
