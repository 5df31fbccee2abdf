//! Moves and their notation: `a2a3` (step), `b1b3` (jump), `a3a4+` (promotes), `C@b2` (drop).

use std::fmt;
use std::fmt::Write as _;

use crate::{Kind, Square};

/// A move. Promotion is compulsory, so `promotes` is implied by the position; it is kept
/// in the move so that a move can be written without the position at hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// A piece steps or jumps from `from` to `to`, capturing whatever enemy piece stands there.
    Board {
        /// Where the piece stands.
        from: Square,
        /// Where it lands.
        to: Square,
        /// Whether this move promotes it (it ends on its owner's far rank unpromoted).
        promotes: bool,
    },
    /// A piece of `kind` leaves the hand for the empty square `to`.
    Drop {
        /// The kind dropped (never the royal).
        kind: Kind,
        /// The empty square it is dropped on.
        to: Square,
    },
}

impl Move {
    /// The destination square.
    pub const fn to(self) -> Square {
        match self {
            Move::Board { to, .. } | Move::Drop { to, .. } => to,
        }
    }

    /// Whether the move puts a piece from the hand on the board.
    pub const fn is_drop(self) -> bool {
        matches!(self, Move::Drop { .. })
    }

    /// Whether the move promotes the moving piece.
    pub const fn promotes(self) -> bool {
        matches!(self, Move::Board { promotes: true, .. })
    }

    /// Whether the move is a jump over a friendly piece (it covers two squares).
    pub fn is_jump(self) -> bool {
        match self {
            Move::Board { from, to, .. } => {
                from.file().abs_diff(to.file()) == 2 || from.rank().abs_diff(to.rank()) == 2
            }
            Move::Drop { .. } => false,
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Move::Board { from, to, promotes } => {
                fmt::Display::fmt(&from, f)?;
                fmt::Display::fmt(&to, f)?;
                if promotes {
                    f.write_char('+')?;
                }
                Ok(())
            }
            Move::Drop { kind, to } => {
                f.write_char(kind.letter())?;
                f.write_char('@')?;
                fmt::Display::fmt(&to, f)
            }
        }
    }
}

impl Move {
    /// The move as Fairy-Stockfish writes it (UCI for its `shogi4` variant): the same as
    /// [`Move`]'s `Display`, but a carp drop is `P@b2`.
    pub fn to_fairy(self) -> String {
        match self {
            Move::Drop { kind, to } => format!("{}@{to}", kind.fairy_letter()),
            board => board.to_string(),
        }
    }
}

/// Why a move string could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseMoveError {
    /// Not of the form `a2a3`, `a3a4+`, `C@b2` or `C*b2`.
    Syntax(String),
    /// Well formed, but not a legal move in the position.
    Illegal(String),
}

impl fmt::Display for ParseMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseMoveError::Syntax(text) => {
                write!(f, "cannot read move {text:?}: expected a board move like a2a3 or a3a4+, or a drop like C@b2")
            }
            ParseMoveError::Illegal(text) => write!(f, "move {text:?} is not legal in this position"),
        }
    }
}

impl std::error::Error for ParseMoveError {}

/// A move that is not legal in the position it was played in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllegalMove(pub Move);

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "move {} is not legal in this position", self.0)
    }
}

impl std::error::Error for IllegalMove {}

/// A move as written, before it is checked against a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MoveText {
    Board { from: Square, to: Square },
    Drop { kind: Kind, to: Square },
}

impl MoveText {
    /// Reads the notation; a trailing `+` is accepted and ignored (promotion is compulsory).
    pub(crate) fn parse(text: &str) -> Result<MoveText, ParseMoveError> {
        let error = || ParseMoveError::Syntax(text.to_string());
        let body = text.strip_suffix('+').unwrap_or(text);
        if let Some((letter, square)) = body.split_once(['@', '*']) {
            let mut chars = letter.chars();
            let kind = match (chars.next(), chars.next()) {
                (Some(c), None) => Kind::from_notation_letter(c).filter(|&k| k != Kind::Royal),
                _ => None,
            };
            let to = Square::parse(square);
            return match (kind, to, body.len() == text.len()) {
                (Some(kind), Some(to), true) => Ok(MoveText::Drop { kind, to }),
                _ => Err(error()),
            };
        }
        if body.len() != 4 || !body.is_ascii() {
            return Err(error());
        }
        match (Square::parse(&body[..2]), Square::parse(&body[2..])) {
            (Some(from), Some(to)) => Ok(MoveText::Board { from, to }),
            _ => Err(error()),
        }
    }

    /// Whether `mv` is the move this text names.
    pub(crate) fn names(self, mv: Move) -> bool {
        match (self, mv) {
            (MoveText::Board { from, to }, Move::Board { from: f, to: t, .. }) => from == f && to == t,
            (MoveText::Drop { kind, to }, Move::Drop { kind: k, to: t }) => kind == k && to == t,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_form() {
        let sq = |s| Square::parse(s).unwrap();
        assert_eq!(MoveText::parse("a2a3"), Ok(MoveText::Board { from: sq("a2"), to: sq("a3") }));
        assert_eq!(MoveText::parse("a3a4+"), Ok(MoveText::Board { from: sq("a3"), to: sq("a4") }));
        assert_eq!(MoveText::parse("C@b2"), Ok(MoveText::Drop { kind: Kind::Carp, to: sq("b2") }));
        assert_eq!(MoveText::parse("r*b2"), Ok(MoveText::Drop { kind: Kind::RaccoonDog, to: sq("b2") }));
        for bad in ["", "a2", "a2a5", "K@b2", "C@b2+", "CC@b2", "é2a3", "a2a3++"] {
            assert!(MoveText::parse(bad).is_err(), "{bad}");
        }
    }
}
