//! Position notation: SFEN (`trfk/3c/C3/KFRT b - 1`) and Fairy-Stockfish FEN
//! (`trfk/3c/C3/KFRT[] w 0 1`), parsed into a [`Setup`] and formatted from a [`Position`].
//!
//! Both forms accept `_` in place of spaces, so they can be sent in a URL unescaped.
//! Mind the sides: in SFEN `b` is the first player, in Fairy-Stockfish FEN `w` is. And the
//! carp: Fairy-Stockfish writes it `P`; both notations read either letter.

use std::fmt;

use crate::{ByColor, Color, Hand, Kind, Move, Piece, Position, PositionError, Setup, Square};

/// The most pieces of one kind a parsed hand records: longer runs of one letter (`CCCCCCCCCCCC`)
/// stop counting there, so that no input overflows the count.
pub(crate) const HELD_CAP: u8 = 9;

/// What is wrong at the offset of a [`ParseSfenError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SfenErrorKind {
    /// The string is empty.
    Empty,
    /// A character that has no meaning here.
    UnexpectedCharacter(char),
    /// A letter that names no piece.
    UnknownPiece(char),
    /// A rank describes more than 4 squares.
    RankTooLong {
        /// The rank, 1–4.
        rank: u8,
    },
    /// A rank describes fewer than 4 squares.
    RankTooShort {
        /// The rank, 1–4.
        rank: u8,
        /// How many squares it describes.
        squares: u8,
    },
    /// The board does not have exactly 4 ranks.
    WrongRankCount(usize),
    /// `+` before a royal, or before nothing.
    BadPromotion,
    /// A royal in a hand.
    RoyalInHand,
    /// The side to move is missing.
    MissingSide,
    /// The side to move is not `b` or `w`.
    BadSide(String),
    /// A count in a hand that is not followed by a piece letter, or is 0.
    BadHandCount,
    /// A FEN hand without its closing `]`.
    UnclosedHand,
    /// A move number or counter that is not a number.
    BadNumber(String),
    /// More fields than the notation has.
    TrailingInput(String),
}

/// A position string that cannot be read: what went wrong and at which character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseSfenError {
    /// Character offset (0-based) in the input where the problem is.
    pub offset: usize,
    /// What is wrong there.
    pub kind: SfenErrorKind,
    /// The board was split by a space: most likely a `+` turned into a space by URL decoding.
    pub lost_plus: bool,
}

impl fmt::Display for ParseSfenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: ", self.offset)?;
        match &self.kind {
            SfenErrorKind::Empty => write!(f, "empty position string")?,
            SfenErrorKind::UnexpectedCharacter(c) => write!(f, "unexpected character {c:?}")?,
            SfenErrorKind::UnknownPiece(c) => {
                write!(f, "unknown piece letter {c:?} (pieces are K, C, F, R, T; lowercase for the second player)")?
            }
            SfenErrorKind::RankTooLong { rank } => write!(f, "rank {rank} has more than 4 squares")?,
            SfenErrorKind::RankTooShort { rank, squares } => {
                let plural = if *squares == 1 { "" } else { "s" };
                write!(f, "rank {rank} has {squares} square{plural}; each rank has 4")?
            }
            SfenErrorKind::WrongRankCount(n) => {
                let plural = if *n == 1 { "" } else { "s" };
                write!(f, "the board has {n} rank{plural}; it needs 4, separated by '/'")?
            }
            SfenErrorKind::BadPromotion => write!(f, "'+' must precede a non-royal piece letter")?,
            SfenErrorKind::RoyalInHand => write!(f, "a royal cannot be in hand")?,
            SfenErrorKind::MissingSide => write!(f, "missing side to move")?,
            SfenErrorKind::BadSide(s) => write!(f, "side to move {s:?} is not 'b' or 'w'")?,
            SfenErrorKind::BadHandCount => write!(f, "a hand count must be 1-9 followed by a piece letter")?,
            SfenErrorKind::UnclosedHand => write!(f, "the hand opened with '[' has no closing ']'")?,
            SfenErrorKind::BadNumber(s) => write!(f, "{s:?} is not a number")?,
            SfenErrorKind::TrailingInput(s) => write!(f, "unexpected trailing input {s:?}")?,
        }
        if self.lost_plus {
            write!(f, " (the board contains a space: if a promoted piece was sent as '+' in a URL, send '+' as %2B)")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseSfenError {}

/// A position string that cannot be read, or that describes an illegal position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotationError {
    /// The string is not valid notation.
    Syntax(ParseSfenError),
    /// The string is well formed but the position breaks the rules.
    Illegal(PositionError),
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotationError::Syntax(e) => write!(f, "invalid position notation {e}"),
            NotationError::Illegal(e) => write!(f, "illegal position: {e}"),
        }
    }
}

impl std::error::Error for NotationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NotationError::Syntax(e) => Some(e),
            NotationError::Illegal(e) => Some(e),
        }
    }
}

impl std::str::FromStr for Position {
    type Err = NotationError;

    fn from_str(text: &str) -> Result<Position, NotationError> {
        Position::parse(text)
    }
}

struct Token<'a> {
    offset: usize,
    text: &'a str,
}

fn error(offset: usize, kind: SfenErrorKind) -> ParseSfenError {
    ParseSfenError { offset, kind, lost_plus: false }
}

impl Setup {
    /// Reads SFEN or Fairy-Stockfish FEN (told apart by the `[` of the FEN hand).
    pub fn parse(text: &str) -> Result<Setup, ParseSfenError> {
        let tokens = tokenize(text)?;
        // A '+' sent unescaped in a URL decodes to a space, splitting the board: the token after
        // the board is then the rest of a rank instead of the side to move.
        let lost_plus = text.starts_with(' ')
            || tokens.get(1).is_some_and(|t| {
                !matches!(t.text, "b" | "w")
                    && (t.text.contains('/') || t.text.starts_with(|c: char| "KCFRTkcfrt".contains(c)))
            });
        parse_tokens(&tokens).map_err(|e| ParseSfenError { lost_plus, ..e })
    }
}

fn tokenize(text: &str) -> Result<Vec<Token<'_>>, ParseSfenError> {
    if let Some((offset, c)) = text.char_indices().find(|(_, c)| !c.is_ascii() || c.is_ascii_control()) {
        return Err(error(offset, SfenErrorKind::UnexpectedCharacter(c)));
    }
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, b) in text.bytes().chain(std::iter::once(b' ')).enumerate() {
        let separator = b == b' ' || b == b'_';
        match (separator, start) {
            (true, Some(s)) => {
                tokens.push(Token { offset: s, text: &text[s..i] });
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if tokens.is_empty() {
        return Err(error(0, SfenErrorKind::Empty));
    }
    Ok(tokens)
}

fn parse_tokens(tokens: &[Token<'_>]) -> Result<Setup, ParseSfenError> {
    let first = &tokens[0];
    let fairy = first.text.contains('[');
    let mut setup;
    let mut rest = &tokens[1..];
    if fairy {
        let open = first.text.find('[').expect("checked above");
        setup = parse_board(&first.text[..open], first.offset)?;
        let hand = &first.text[open + 1..];
        let Some(hand) = hand.strip_suffix(']') else {
            return Err(error(first.offset + first.text.len(), SfenErrorKind::UnclosedHand));
        };
        let hand = if hand == "-" { "" } else { hand };
        setup.hands = parse_hand(hand, first.offset + open + 1)?;
    } else {
        setup = parse_board(first.text, first.offset)?;
    }
    let end = first.offset + first.text.len();
    let Some((side, tail)) = rest.split_first() else {
        return Err(error(end + 1, SfenErrorKind::MissingSide));
    };
    setup.turn = match (side.text, fairy) {
        ("b", false) | ("w", true) => Color::First,
        ("w", false) | ("b", true) => Color::Second,
        _ => return Err(error(side.offset, SfenErrorKind::BadSide(side.text.to_string()))),
    };
    rest = tail;
    if !fairy {
        if let Some((hand, tail)) = rest.split_first() {
            let text = if hand.text == "-" { "" } else { hand.text };
            setup.hands = parse_hand(text, hand.offset)?;
            rest = tail;
        }
    }
    // Trailing counters: SFEN has a move number; Fairy FEN may have "-" placeholders and two counters.
    let max_trailing = if fairy { 4 } else { 1 };
    for (i, token) in rest.iter().enumerate() {
        if i >= max_trailing {
            return Err(error(token.offset, SfenErrorKind::TrailingInput(token.text.to_string())));
        }
        let placeholder = fairy && token.text == "-";
        if !placeholder && token.text.parse::<u32>().is_err() {
            return Err(error(token.offset, SfenErrorKind::BadNumber(token.text.to_string())));
        }
    }
    Ok(setup)
}

fn parse_board(text: &str, offset: usize) -> Result<Setup, ParseSfenError> {
    let mut setup = Setup { board: [None; 16], hands: ByColor::default(), turn: Color::First };
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 4 {
        return Err(error(offset, SfenErrorKind::WrongRankCount(ranks.len())));
    }
    let mut at = offset;
    for (row, rank_text) in ranks.iter().enumerate() {
        let rank = 3 - row as u8;
        let mut file = 0u8;
        let mut promoted = false;
        for (i, c) in rank_text.char_indices() {
            let here = at + i;
            if promoted && !c.is_ascii_alphabetic() {
                return Err(error(here - 1, SfenErrorKind::BadPromotion));
            }
            match c {
                '1'..='4' => {
                    file += c as u8 - b'0';
                    if file > 4 {
                        return Err(error(here, SfenErrorKind::RankTooLong { rank: rank + 1 }));
                    }
                }
                '+' => promoted = true,
                c if c.is_ascii_alphabetic() => {
                    let kind = Kind::from_notation_letter(c).ok_or(error(here, SfenErrorKind::UnknownPiece(c)))?;
                    if promoted && kind == Kind::Royal {
                        return Err(error(here - 1, SfenErrorKind::BadPromotion));
                    }
                    let square =
                        Square::new(file, rank).ok_or(error(here, SfenErrorKind::RankTooLong { rank: rank + 1 }))?;
                    let color = if c.is_ascii_uppercase() { Color::First } else { Color::Second };
                    setup.board[square.index()] = Some(Piece::new(color, kind, promoted));
                    promoted = false;
                    file += 1;
                }
                other => return Err(error(here, SfenErrorKind::UnexpectedCharacter(other))),
            }
        }
        if promoted {
            return Err(error(at + rank_text.len() - 1, SfenErrorKind::BadPromotion));
        }
        if file < 4 {
            return Err(error(at + rank_text.len(), SfenErrorKind::RankTooShort { rank: rank + 1, squares: file }));
        }
        at += rank_text.len() + 1;
    }
    Ok(setup)
}

fn parse_hand(text: &str, offset: usize) -> Result<ByColor<Hand>, ParseSfenError> {
    let mut hands: ByColor<Hand> = ByColor::default();
    let mut count: Option<(usize, u8)> = None;
    for (i, c) in text.char_indices() {
        let here = offset + i;
        match c {
            '1'..='9' if count.is_none() => count = Some((here, c as u8 - b'0')),
            c if c.is_ascii_alphabetic() => {
                let kind = Kind::from_notation_letter(c).ok_or(error(here, SfenErrorKind::UnknownPiece(c)))?;
                let Some(index) = kind.hand_index() else {
                    return Err(error(here, SfenErrorKind::RoyalInHand));
                };
                let color = if c.is_ascii_uppercase() { Color::First } else { Color::Second };
                let n = count.take().map_or(1, |(_, n)| n);
                let held = &mut hands[color].0[index];
                // Saturate: any count above 2 is reported as too many pieces by validation,
                // which says "at least" for a count that reached the cap.
                *held = held.saturating_add(n).min(HELD_CAP);
            }
            '0'..='9' => return Err(error(here, SfenErrorKind::BadHandCount)),
            other => return Err(error(here, SfenErrorKind::UnexpectedCharacter(other))),
        }
    }
    if let Some((at, _)) = count {
        return Err(error(at, SfenErrorKind::BadHandCount));
    }
    Ok(hands)
}

impl Position {
    /// Reads and validates a position written in SFEN or in Fairy-Stockfish FEN (told apart by
    /// the `[` of the FEN hand); `_` may stand for a space.
    ///
    /// ```
    /// use shogi4_engine::Position;
    /// let sfen = Position::parse("trfk/3c/C3/KFRT b - 1").unwrap();
    /// let fen = Position::parse("trfk/3c/C3/KFRT[] w 0 1").unwrap();
    /// assert_eq!(sfen, fen);
    /// assert_eq!(sfen, Position::start());
    /// ```
    pub fn parse(text: &str) -> Result<Position, NotationError> {
        let setup = Setup::parse(text).map_err(NotationError::Syntax)?;
        Position::try_from(setup).map_err(NotationError::Illegal)
    }

    /// SFEN and Fairy-Stockfish FEN together, the board walked once for both.
    pub fn to_sfen_and_fen(&self) -> (String, String) {
        let board = self.board_text();
        let fen = self.fen_after(&board);
        (self.sfen_after(board), fen)
    }

    /// SFEN with move number 1, e.g. `trfk/3c/C3/KFRT b - 1`.
    pub fn to_sfen(&self) -> String {
        self.sfen_after(self.board_text())
    }

    /// The game's last position after `mv`, a royal capture, in SFEN syntax: the capturing
    /// piece on the royal's square (promoted if the move promotes), the hands as they were,
    /// the loser to move. No [`Position`] can hold it (a royal is gone), so it exists only as
    /// text, for a board to show; `None` if `mv` does not capture the royal.
    ///
    /// ```
    /// use shogi4_engine::Position;
    /// let position = Position::parse("k3/1K2/4/4 b C 1").unwrap();
    /// let capture = position.parse_move("b3a4").unwrap();
    /// assert_eq!(position.sfen_after_royal_capture(capture).unwrap(), "K3/4/4/4 w C 1");
    /// ```
    pub fn sfen_after_royal_capture(&self, mv: Move) -> Option<String> {
        let Move::Board { from, to, promotes } = mv else { return None };
        if !self.captures_royal(mv) {
            return None;
        }
        let mut last = *self;
        let mut piece = last.board[from.index()]?;
        piece.promoted |= promotes;
        last.put(from, None);
        last.put(to, Some(piece));
        last.turn = !self.turn;
        Some(last.to_sfen())
    }

    fn sfen_after(&self, board: String) -> String {
        let mut out = board;
        out.push_str(if self.turn == Color::First { " b " } else { " w " });
        let mut hands = String::new();
        for color in Color::BOTH {
            for kind in Kind::HAND_KINDS {
                let n = self.hands[color].count(kind);
                if n > 1 {
                    hands.push((b'0' + n) as char);
                }
                if n > 0 {
                    hands.push(letter(color, kind));
                }
            }
        }
        out.push_str(if hands.is_empty() { "-" } else { &hands });
        out.push_str(" 1");
        out
    }

    /// Fairy-Stockfish FEN as that engine writes it for its `shogi4` variant, e.g.
    /// `trfk/3p/P3/KFRT[] w - - 0 1`: the carp is `P`, the hands are in brackets, `w` is the
    /// first player, and the castling, en-passant and move counters follow.
    pub fn to_fen(&self) -> String {
        self.fen_after(&self.board_text())
    }

    /// The FEN from the SFEN's board text: each piece letter as [`Kind::fairy_letter`], then
    /// the hands, the side to move and the fields that follow it.
    fn fen_after(&self, sfen_board: &str) -> String {
        let mut out: String = sfen_board
            .chars()
            .map(|c| match Kind::from_letter(c) {
                Some(kind) if c.is_ascii_uppercase() => kind.fairy_letter(),
                Some(kind) => kind.fairy_letter().to_ascii_lowercase(),
                None => c,
            })
            .collect();
        out.push('[');
        for color in Color::BOTH {
            for kind in Kind::HAND_KINDS {
                for _ in 0..self.hands[color].count(kind) {
                    out.push(cased(color, kind.fairy_letter()));
                }
            }
        }
        out.push_str(if self.turn == Color::First { "] w - - 0 1" } else { "] b - - 0 1" });
        out
    }

    fn board_text(&self) -> String {
        let mut out = String::with_capacity(40);
        for rank in (0..4).rev() {
            let mut empty = 0;
            for file in 0..4 {
                let square = Square::new(file, rank).expect("on the board");
                match self.board[square.index()] {
                    None => empty += 1,
                    Some(piece) => {
                        if empty > 0 {
                            out.push((b'0' + empty) as char);
                            empty = 0;
                        }
                        if piece.promoted {
                            out.push('+');
                        }
                        out.push(letter(piece.color, piece.kind));
                    }
                }
            }
            if empty > 0 {
                out.push((b'0' + empty) as char);
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out
    }
}

fn letter(color: Color, kind: Kind) -> char {
    cased(color, kind.letter())
}

/// A piece letter in its owner's case: upper for the first player, lower for the second.
fn cased(color: Color, letter: char) -> char {
    match color {
        Color::First => letter,
        Color::Second => letter.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_round_trips() {
        let start = Position::start();
        assert_eq!(start.to_sfen(), "trfk/3c/C3/KFRT b - 1");
        assert_eq!(start.to_fen(), "trfk/3p/P3/KFRT[] w - - 0 1");
        assert_eq!(Position::parse("trfk/3p/P3/KFRT[-] w 0 1").unwrap(), start);
        assert_eq!(Position::parse(&start.to_fen()).unwrap(), start);
        assert_eq!(Position::parse("trfk/3c/C3/KFRT_b_-_1").unwrap(), start);
        assert_eq!(Position::parse("trfk/3c/C3/KFRT[-] w 0 1").unwrap(), start);
        assert_eq!(Position::parse("trfk/3c/C3/KFRT b").unwrap(), start);
    }

    #[test]
    fn hands_read_counts_and_repeats() {
        let p = Position::parse("k3/4/4/K3 w 2Cfr 3").unwrap();
        assert_eq!(p.hand(Color::First).count(Kind::Carp), 2);
        assert_eq!(p.hand(Color::Second).count(Kind::Fox), 1);
        assert_eq!(p.to_fen(), "k3/4/4/K3[PPfr] b - - 0 1");
        assert_eq!(Position::parse(&p.to_fen()).unwrap(), p);
    }

    #[test]
    fn both_notations_at_once_are_each_alone() {
        for sfen in ["trfk/3c/C3/KFRT b - 1", "k3/1+C2/4/K3 w Cfr 1", "t2k/2fc/CR2/KF1T w r 1"] {
            let p = Position::parse(sfen).unwrap();
            assert_eq!(p.to_sfen_and_fen(), (p.to_sfen(), p.to_fen()), "{sfen}");
        }
    }

    #[test]
    fn lost_plus_is_explained() {
        let err = Setup::parse("t rfk/3c/C3/KFRT b - 1").unwrap_err();
        assert!(err.lost_plus);
        assert!(err.to_string().contains("%2B"));
    }
}
