//! The rules of Shogi4, a 4×4 drop-shogi: squares, pieces, positions, notation, legal moves,
//! un-moves, perft, symmetries and the dense position index of closed games.
//!
//! This crate is pure: no I/O, no HTTP, no serialization framework. Every [`Position`] is
//! legal by construction; build one from notation with [`Position::parse`] or from a
//! [`Setup`] with `Position::try_from`.
//!
//! ```
//! use shogi4_engine::{perft, Position};
//! let start = Position::start();
//! assert_eq!(start.legal_moves().len(), 8);
//! assert_eq!(perft(&start, 2), 64);
//! ```

mod bitboard;
mod color;
mod hand;
mod index;
mod material;
mod movegen;
mod moves;
mod perft;
mod piece;
mod position;
mod sfen;
mod square;
mod symmetry;
mod unmove;

pub use bitboard::Bitboard;
pub use color::{ByColor, Color};
pub use hand::Hand;
pub use index::{Children, Cursor, MaterialIndex, Parents};
pub use material::{Material, ParseMaterialError};
pub use movegen::{Mobility, MoveCounts, MoveList, MAX_MOVES};
pub use moves::{IllegalMove, Move, ParseMoveError};
pub use perft::perft;
pub use piece::{Kind, Piece};
pub use position::{Played, Position, PositionError, Setup};
pub use sfen::{NotationError, ParseSfenError, SfenErrorKind};
pub use square::{Direction, Square};
pub use unmove::UnMove;
