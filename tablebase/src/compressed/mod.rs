//! Compressed value arrays (format version 4): a grammar of pairs over the value bytes, codes
//! chosen by what came just before, and small fixed-size blocks, each with its own checksum,
//! so that one value is read by decoding part of one block.
//!
//! - **Don't-care slots.** A slot whose side to move can capture the royal is a win in 1 by
//!   the rules; every reader asks the rules first for such positions (see
//!   [`crate::Table::value_of`]), so the compressor may store anything there. It stores the
//!   value before it, which turns most of them into runs.
//! - **The grammar** (Re-Pair): the most frequent pairs of adjacent symbols become new
//!   symbols, pass after pass, up to [`MAX_SYMBOLS`]. A symbol stands for a run of slots; its
//!   length is known from the grammar.
//! - **Contexts.** The symbols fall into a few classes, grouped by which symbols tend to follow
//!   them; each symbol is coded with the canonical Huffman code of the classes of the two
//!   symbols before it (a value run predicts the next one far better than the table's overall
//!   frequencies do). The first two symbols of each part of a block have no such past and use
//!   one code over every symbol. The compressor tries a few class counts and keeps the smallest
//!   file (small tables cannot pay for many codes).
//! - **Blocks** hold whole symbols, [`BLOCK_BYTES`] bytes each, in parts
//!   ([`DEFAULT_PARTS`] unless the caller chooses) that each start at a fixed bit with a fresh
//!   context, so a read starts at the part that holds its slot. A sparse index says which
//!   block holds every `2^k`-th slot; from there the blocks' first slots lead to the right
//!   one. Reading slot `s` copies its block, checks the
//!   block's checksum, walks the codes of its part until the symbol that covers `s`, and
//!   descends that symbol's pairs to the byte.
//!
//! The layout is documented in `tables/README.md`; [`layout`] names each field.
//!
//! Why these choices (the pass sizes, the counts kept from pass to pass, the classes), how
//! far `KKCFR` is from 0.05 byte per position and what was tried to close the gap: the
//! measurements are in `docs/measurements.md` ("Compressed tables: the runs behind the
//! format").

mod decode;
mod encode;
mod format;
mod grammar;

pub use decode::{DecodeError, Decoder};
pub use encode::encode;
pub use format::{layout, BLOCK_BYTES, DEFAULT_PARTS, MAX_PARTS, MAX_SYMBOLS};
