//! Solved values: win, loss or draw for the side to move, with the exact distance to win,
//! and their one-byte encoding in tables.

use std::cmp::Ordering;
use std::fmt;

/// The solved value of a position for the side to move.
///
/// Distances count plies until the royal is captured under perfect play: the winner makes
/// it as short as possible, the loser as long as possible. Win distances are odd (the
/// winner makes the last move), loss distances even. `Win(1)`: the royal can be captured
/// now; `Loss(0)`: no legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The side to move captures the royal in this many plies.
    Win(u32),
    /// The side to move has its royal captured in this many plies.
    Loss(u32),
    /// Neither side can force a royal capture.
    Draw,
}

/// Byte code for "distance too large for a byte: look it up in the overflow table".
pub const OVERFLOW_CODE: u8 = 255;
/// Largest distance stored directly in the byte.
pub const MAX_INLINE_DTW: u32 = 253;

impl Value {
    /// The value, for the player who moves into a position worth `self` to its side to move.
    #[inline]
    pub fn for_mover(self) -> Value {
        match self {
            Value::Win(n) => Value::Loss(n + 1),
            Value::Loss(n) => Value::Win(n + 1),
            Value::Draw => Value::Draw,
        }
    }

    /// Distance to the royal capture in plies, `None` for a draw.
    pub fn dtw(self) -> Option<u32> {
        match self {
            Value::Win(n) | Value::Loss(n) => Some(n),
            Value::Draw => None,
        }
    }

    /// `"win"`, `"loss"` or `"draw"`.
    pub fn category(self) -> &'static str {
        match self {
            Value::Win(_) => "win",
            Value::Loss(_) => "loss",
            Value::Draw => "draw",
        }
    }

    /// The value of a distance: odd distances are wins, even ones losses.
    #[inline]
    pub fn from_dtw(dtw: u32) -> Value {
        if dtw % 2 == 1 {
            Value::Win(dtw)
        } else {
            Value::Loss(dtw)
        }
    }

    /// The table byte: 0 for a draw, `dtw + 1` up to [`MAX_INLINE_DTW`], else [`OVERFLOW_CODE`].
    /// Because win distances are odd, wins have even codes and losses odd ones.
    #[inline]
    pub fn encode(self) -> u8 {
        match self.dtw() {
            None => 0,
            Some(n) if n <= MAX_INLINE_DTW => (n + 1) as u8,
            Some(_) => OVERFLOW_CODE,
        }
    }

    /// Decodes a byte other than [`OVERFLOW_CODE`].
    #[inline]
    pub fn decode_inline(code: u8) -> Value {
        debug_assert_ne!(code, OVERFLOW_CODE);
        if code == 0 {
            Value::Draw
        } else {
            Value::from_dtw(u32::from(code) - 1)
        }
    }
}

impl Ord for Value {
    /// Better for the side to move is greater: quick wins, then slow wins, draws, slow
    /// losses, quick losses.
    fn cmp(&self, other: &Value) -> Ordering {
        fn key(v: &Value) -> (u8, i64) {
            match *v {
                Value::Win(n) => (2, -i64::from(n)),
                Value::Draw => (1, 0),
                Value::Loss(n) => (0, i64::from(n)),
            }
        }
        key(self).cmp(&key(other))
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(n) => write!(f, "win in {n}"),
            Value::Loss(n) => write!(f, "loss in {n}"),
            Value::Draw => write!(f, "draw"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_orders() {
        for v in [Value::Draw, Value::Win(1), Value::Loss(0), Value::Win(253), Value::Loss(252)] {
            assert_eq!(Value::decode_inline(v.encode()), v);
        }
        assert_eq!(Value::Win(255).encode(), OVERFLOW_CODE);
        assert!(Value::Win(1) > Value::Win(3));
        assert!(Value::Win(99) > Value::Draw);
        assert!(Value::Draw > Value::Loss(40));
        assert!(Value::Loss(40) > Value::Loss(2));
        assert_eq!(Value::Loss(0).for_mover(), Value::Win(1));
    }
}
