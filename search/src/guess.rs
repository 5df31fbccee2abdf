//! A learned guess of who wins a position, read straight off its key: a logistic model over
//! the piece on each square and the pieces in hand, seen from the side to move. It only
//! orders the value search (a child's starting numbers lean toward the side it favours); no
//! answer ever rests on it, so a poor guess costs time, never a wrong claim.
//!
//! **Why**, and the runs that chose the model and its strength: `docs/measurements.md` ("The
//! learned guess").
//!
//! **The model** has one weight per (square, piece as its owner relates to the mover) and per
//! (side, kind, one or two held), and a bias: [`FEATURES`] in all, the board turned so that
//! the mover always plays up the board. It is trained by `proofs/examples/train_guess.rs` on
//! the proven outcomes of `tables/opening.proofs` (the opening prover's store, read by
//! `shogi4_proofs::read_export`), deterministically, and the weights are committed in
//! `guess/weights.rs`:
//!
//! ```text
//! cargo run --release -p shogi4-proofs --example train_guess -- tables/opening.proofs search/src/guess/weights.rs
//! ```
//!
//! The weights' header names the export they came from (the file's hash; the file as of
//! commit `64f8621`, after the tenth prover run). The file grows with each prover run, but new
//! weights change the search, so they are trained again only as a change of their own,
//! measured like any other.

mod weights;

use std::sync::LazyLock;

use shogi4_engine::{Color, Move, Piece, Position, Square};

/// Codes a square can hold as the mover sees it: 0 empty, 1–9 the mover's pieces, 10–18 the
/// opponent's (royal, then C, F, R, T, then the four promoted).
const CODES: usize = 19;
/// Where the hand features start.
const HAND_FEATURES: usize = 16 * CODES;
/// The model's inputs: one per (square, code), one per (side, kind, one or two held), a bias.
pub const FEATURES: usize = HAND_FEATURES + 16 + 1;
/// How far a guess moves the starting numbers: a child its mover is guessed to win with log-odds
/// `s` has the numbers on the mover's winning side divided, on its losing side multiplied, by
/// `2^(STRENGTH · s)` (see `numbers::starting_numbers`). Measured: `docs/measurements.md` ("The learned guess").
pub const STRENGTH: f32 = 0.25;
/// The log-odds are clamped to ± this before they scale anything (chosen by the reach script:
/// `docs/measurements.md`, "Figures once kept in doc comments").
const MOST: f32 = 6.0;

/// A piece's code as the mover sees it: 1–9 its own (royal, C, F, R, T, the four promoted),
/// 10–18 the opponent's.
fn relative_code(piece: Piece, mover: Color) -> usize {
    let rank = match (piece.kind.hand_index(), piece.promoted) {
        (None, _) => 0,
        (Some(i), false) => 1 + i,
        (Some(i), true) => 5 + i,
    };
    if piece.color == mover {
        1 + rank
    } else {
        10 + rank
    }
}

/// The input of `piece` on square `square` (its index), the mover to play.
fn square_feature(square: usize, piece: Piece, mover: Color) -> usize {
    // The second player's board turned, so that the mover always plays up the board.
    let seen = if mover == Color::Second { square ^ 15 } else { square };
    seen * CODES + relative_code(piece, mover)
}

/// The input of `count` (1 or more) pieces of the hand kind `kind` (an index into
/// `Kind::HAND_KINDS`) in `color`'s hand, the mover to play.
fn hand_feature(color: Color, kind: usize, count: u8, mover: Color) -> usize {
    let side = usize::from(color != mover);
    HAND_FEATURES + side * 8 + kind * 2 + usize::from(count.min(2)) - 1
}

/// The inputs that are 1 for the position with this key (the others are 0), in order.
pub fn features(key: u128) -> impl Iterator<Item = usize> {
    let mover = Position::turn_in_key(key);
    let codes = Position::square_codes_in_key(key);
    let squares = (0..16).filter_map(move |square| {
        Position::piece_of_key_code(codes[square]).map(|piece| square_feature(square, piece, mover))
    });
    let hands = Color::BOTH.into_iter().flat_map(move |color| {
        let hand = Position::hand_in_key(key, color).0;
        (0..4).filter(move |&kind| hand[kind] > 0).map(move |kind| hand_feature(color, kind, hand[kind], mover))
    });
    squares.chain(hands).chain([FEATURES - 1])
}

/// The weights in fixed point (units of 1/[`ONE`] of a log-odd), laid out by the key's own
/// fields so that a guess is a few integer lookups, and the leans of the clamped sums: the
/// guess is computed for every child a search starts, so it must cost little beside the
/// child's move count (an `f32` sum over the features and an `exp2` took 11% of the search's
/// time, these lookups 5–6%). A child's sum is taken from its parent's ([`ChildGuesses`]),
/// brought up to date on the squares its move names. Finding those squares by comparing the
/// two keys field by field had cost more than the sixteen lookups (the same searches in 5–7%
/// more time); read off the move, they cost less.
struct Lookup {
    /// `squares[mover][square][code]`, the code as the key holds it (0, empty: weight 0).
    squares: [[[i32; 32]; 16]; 2],
    /// `hands[mover][color][kind][count]` (none held: weight 0).
    hands: [[[[i32; 4]; 4]; 2]; 2],
    bias: i32,
    /// `2^(STRENGTH · s)` for each step of `1/LEAN_STEP` in `-MOST..=MOST`.
    leans: Vec<f32>,
}

/// Fixed-point units per log-odd.
const ONE: f32 = 256.0;
/// Lean steps per log-odd.
const LEAN_STEP: i32 = 16;

static LOOKUP: LazyLock<Lookup> = LazyLock::new(|| {
    let fixed = |feature: usize| (weights::WEIGHTS[feature] * ONE).round() as i32;
    let mut squares = [[[0; 32]; 16]; 2];
    let mut hands = [[[[0; 4]; 4]; 2]; 2];
    for mover in Color::BOTH {
        for (square, codes) in squares[mover.index()].iter_mut().enumerate() {
            for (code, weight) in codes.iter_mut().enumerate() {
                if let Some(piece) = Position::piece_of_key_code(code as u8) {
                    *weight = fixed(square_feature(square, piece, mover));
                }
            }
        }
        for color in Color::BOTH {
            for (kind, counts) in hands[mover.index()][color.index()].iter_mut().enumerate() {
                for (count, weight) in counts.iter_mut().enumerate().skip(1) {
                    *weight = fixed(hand_feature(color, kind, count as u8, mover));
                }
            }
        }
    }
    let most = (MOST * LEAN_STEP as f32) as i32;
    let leans = (-most..=most).map(|step| (step as f32 / LEAN_STEP as f32 * STRENGTH).exp2()).collect();
    Lookup { squares, hands, bias: fixed(FEATURES - 1), leans }
});

/// The fixed-point sum of the model for the position with this key.
#[inline(always)]
fn fixed_log_odds(key: u128) -> i32 {
    let lookup = &*LOOKUP;
    let mover = Position::turn_in_key(key).index();
    board_sum(lookup, &Position::square_codes_in_key(key), mover) + hands_and_bias(lookup, key, mover)
}

/// The board's part of the sum, for `mover`, from the key's square codes.
#[inline(always)]
fn board_sum(lookup: &Lookup, codes: &[u8; 16], mover: usize) -> i32 {
    lookup.squares[mover].iter().zip(codes).map(|(weights, &code)| weights[usize::from(code)]).sum()
}

/// The hands' part of the sum and the bias, for `mover`, from the key.
#[inline(always)]
fn hands_and_bias(lookup: &Lookup, key: u128, mover: usize) -> i32 {
    let mut sum = lookup.bias;
    for (weights, color) in lookup.hands[mover].iter().zip(Color::BOTH) {
        for (weights, count) in weights.iter().zip(Position::hand_in_key(key, color).0) {
            sum += weights[usize::from(count)];
        }
    }
    sum
}

/// The guesses of one position's children, each the sum [`fixed_log_odds`] gives: the board's
/// part for the children's mover summed once, over the parent's squares, and for each child
/// brought up to date on the one or two squares its move changes; the hands' part summed again
/// only where the move drops or captures. This takes the twenty-four lookups per child down to
/// four for most children.
///
/// Exact, not an estimate: the sums are integers, added in another order.
pub(crate) struct ChildGuesses {
    lookup: &'static Lookup,
    mover: usize,
    codes: [u8; 16],
    board: i32,
    /// The hands' part and the bias: a child's too unless its move drops or captures.
    hands: i32,
}

impl ChildGuesses {
    /// For the children of the position with `key`.
    #[inline(always)]
    pub(crate) fn new(key: u128) -> ChildGuesses {
        let lookup = &*LOOKUP;
        let mover = (!Position::turn_in_key(key)).index();
        let codes = Position::square_codes_in_key(key);
        let hands = hands_and_bias(lookup, key, mover);
        ChildGuesses { lookup, mover, board: board_sum(lookup, &codes, mover), codes, hands }
    }

    /// [`lean`] of the child that `mv` leads to, whose key is `key`.
    #[inline(always)]
    pub(crate) fn lean(&self, mv: Move, key: u128) -> f32 {
        let squares = &self.lookup.squares[self.mover];
        let weight = |square: Square, code: u8| squares[square.index()][usize::from(code)];
        let mut board = self.board;
        if let Move::Board { from, .. } = mv {
            // Left empty, whose weight is 0.
            board -= weight(from, self.codes[from.index()]);
        }
        let to = mv.to();
        let replaced = self.codes[to.index()];
        board += weight(to, Position::square_code_in_key(key, to)) - weight(to, replaced);
        let hands =
            if mv.is_drop() || replaced != 0 { hands_and_bias(self.lookup, key, self.mover) } else { self.hands };
        lean_of(self.lookup, board + hands)
    }
}

/// The model's log-odds that the side to move of the position with this key wins (to within
/// the fixed point's rounding).
pub fn log_odds(key: u128) -> f32 {
    fixed_log_odds(key) as f32 / ONE
}

/// `2^(STRENGTH · s)` for the clamped log-odds `s` that the mover of this key wins, to the
/// nearest `1/LEAN_STEP`: above 1 where it looks like winning. The searches take it from
/// [`ChildGuesses::lean`], which gives the same for a parent's children at less cost.
#[cfg(test)]
pub(crate) fn lean(key: u128) -> f32 {
    lean_of(&LOOKUP, fixed_log_odds(key))
}

/// The lean of a fixed-point sum.
#[inline(always)]
fn lean_of(lookup: &Lookup, sum: i32) -> f32 {
    let leans = &lookup.leans;
    let most = (leans.len() / 2) as i32;
    let step = (sum * LEAN_STEP + ONE as i32 / 2).div_euclid(ONE as i32);
    leans[(step.clamp(-most, most) + most) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lookup by fields and the sum over [`features`] are one model.
    #[test]
    fn the_lookup_adds_up_the_features_weights() {
        for sfen in ["t1fk/2rc/CF2/K1RT b - 1", "k3/4/1K2/4 b C 1", "k3/4/1K2/4 w Cc 1", "4/K3/C2F/T+rk1 b - 1"] {
            let key = Position::parse(sfen).unwrap().key();
            let summed: f32 = features(key).map(|f| weights::WEIGHTS[f]).sum();
            assert!((summed - log_odds(key)).abs() < 0.05, "{sfen}: {summed} against {}", log_odds(key));
        }
    }

    /// The lean is `2^(STRENGTH · s)` of the clamped log-odds, to within a step.
    #[test]
    fn the_lean_follows_the_log_odds() {
        for sfen in ["t1fk/2rc/CF2/K1RT b - 1", "k3/4/1K2/4 b C 1", "k3/4/1K2/4 w Cc 1", "4/K3/C2F/T+rk1 b - 1"] {
            let key = Position::parse(sfen).unwrap().key();
            let expected = (log_odds(key).clamp(-MOST, MOST) * STRENGTH).exp2();
            assert!((lean(key) / expected - 1.0).abs() < 0.02, "{sfen}: {} against {expected}", lean(key));
        }
    }

    /// A child's guess brought up to date from its parent's is the guess of its own key, for
    /// every kind of move (steps, captures, promotions, drops) along random games.
    #[test]
    fn a_childs_guess_from_its_parents_is_its_own() {
        let mut position = Position::start();
        let mut seed = 7u64;
        let mut compared = 0;
        for _ in 0..2_000 {
            let guesses = ChildGuesses::new(position.key());
            let moves: Vec<Move> =
                position.legal_moves().iter().copied().filter(|&mv| !position.captures_royal(mv)).collect();
            for &mv in &moves {
                let key = position.play_unchecked(mv).key();
                assert_eq!(guesses.lean(mv, key), lean(key), "{position}: {mv}");
                compared += 1;
            }
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            position = if moves.is_empty() {
                Position::start()
            } else {
                position.play_unchecked(moves[(seed >> 33) as usize % moves.len()])
            };
        }
        assert!(compared > 10_000);
    }

    /// Seen from the mover, a position and its colour-flipped image are the same.
    #[test]
    fn the_guess_is_the_movers() {
        for sfen in ["t1fk/2rc/CF2/K1RT b - 1", "k3/4/1K2/4 b Ct 1", "4/K3/C2F/T+rk1 w F 1"] {
            let position = Position::parse(sfen).unwrap();
            let mut own: Vec<usize> = features(position.key()).collect();
            let mut flipped: Vec<usize> = features(position.flipped().key()).collect();
            own.sort_unstable();
            flipped.sort_unstable();
            assert_eq!(own, flipped, "{sfen}");
        }
    }
}
