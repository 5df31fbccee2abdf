//! Answering queries from tables: the value of a position, every move with its value (best
//! first), and the line of best play. A closed game's positions stay in it, so one table
//! answers a position, its moves and its whole line: each query finds its table once.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use shogi4_engine::{Material, Move, Position};

use crate::format::{CorruptValue, TableError};
use crate::store::{Loaded, TableDir};
use crate::table::Table;
use crate::value::Value;

/// Tables by closed game: the one lookup of a position's table, for both binaries. Each
/// entry is a [`Table`] (the CLI's mappings) or whatever holds one with more beside it (the
/// server's served tables, with their validators and guard); answering is defined for
/// [`Table`] entries.
pub struct Tablebase<T = Table<memmap2::Mmap>> {
    tables: BTreeMap<Material, T>,
}

impl<T> Default for Tablebase<T> {
    fn default() -> Self {
        Tablebase { tables: BTreeMap::new() }
    }
}

/// Why a position could not be answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// No table is loaded for the position's closed game.
    NoTable {
        /// The position's closed game.
        material: Material,
        /// The closed games that are loaded.
        loaded: Vec<Material>,
    },
    /// The table contradicts itself along the line of best play (a damaged table that was
    /// served without its checksum being verified).
    Inconsistent {
        /// The closed game.
        material: Material,
        /// Where the line broke off.
        sfen: String,
    },
    /// A value byte of the table cannot be decoded (a damaged table).
    Corrupt {
        /// The closed game.
        material: Material,
        /// The damage.
        cause: CorruptValue,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::NoTable { material, loaded } => {
                write!(f, "no table for closed game {material}")?;
                if *material == Material::FULL {
                    write!(f, " (the full game is not solved: it has 146,855,796,943,200 positions)")?;
                }
                let names: Vec<String> = loaded.iter().map(|m| m.to_string()).collect();
                write!(f, "; loaded: {}", if names.is_empty() { "none".to_string() } else { names.join(", ") })
            }
            ProbeError::Inconsistent { material, sfen } => {
                write!(f, "the {material} table is inconsistent at {sfen}: run `shogi4 audit` on it")
            }
            ProbeError::Corrupt { material, cause } => {
                write!(f, "the {material} table is damaged ({cause}): run `shogi4 audit` on it")
            }
        }
    }
}

impl std::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProbeError::Corrupt { cause, .. } => Some(cause),
            _ => None,
        }
    }
}

/// One legal move and what it is worth to the player making it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The move.
    pub mv: Move,
    /// The position after it; `None` when it captures the royal (the game is over).
    pub result: Option<Position>,
    /// Its value for the player who makes it: a move into a loss in `n` is a win in `n + 1`.
    pub value: Value,
    /// What kind of move it is.
    pub flags: MoveFlags,
}

/// What kind of move a move is: the badges a client shows beside it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveFlags {
    /// It captures a piece (the royal included).
    pub capture: bool,
    /// It promotes the moving piece.
    pub promotion: bool,
    /// It jumps over a friendly piece.
    pub jump: bool,
    /// It drops a piece from the hand.
    pub drop: bool,
    /// It captures the royal: an immediate win.
    pub royal_capture: bool,
}

impl MoveFlags {
    /// The flags of the legal move `mv` of `position`.
    pub fn of(position: &Position, mv: Move) -> MoveFlags {
        MoveFlags {
            capture: position.is_capture(mv),
            promotion: mv.promotes(),
            jump: mv.is_jump(),
            drop: mv.is_drop(),
            royal_capture: position.captures_royal(mv),
        }
    }
}

/// The answer for one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// The position's closed game (the table that answered).
    pub material: Material,
    /// The position's value for its side to move.
    pub value: Value,
    /// Every legal move, best first: wins by shortest distance, draws, losses by longest.
    pub moves: Vec<MoveValue>,
}

/// The line of best play from a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mainline {
    /// The position's closed game (the table that answered).
    pub material: Material,
    /// The position's value for its side to move.
    pub value: Value,
    /// The moves to the royal capture, `dtw` of them; empty for a draw.
    pub steps: Vec<MainlineStep>,
}

/// One step of the line of best play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MainlineStep {
    /// The move played.
    pub mv: Move,
    /// The position after it; `None` for the final royal capture.
    pub result: Option<Position>,
    /// Plies left to the royal capture after this move.
    pub dtw_after: u32,
}

impl Tablebase {
    /// Maps every table in `dir` (see [`TableDir::load`]). Files that fail validation are
    /// returned beside the tablebase with their error, and left out; the others are served.
    pub fn open_dir(
        dir: &Path,
        verify_checksums: bool,
    ) -> Result<(Self, Vec<(std::path::PathBuf, TableError)>), TableError> {
        let Loaded { tables, rejected } = TableDir::new(dir).load(verify_checksums)?;
        Ok((Tablebase { tables }, rejected))
    }
}

impl<T> Tablebase<T> {
    /// Adds (or replaces) the table of `material`.
    pub fn insert(&mut self, material: Material, table: T) {
        self.tables.insert(material, table);
    }

    /// The loaded tables, by closed game, smallest material first.
    pub fn tables(&self) -> impl Iterator<Item = (&Material, &T)> {
        self.tables.iter()
    }

    /// The table of a closed game, or the [`ProbeError::NoTable`] that says it is missing.
    pub fn table(&self, material: Material) -> Result<&T, ProbeError> {
        self.tables
            .get(&material)
            .ok_or_else(|| ProbeError::NoTable { material, loaded: self.tables.keys().copied().collect() })
    }

    /// How many tables are loaded.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether no table is loaded.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

impl<B: AsRef<[u8]>> Tablebase<Table<B>> {
    /// A tablebase of the given tables.
    pub fn from_tables(tables: impl IntoIterator<Item = Table<B>>) -> Self {
        Tablebase { tables: tables.into_iter().map(|t| (t.header().material, t)).collect() }
    }

    /// The value of a position.
    pub fn value(&self, position: &Position) -> Result<Value, ProbeError> {
        let table = self.table(position.material())?;
        table.value_of(position).map_err(|cause| corrupt(table, cause))
    }

    /// The value of a position and of each of its moves, best first.
    pub fn probe(&self, position: &Position) -> Result<ProbeResult, ProbeError> {
        self.table(position.material())?.probe(position)
    }

    /// The line of best play to the royal capture (see [`Table::mainline`]).
    pub fn mainline(&self, position: &Position) -> Result<Mainline, ProbeError> {
        self.table(position.material())?.mainline(position)
    }
}

fn corrupt<B: AsRef<[u8]>>(table: &Table<B>, cause: CorruptValue) -> ProbeError {
    ProbeError::Corrupt { material: table.header().material, cause }
}

impl<B: AsRef<[u8]>> Table<B> {
    /// The value of a position of this table's closed game and of each of its moves, best
    /// first.
    pub fn probe(&self, position: &Position) -> Result<ProbeResult, ProbeError> {
        let value = self.value_of(position).map_err(|cause| corrupt(self, cause))?;
        let legal = position.legal_moves();
        let mut moves = Vec::with_capacity(legal.len());
        // Each child is indexed from one shared view of the parent and the move.
        let children = self.index().children_of(position);
        for &mv in legal.iter() {
            let flags = MoveFlags::of(position, mv);
            let result = (!flags.royal_capture).then(|| position.play_unchecked(mv));
            let value = match result {
                None => Value::Win(1),
                Some(_) => self.value_after(&children, position, mv).map_err(|cause| corrupt(self, cause))?.for_mover(),
            };
            moves.push(MoveValue { mv, result, value, flags });
        }
        // Stable: equal values keep move-generation order, so answers are deterministic.
        moves.sort_by_key(|m| std::cmp::Reverse(m.value));
        Ok(ProbeResult { material: self.header().material, value, moves })
    }

    /// The line of best play to the royal capture (empty for a draw): each side plays its
    /// best move, the first in [`Table::probe`] order.
    pub fn mainline(&self, position: &Position) -> Result<Mainline, ProbeError> {
        let material = self.header().material;
        let value = self.value_of(position).map_err(|cause| corrupt(self, cause))?;
        let mut steps = Vec::new();
        let Some(mut expected) = value.dtw() else { return Ok(Mainline { material, value, steps }) };
        // A consistent table lowers the distance by one each ply; anything else is a damaged
        // table, reported rather than followed.
        let inconsistent = |at: &Position| ProbeError::Inconsistent { material: at.material(), sfen: at.to_sfen() };
        let mut current = *position;
        while expected > 0 {
            let probe = self.probe(&current)?;
            let best = probe.moves.first().ok_or_else(|| inconsistent(&current))?;
            if best.value.dtw() != Some(expected) {
                return Err(inconsistent(&current));
            }
            expected -= 1;
            steps.push(MainlineStep { mv: best.mv, result: best.result, dtw_after: expected });
            match best.result {
                Some(next) => current = next,
                None if expected == 0 => break,
                None => return Err(inconsistent(&current)),
            }
        }
        Ok(Mainline { material, value, steps })
    }
}
