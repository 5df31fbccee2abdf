//! The evaluation: how good a position looks to the side to move, in centipawns, where no
//! search has reached a royal capture.
//!
//! A linear model over a few hundred features, each seen from the side to move (its pieces
//! count +1, the opponent's −1 on the same feature seen from the opponent's side): material on
//! the board by kind and promotion, pieces in hand, piece-square terms, pieces next to each
//! royal, whether the side to move's royal is threatened, and what each side's pieces reach:
//! pieces left unguarded where the other side can capture them, squares next to each royal
//! that the other side reaches, mobility, and empty squares next to a royal where the other
//! side could drop a piece. The weights are log-odds that
//! the side to move wins, fitted by logistic regression to proven outcomes
//! (`examples/train_eval.rs`), and [`evaluate`] scales them by
//! [`CENTIPAWNS_PER_LOGIT`]. The model only orders and
//! estimates; nothing it says is claimed as proven.

mod weights;

use shogi4_engine::{Color, Kind, Position, Square};

use crate::score::{CENTIPAWNS_PER_LOGIT, EVAL_LIMIT};

/// Piece states: the royal, the four kinds unpromoted, the four promoted.
const STATES: usize = 9;
/// Where each group of features starts.
const MATERIAL: usize = 0;
const HAND: usize = MATERIAL + STATES;
const PLACEMENT: usize = HAND + 4;
const ROYAL_ATTACKERS: usize = PLACEMENT + STATES * 16;
const ROYAL_GUARDS: usize = ROYAL_ATTACKERS + 1;
const THREATENED: usize = ROYAL_GUARDS + 1;
const TEMPO: usize = THREATENED + 1;
/// Pieces the other side can capture and their own side does not guard, by state (a royal
/// counted so is a threatened one): the side to move's, then the opponent's.
const HANGING: usize = TEMPO + 1;
/// Squares next to a royal that the other side reaches: the side to move's royal, then the
/// opponent's.
const ROYAL_ZONE: usize = HANGING + 2 * STATES;
/// Squares a side's pieces reach that do not hold its own pieces, in eighths: the side to
/// move's, then the opponent's.
const MOBILITY: usize = ROYAL_ZONE + 2;
/// Empty squares next to the other side's royal, where a side holding a piece could drop it:
/// for the side to move, then the opponent.
const DROP_ZONE: usize = MOBILITY + 2;
/// How many features the model has.
pub const FEATURES: usize = DROP_ZONE + 2;

/// A piece's state index: 0 for the royal, 1–4 for C, F, R, T, 5–8 promoted.
#[inline]
fn state(kind: Kind, promoted: bool) -> usize {
    kind as usize + if promoted { 4 } else { 0 }
}

/// A square as its owner sees it: the second player's board turned half a circle.
#[inline]
fn relative(square: Square, owner: Color) -> usize {
    match owner {
        Color::First => square.index(),
        Color::Second => square.rotated().index(),
    }
}

/// Calls `visit(feature, value)` for every feature of `position` that is not zero, from the
/// side to move's point of view. The same features train the model and evaluate with it.
pub fn features(position: &Position, mut visit: impl FnMut(usize, f32)) {
    let us = position.turn();
    let sign = |color: Color| if color == us { 1.0 } else { -1.0 };
    for square in Square::all() {
        let Some(piece) = position.piece_at(square) else { continue };
        let s = state(piece.kind, piece.promoted);
        let value = sign(piece.color);
        visit(MATERIAL + s, value);
        visit(PLACEMENT + s * 16 + relative(square, piece.color), value);
    }
    for color in Color::BOTH {
        let hand = position.hand(color);
        for (index, kind) in Kind::HAND_KINDS.into_iter().enumerate() {
            let n = hand.count(kind);
            if n > 0 {
                visit(HAND + index, sign(color) * f32::from(n));
            }
        }
        // Pieces next to this side's royal: the opponent's attack it, its own guard it.
        let around = position.royal(color).neighbors();
        let attackers = (around & position.occupied_by(!color)).count();
        let guards = (around & position.occupied_by(color)).count();
        if attackers > 0 {
            visit(ROYAL_ATTACKERS, sign(color) * attackers as f32);
        }
        if guards > 0 {
            visit(ROYAL_GUARDS, sign(color) * guards as f32);
        }
    }
    // What each side's pieces reach: the side to move's slot first, the opponent's second.
    // The side to move's royal is threatened where the opponent reaches its square.
    let reach = [position.reach(us), position.reach(!us)];
    if reach[1].contains(position.royal(us)) {
        visit(THREATENED, 1.0);
    }
    visit(TEMPO, 1.0);
    for (side, color) in [us, !us].into_iter().enumerate() {
        let (own, other) = (reach[side], reach[1 - side]);
        let pieces = position.occupied_by(color);
        for square in pieces & other & !own {
            if let Some(piece) = position.piece_at(square) {
                visit(HANGING + side * STATES + state(piece.kind, piece.promoted), 1.0);
            }
        }
        let zone = position.royal(color).neighbors();
        let pressed = (zone & other).count();
        if pressed > 0 {
            visit(ROYAL_ZONE + side, pressed as f32);
        }
        visit(MOBILITY + side, (own & !pieces).count() as f32 / 8.0);
        if !position.hand(color).is_empty() {
            let open = (position.royal(!color).neighbors() & !position.occupied()).count();
            if open > 0 {
                visit(DROP_ZONE + side, open as f32);
            }
        }
    }
}

/// The model's log-odds that the side to move wins, under the given weights.
pub fn log_odds(position: &Position, weights: &[f32]) -> f32 {
    let mut sum = 0.0;
    features(position, |feature, value| sum += weights[feature] * value);
    sum
}

/// The evaluation of `position` for the side to move, in centipawns.
pub fn evaluate(position: &Position) -> i32 {
    let cp = f64::from(log_odds(position, &weights::WEIGHTS)) * CENTIPAWNS_PER_LOGIT;
    (cp.round() as i32).clamp(-EVAL_LIMIT, EVAL_LIMIT)
}

/// The committed weights, one per feature (for training from them, or inspecting them).
pub fn weights() -> &'static [f32; FEATURES] {
    &weights::WEIGHTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_flip_keeps_the_evaluation() {
        // Features are seen from the side to move, so a position and its colour flip (the
        // same game with the players' roles swapped) evaluate the same.
        for sfen in ["trfk/3c/C3/KFRT b - 1", "t2k/2fc/CR2/KF1T w r 1", "k3/1c2/4/K3 b Ff 1"] {
            let position = Position::parse(sfen).unwrap();
            assert_eq!(evaluate(&position), evaluate(&position.flipped()), "{sfen}");
        }
    }

    #[test]
    fn unguarded_pieces_under_attack_are_seen_on_both_sides() {
        let hanging = |sfen: &str| {
            let mut seen = Vec::new();
            features(&Position::parse(sfen).unwrap(), |feature, value| {
                if (HANGING..ROYAL_ZONE).contains(&feature) {
                    seen.push((feature - HANGING, value));
                }
            });
            seen
        };
        let fox = state(Kind::Fox, false);
        let carp = state(Kind::Carp, false);
        // The second player's Carp on c2 attacks the Fox on c1, which nothing guards, and the
        // Fox attacks the Carp, which nothing guards either.
        assert_eq!(hanging("3k/4/2c1/K1F1 b - 1"), vec![(fox, 1.0), (STATES + carp, 1.0)]);
        // With the Royal on b1 beside it, the Fox is guarded.
        assert_eq!(hanging("3k/4/2c1/1KF1 b - 1"), vec![(STATES + carp, 1.0)]);
    }

    #[test]
    fn an_extra_piece_in_hand_is_worth_something() {
        let base = Position::parse("trfk/3c/C3/KFRT b - 1").unwrap();
        let up = Position::parse("trfk/4/C3/KFRT b C 1").unwrap();
        assert!(evaluate(&up) > evaluate(&base) + 50, "{} vs {}", evaluate(&up), evaluate(&base));
    }
}
