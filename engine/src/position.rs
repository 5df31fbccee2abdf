//! Positions: an unchecked [`Setup`] and a [`Position`] that is legal by construction.

use std::fmt;

use crate::moves::IllegalMove;
use crate::moves::MoveText;
use crate::{Bitboard, ByColor, Color, Hand, Kind, Material, Move, ParseMoveError, Piece, Square};

/// A position as read or built, not yet checked. Convert with `Position::try_from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    /// The board, indexed by [`Square::index`].
    pub board: [Option<Piece>; 16],
    /// Each player's hand.
    pub hands: ByColor<Hand>,
    /// The player to move.
    pub turn: Color,
}

/// Why a [`Setup`] is not a legal Shogi4 position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionError {
    /// A player has no royal on the board.
    MissingRoyal(Color),
    /// A player has more than one royal.
    TwoRoyals(Color, Square, Square),
    /// A royal is marked promoted; the royal never promotes.
    PromotedRoyal(Square),
    /// More than two pieces of one kind in the game (board and hands together): the kind, the
    /// count, and whether the count is only a lower bound (a hand's count in the notation ran
    /// past what a parsed hand records, see `sfen::HELD_CAP`).
    TooManyPieces(Kind, u32, bool),
    /// An unpromoted piece stands on its owner's far rank, where it would have promoted.
    UnpromotedOnFarRank(Square),
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let player = |c: &Color| match c {
            Color::First => "the first player",
            Color::Second => "the second player",
        };
        match self {
            PositionError::MissingRoyal(c) => write!(f, "{} has no royal (K) on the board", player(c)),
            PositionError::TwoRoyals(c, a, b) => {
                write!(f, "{} has two royals, on {a} and {b}; each player has exactly one", player(c))
            }
            PositionError::PromotedRoyal(s) => write!(f, "the royal on {s} is promoted; the royal never promotes"),
            PositionError::TooManyPieces(k, n, at_least) => write!(
                f,
                "{}{n} pieces of kind {} in the game (board and hands); a closed game has at most 2 of each kind",
                if *at_least { "at least " } else { "" },
                k.letter()
            ),
            PositionError::UnpromotedOnFarRank(s) => {
                write!(f, "the unpromoted piece on {s} stands on its owner's far rank, where promotion is compulsory")
            }
        }
    }
}

impl std::error::Error for PositionError {}

/// A legal Shogi4 position: board, hands and side to move. Every `Position` value satisfies the
/// rules' invariants (one royal each, at most two of each kind, no unpromoted piece on its
/// owner's far rank), because the only ways to build one check them or preserve them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) board: [Option<Piece>; 16],
    /// Each square's piece's [`Piece::direction_mask`] (0 for an empty square), kept beside
    /// the board: move generation reads it for every piece it visits, and one byte costs less
    /// than decoding the piece. Written only with the board ([`Position::put`],
    /// [`Position::assemble`]).
    pub(crate) masks: [u8; 16],
    pub(crate) occupied: ByColor<Bitboard>,
    pub(crate) royals: ByColor<Square>,
    pub(crate) hands: ByColor<Hand>,
    pub(crate) turn: Color,
}

/// What a move led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Played {
    /// The game goes on in this position.
    Position(Position),
    /// The move captured the opponent's royal: the mover has won.
    RoyalCaptured,
}

/// `KEY_CODES[color][kind][promoted]`: a piece's 5-bit code in [`Position::key`], 1–18 (0 is
/// an empty square): 1 + 9 × colour + 0 for the royal, 1–4 for C, F, R, T, 5–8 promoted.
const KEY_CODES: [[[u64; 2]; 5]; 2] = {
    let mut table = [[[0u64; 2]; 5]; 2];
    let mut color = 0;
    while color < 2 {
        let mut kind = 0;
        while kind < 5 {
            table[color][kind][0] = 1 + 9 * color as u64 + kind as u64;
            table[color][kind][1] = 1 + 9 * color as u64 + if kind == 0 { 0 } else { 4 + kind as u64 };
            kind += 1;
        }
        color += 1;
    }
    table
};

/// Where the two halves of the board start in [`Position::key`]: squares 0–7 fill bits 57–96,
/// squares 8–15 bits 17–56 (40 bits each), the hands and the side to move bits 0–16.
const KEY_HALF_SHIFTS: [u32; 2] = [57, 17];

/// Where each square's code starts in [`Position::key`]: in its half, the lower square in the
/// higher bits. A table, since the child's key is brought up to date with these for every
/// child a search generates.
const KEY_SHIFTS: [u32; 16] = {
    let mut table = [0; 16];
    let mut i = 0;
    while i < 16 {
        table[i] = KEY_HALF_SHIFTS[i >> 3] + 5 * (7 - (i as u32 & 7));
        i += 1;
    }
    table
};

/// The five bits of each square's code in [`Position::key`] (a shift of a `u128` by a
/// variable amount takes several instructions; a load, one).
const KEY_FIELDS: [u128; 16] = {
    let mut table = [0; 16];
    let mut i = 0;
    while i < 16 {
        table[i] = 0b11111 << KEY_SHIFTS[i];
        i += 1;
    }
    table
};

/// Where a square's code starts in [`Position::key`].
#[inline]
const fn key_shift(square: Square) -> u32 {
    KEY_SHIFTS[square.index()]
}

/// The five bits of a square's code in [`Position::key`].
#[inline]
const fn key_field(square: Square) -> u128 {
    KEY_FIELDS[square.index()]
}

/// Where a hand count starts in [`Position::key`]: two bits each, the first player's four
/// counts first, above the side to move in bit 0.
#[inline]
const fn hand_shift(color: Color, hand_index: usize) -> u32 {
    1 + 2 * (7 - (color as u32 * 4 + hand_index as u32))
}

impl Position {
    /// A position from its fields, with the direction masks read off the board.
    pub(crate) fn assemble(
        board: [Option<Piece>; 16],
        occupied: ByColor<Bitboard>,
        royals: ByColor<Square>,
        hands: ByColor<Hand>,
        turn: Color,
    ) -> Position {
        let masks = board.map(|piece| piece.map_or(0, Piece::direction_mask));
        Position { board, masks, occupied, royals, hands, turn }
    }

    /// Whether the direction masks are the board's (tests check every way a position is made).
    #[cfg(test)]
    pub(crate) fn masks_agree(&self) -> bool {
        *self == Position::assemble(self.board, self.occupied, self.royals, self.hands, self.turn)
    }

    /// Sets what stands on `square`, its direction mask with it.
    #[inline(always)]
    pub(crate) fn put(&mut self, square: Square, piece: Option<Piece>) {
        self.board[square.index()] = piece;
        self.masks[square.index()] = piece.map_or(0, Piece::direction_mask);
    }

    /// The start position, `trfk/3c/C3/KFRT b - 1`.
    pub fn start() -> Position {
        Position::parse("trfk/3c/C3/KFRT b - 1").expect("the start position is legal")
    }

    /// The piece on `square`.
    #[inline]
    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        self.board[square.index()]
    }

    /// The player to move.
    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// A player's hand.
    #[inline]
    pub fn hand(&self, color: Color) -> Hand {
        self.hands[color]
    }

    /// The square of a player's royal.
    #[inline]
    pub fn royal(&self, color: Color) -> Square {
        self.royals[color]
    }

    /// The squares a player's pieces stand on.
    #[inline]
    pub fn occupied_by(&self, color: Color) -> Bitboard {
        self.occupied[color]
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.occupied.first | self.occupied.second
    }

    /// The closed game this position belongs to: its non-royal pieces, wherever they are.
    pub fn material(&self) -> Material {
        let mut counts = [0u8; 4];
        for piece in self.board.iter().flatten() {
            if let Some(i) = piece.kind.hand_index() {
                counts[i] += 1;
            }
        }
        for color in Color::BOTH {
            for (count, held) in counts.iter_mut().zip(self.hands[color].0) {
                *count += held;
            }
        }
        Material::from_counts(counts).expect("a legal position has at most two pieces of a kind")
    }

    /// An exact, compact key: board (5 bits a square), hands (2 bits a count) and side to
    /// move packed into 97 bits. Distinct positions have distinct keys, so a table keyed by it
    /// never confuses two positions (as a hash could).
    pub fn key(&self) -> u128 {
        // Two halves of 40 bits (squares 0–7 and 8–15, the lower square in the higher bits) in
        // 64-bit registers: shifting a u128 takes several instructions, and this runs for every
        // position the search generates. Only occupied squares are visited, each code looked
        // up: testing every square for a piece mispredicted a branch on most of them.
        let mut halves = [0u64; 2];
        for square in self.occupied() {
            let i = square.index();
            let piece = self.board[i].expect("occupied squares hold pieces");
            let code = KEY_CODES[piece.color as usize][piece.kind as usize][usize::from(piece.promoted)];
            halves[i >> 3] |= code << (5 * (7 - (i & 7)));
        }
        let [first, second] = halves;
        let mut rest = 0u64;
        for color in Color::BOTH {
            for count in self.hands[color].0 {
                rest = rest << 2 | u64::from(count);
            }
        }
        rest = rest << 1 | self.turn as u64;
        u128::from(first) << KEY_HALF_SHIFTS[0] | u128::from(second) << KEY_HALF_SHIFTS[1] | u128::from(rest)
    }

    /// The bits of a [`Position::key`] that hold the two hands: keys equal outside them are
    /// the same board with the same side to move.
    pub const KEY_HANDS: u128 = 0xFFFF << 1;

    /// The hand of `color` as `key` (a [`Position::key`]) holds it.
    #[inline]
    pub fn hand_in_key(key: u128, color: Color) -> Hand {
        Hand(std::array::from_fn(|i| (key >> hand_shift(color, i)) as u8 & 3))
    }

    /// Each square's 5-bit code as `key` (a [`Position::key`]) holds it, square 0 first: 0
    /// for an empty square, and equal codes for equal pieces ([`Position::piece_of_key_code`]
    /// reads one). For readers that index tables by the key's own fields.
    #[inline]
    pub fn square_codes_in_key(key: u128) -> [u8; 16] {
        // The two 40-bit halves as 64-bit words: shifting a u128 costs more.
        let halves = KEY_HALF_SHIFTS.map(|shift| (key >> shift) as u64);
        std::array::from_fn(|i| ((halves[i >> 3] >> (5 * (7 - (i & 7)))) & 31) as u8)
    }

    /// The 5-bit code of `square` as `key` holds it: one of [`Position::square_codes_in_key`].
    #[inline]
    pub fn square_code_in_key(key: u128, square: Square) -> u8 {
        ((key >> key_shift(square)) & 31) as u8
    }

    /// The piece a square code of [`Position::square_codes_in_key`] stands for; `None` for an
    /// empty square (0) and for codes no piece has.
    pub fn piece_of_key_code(code: u8) -> Option<Piece> {
        const KINDS: [Kind; 5] = [Kind::Royal, Kind::Carp, Kind::Fox, Kind::RaccoonDog, Kind::Tapir];
        Color::BOTH.into_iter().find_map(|color| {
            KINDS.into_iter().find_map(|kind| {
                [false, true]
                    .into_iter()
                    .find(|&promoted| {
                        KEY_CODES[color as usize][kind as usize][usize::from(promoted)] == u64::from(code)
                    })
                    .map(|promoted| Piece::new(color, kind, promoted))
            })
        })
    }

    /// The position a [`Position::key`] describes (keys are exact), or `None` for a number
    /// that is no legal position's key.
    ///
    /// ```
    /// use shogi4_engine::Position;
    /// let start = Position::start();
    /// assert_eq!(Position::from_key(start.key()), Some(start));
    /// ```
    pub fn from_key(key: u128) -> Option<Position> {
        let codes = Position::square_codes_in_key(key);
        let mut board = [None; 16];
        for (square, &code) in board.iter_mut().zip(codes.iter()) {
            if code != 0 {
                *square = Some(Position::piece_of_key_code(code)?);
            }
        }
        let hands = ByColor {
            first: Position::hand_in_key(key, Color::First),
            second: Position::hand_in_key(key, Color::Second),
        };
        let position = Position::try_from(Setup { board, hands, turn: Position::turn_in_key(key) }).ok()?;
        (position.key() == key).then_some(position)
    }

    /// The side to move as `key` (a [`Position::key`]) holds it.
    #[inline]
    pub fn turn_in_key(key: u128) -> Color {
        if key & 1 == 0 {
            Color::First
        } else {
            Color::Second
        }
    }

    /// The [`Position::key`] of `self.play_unchecked(mv)`, from this position's `key`: only
    /// the fields the move changes are rewritten (one or two squares, one hand count, the side
    /// to move), which costs a few shifts where building the key visits every piece.
    ///
    /// Always inlined, as is [`Position::play_unchecked`]: the proof search calls both for every
    /// child it generates, and left to the compiler they stayed calls that cost it about 4% of
    /// its time (the same searches; `search/src/lib.rs` has the measurements).
    #[inline(always)]
    pub fn key_after(&self, key: u128, mv: Move) -> u128 {
        let us = self.turn;
        let mut key = key ^ 1;
        match mv {
            Move::Board { from, to, promotes } => {
                let piece = self.board[from.index()].expect("a board move starts on a piece");
                key &= !key_field(from);
                let cleared = key & !key_field(to);
                let code = KEY_CODES[us as usize][piece.kind as usize][usize::from(piece.promoted | promotes)];
                key = cleared | u128::from(code) << key_shift(to);
                if let Some(captured) = self.board[to.index()] {
                    let hand = captured.kind.hand_index().expect("play_unchecked never captures the royal");
                    key += 1 << hand_shift(us, hand);
                }
            }
            Move::Drop { kind, to } => {
                let code = KEY_CODES[us as usize][kind as usize][0];
                key |= u128::from(code) << key_shift(to);
                let hand = kind.hand_index().expect("only non-royal kinds are dropped");
                key -= 1 << hand_shift(us, hand);
            }
        }
        key
    }

    /// The unchecked form of this position.
    pub fn to_setup(&self) -> Setup {
        Setup { board: self.board, hands: self.hands, turn: self.turn }
    }

    /// Whether `mv` captures the opponent's royal.
    #[inline]
    pub fn captures_royal(&self, mv: Move) -> bool {
        matches!(mv, Move::Board { to, .. } if to == self.royals[!self.turn])
    }

    /// Whether `mv` captures a piece.
    #[inline]
    pub fn is_capture(&self, mv: Move) -> bool {
        matches!(mv, Move::Board { to, .. } if self.board[to.index()].is_some())
    }

    /// Plays a legal move. The result is either the new position or the end of the game.
    pub fn play(&self, mv: Move) -> Result<Played, IllegalMove> {
        if !self.legal_moves().contains(&mv) {
            return Err(IllegalMove(mv));
        }
        Ok(if self.captures_royal(mv) { Played::RoyalCaptured } else { Played::Position(self.play_unchecked(mv)) })
    }

    /// Finds the legal move written as `text` (`a2a3`, `a3a4+`, `C@b2`, `C*b2`; the `+` is optional).
    pub fn parse_move(&self, text: &str) -> Result<Move, ParseMoveError> {
        let wanted = MoveText::parse(text)?;
        self.legal_moves()
            .into_iter()
            .find(|&mv| wanted.names(mv))
            .ok_or_else(|| ParseMoveError::Illegal(text.to_string()))
    }

    /// Plays `mv`, which must be a legal move of this position that does not capture the royal
    /// (checked in debug builds only): the solver's fast path. Always inlined: see
    /// [`Position::key_after`].
    #[inline(always)]
    pub fn play_unchecked(&self, mv: Move) -> Position {
        debug_assert!(!self.captures_royal(mv), "play_unchecked on a royal capture");
        let mut next = *self;
        let us = self.turn;
        match mv {
            Move::Board { from, to, promotes } => {
                let mut piece = self.board[from.index()].expect("a board move starts on a piece");
                if let Some(captured) = self.board[to.index()] {
                    next.hands[us].add(captured.kind);
                    next.occupied[!us] ^= Bitboard::from_square(to);
                }
                piece.promoted |= promotes;
                next.put(from, None);
                next.put(to, Some(piece));
                next.occupied[us] ^= Bitboard::from_square(from) | Bitboard::from_square(to);
                if piece.kind == Kind::Royal {
                    next.royals[us] = to;
                }
            }
            Move::Drop { kind, to } => {
                next.hands[us].remove(kind);
                next.put(to, Some(Piece::new(us, kind, false)));
                next.occupied[us] |= Bitboard::from_square(to);
            }
        }
        next.turn = !us;
        next
    }
}

impl TryFrom<Setup> for Position {
    type Error = PositionError;

    fn try_from(setup: Setup) -> Result<Position, PositionError> {
        let mut royals: ByColor<Option<Square>> = ByColor::default();
        let mut occupied: ByColor<Bitboard> = ByColor::default();
        let mut counts = [0u32; 4];
        for square in Square::all() {
            let Some(piece) = setup.board[square.index()] else { continue };
            occupied[piece.color] |= Bitboard::from_square(square);
            match piece.kind.hand_index() {
                None => {
                    if piece.promoted {
                        return Err(PositionError::PromotedRoyal(square));
                    }
                    if let Some(other) = royals[piece.color] {
                        return Err(PositionError::TwoRoyals(piece.color, other, square));
                    }
                    royals[piece.color] = Some(square);
                }
                Some(i) => {
                    counts[i] += 1;
                    if !piece.promoted && square.is_far_rank_for(piece.color) {
                        return Err(PositionError::UnpromotedOnFarRank(square));
                    }
                }
            }
        }
        for color in Color::BOTH {
            for (count, held) in counts.iter_mut().zip(setup.hands[color].0) {
                *count += u32::from(held);
            }
        }
        if let Some((i, &n)) = counts.iter().enumerate().find(|(_, &n)| n > 2) {
            let capped = Color::BOTH.into_iter().any(|color| setup.hands[color].0[i] >= crate::sfen::HELD_CAP);
            return Err(PositionError::TooManyPieces(Kind::HAND_KINDS[i], n, capped));
        }
        let royal = |c| royals[c].ok_or(PositionError::MissingRoyal(c));
        Ok(Position::assemble(
            setup.board,
            occupied,
            ByColor { first: royal(Color::First)?, second: royal(Color::Second)? },
            setup.hands,
            setup.turn,
        ))
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_sfen())
    }
}
