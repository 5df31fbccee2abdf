//! Piece kinds, their promoted forms and the directions they move in.

use crate::{Color, Direction};

/// A kind of piece, unpromoted form. Every kind but the royal promotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The royal (Crane / Pheasant): all eight directions, never promotes.
    Royal,
    /// Carp: forward; promotes to Koi (silver).
    Carp,
    /// Fox: forward, back, left, right; promotes to Kitsune (gold).
    Fox,
    /// Raccoon-dog: the four diagonals; promotes to Tanuki (silver).
    RaccoonDog,
    /// Tapir: forward and the two forward diagonals; promotes to Baku (silver).
    Tapir,
}

impl Kind {
    /// The kinds that can be captured, held in hand and dropped, in material order C, F, R, T.
    pub const HAND_KINDS: [Kind; 4] = [Kind::Carp, Kind::Fox, Kind::RaccoonDog, Kind::Tapir];

    /// The uppercase notation letter: `K`, `C`, `F`, `R`, `T`.
    pub const fn letter(self) -> char {
        match self {
            Kind::Royal => 'K',
            Kind::Carp => 'C',
            Kind::Fox => 'F',
            Kind::RaccoonDog => 'R',
            Kind::Tapir => 'T',
        }
    }

    /// The kind for a notation letter, either case.
    pub fn from_letter(letter: char) -> Option<Kind> {
        match letter.to_ascii_uppercase() {
            'K' => Some(Kind::Royal),
            'C' => Some(Kind::Carp),
            'F' => Some(Kind::Fox),
            'R' => Some(Kind::RaccoonDog),
            'T' => Some(Kind::Tapir),
            _ => None,
        }
    }

    /// The kind for a letter of either notation, either case: [`Kind::from_letter`]'s, and
    /// `P` for the carp, as Fairy-Stockfish writes it (it names the carp a pawn).
    pub fn from_notation_letter(letter: char) -> Option<Kind> {
        match letter {
            'P' | 'p' => Some(Kind::Carp),
            _ => Kind::from_letter(letter),
        }
    }

    /// The uppercase letter Fairy-Stockfish writes: [`Kind::letter`], but `P` for the carp.
    pub const fn fairy_letter(self) -> char {
        match self {
            Kind::Carp => 'P',
            kind => kind.letter(),
        }
    }

    /// Position in [`Kind::HAND_KINDS`] (C = 0 … T = 3); `None` for the royal.
    #[inline]
    pub const fn hand_index(self) -> Option<usize> {
        // The discriminants follow HAND_KINDS after the royal: arithmetic, not a jump table.
        match self {
            Kind::Royal => None,
            kind => Some(kind as usize - 1),
        }
    }
}

/// A piece on the board: its owner, kind and whether it is promoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Owner.
    pub color: Color,
    /// Kind (unpromoted form).
    pub kind: Kind,
    /// Promoted (never for the royal).
    pub promoted: bool,
}

// Direction sets as bit masks over `Direction` discriminants, in the first player's frame.
const N: u8 = 1 << Direction::North as u8;
const NE: u8 = 1 << Direction::NorthEast as u8;
const E: u8 = 1 << Direction::East as u8;
const SE: u8 = 1 << Direction::SouthEast as u8;
const S: u8 = 1 << Direction::South as u8;
const SW: u8 = 1 << Direction::SouthWest as u8;
const W: u8 = 1 << Direction::West as u8;
const NW: u8 = 1 << Direction::NorthWest as u8;
const SILVER: u8 = N | NE | NW | SE | SW;
const GOLD: u8 = N | NE | NW | E | W | S;

/// `DIRECTION_MASKS[color][kind][promoted]`: see [`Piece::direction_mask`].
const DIRECTION_MASKS: [[[u8; 2]; 5]; 2] = {
    let kinds = [Kind::Royal, Kind::Carp, Kind::Fox, Kind::RaccoonDog, Kind::Tapir];
    let mut table = [[[0u8; 2]; 5]; 2];
    let mut k = 0;
    while k < 5 {
        let mut promoted = 0;
        while promoted < 2 {
            let forward_frame = match (kinds[k], promoted == 1) {
                (Kind::Royal, _) => 0xFF,
                (Kind::Carp, false) => N,
                (Kind::Tapir, false) => N | NE | NW,
                (Kind::RaccoonDog, false) => NE | SE | SW | NW,
                (Kind::Fox, false) => N | E | S | W,
                (Kind::Fox, true) => GOLD,
                (_, true) => SILVER,
            };
            table[Color::First as usize][kinds[k] as usize][promoted] = forward_frame;
            // The second player's forward is south: turning by 180° shifts every direction by 4.
            table[Color::Second as usize][kinds[k] as usize][promoted] = forward_frame.rotate_left(4);
            promoted += 1;
        }
        k += 1;
    }
    table
};

impl Piece {
    /// A new piece.
    pub const fn new(color: Color, kind: Kind, promoted: bool) -> Piece {
        Piece { color, kind, promoted }
    }

    /// The directions this piece moves in, as a bit mask over [`Direction`] discriminants
    /// in board terms (already turned for the second player).
    #[inline]
    pub const fn direction_mask(self) -> u8 {
        // A lookup: move and un-move generation ask this for every piece they visit.
        DIRECTION_MASKS[self.color as usize][self.kind as usize][self.promoted as usize]
    }

    /// Whether the piece moves in `direction`.
    #[inline]
    pub const fn moves_toward(self, direction: Direction) -> bool {
        self.direction_mask() & (1 << direction as u8) != 0
    }

    /// The notation: uppercase for the first player, lowercase for the second, `+` if promoted.
    pub fn notation(self) -> String {
        let letter = match self.color {
            Color::First => self.kind.letter(),
            Color::Second => self.kind.letter().to_ascii_lowercase(),
        };
        if self.promoted {
            format!("+{letter}")
        } else {
            letter.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_player_directions_are_turned() {
        let carp = Piece::new(Color::Second, Kind::Carp, false);
        assert!(carp.moves_toward(Direction::South));
        assert!(!carp.moves_toward(Direction::North));
        let tapir = Piece::new(Color::Second, Kind::Tapir, false);
        assert_eq!(tapir.direction_mask().count_ones(), 3);
        assert!(tapir.moves_toward(Direction::SouthWest));
    }
}
