//! Answering queries from a set of tables: the value of a position, every move with its
//! value (best first), and the line of best play.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use shogi4_engine::{Material, Move, Position};

use crate::format::TableError;
use crate::table::{open_table, table_files, Table};
use crate::value::Value;

/// Tables by closed game.
pub struct Tablebase<B = memmap2::Mmap> {
    tables: BTreeMap<Material, Table<B>>,
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
        }
    }
}

impl std::error::Error for ProbeError {}

/// One legal move and what it is worth to the player making it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The move.
    pub mv: Move,
    /// The position after it; `None` when it captures the royal (the game is over).
    pub result: Option<Position>,
    /// Its value for the player who makes it: a move into a loss in `n` is a win in `n + 1`.
    pub value: Value,
    /// It captures a piece (the royal included).
    pub capture: bool,
    /// It captures the royal: an immediate win.
    pub royal_capture: bool,
    /// It jumps over a friendly piece.
    pub jump: bool,
}

/// The answer for one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// The position's value for its side to move.
    pub value: Value,
    /// Every legal move, best first: wins by shortest distance, draws, losses by longest.
    pub moves: Vec<MoveValue>,
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

impl Tablebase<memmap2::Mmap> {
    /// Maps every `*.s4tb` file in `dir`. Files that fail validation are returned beside the
    /// tablebase with their error, and left out; the others are served.
    pub fn open_dir(dir: &Path, verify_checksums: bool) -> Result<(Self, Vec<(PathBuf, TableError)>), TableError> {
        let mut tables = BTreeMap::new();
        let mut rejected = Vec::new();
        for path in table_files(dir)? {
            let opened = open_table(&path).and_then(|t| {
                if verify_checksums {
                    t.verify_checksum()?;
                }
                Ok(t)
            });
            match opened {
                Ok(table) => {
                    tables.insert(table.header().material, table);
                }
                Err(e) => rejected.push((path, e)),
            }
        }
        Ok((Tablebase { tables }, rejected))
    }
}

impl<B: AsRef<[u8]>> Tablebase<B> {
    /// A tablebase of the given tables.
    pub fn from_tables(tables: impl IntoIterator<Item = Table<B>>) -> Self {
        Tablebase { tables: tables.into_iter().map(|t| (t.header().material, t)).collect() }
    }

    /// The loaded tables, by closed game.
    pub fn tables(&self) -> impl Iterator<Item = (&Material, &Table<B>)> {
        self.tables.iter()
    }

    /// The table of one closed game.
    pub fn table(&self, material: Material) -> Option<&Table<B>> {
        self.tables.get(&material)
    }

    /// The table of the position's closed game.
    fn table_of(&self, position: &Position) -> Result<&Table<B>, ProbeError> {
        let material = position.material();
        self.tables
            .get(&material)
            .ok_or_else(|| ProbeError::NoTable { material, loaded: self.tables.keys().copied().collect() })
    }

    /// The value of a position.
    pub fn value(&self, position: &Position) -> Result<Value, ProbeError> {
        Ok(self.table_of(position)?.probe(position))
    }

    /// The value of a position and of each of its moves, best first.
    pub fn probe(&self, position: &Position) -> Result<ProbeResult, ProbeError> {
        let table = self.table_of(position)?;
        let value = table.probe(position);
        let mut moves: Vec<MoveValue> = position
            .legal_moves()
            .iter()
            .map(|&mv| {
                let royal_capture = position.captures_royal(mv);
                let result = (!royal_capture).then(|| position.play_unchecked(mv));
                let value = result.map_or(Value::Win(1), |next| table.probe(&next).for_mover());
                MoveValue { mv, result, value, capture: position.is_capture(mv), royal_capture, jump: mv.is_jump() }
            })
            .collect();
        // Stable: equal values keep move-generation order, so answers are deterministic.
        moves.sort_by_key(|m| std::cmp::Reverse(m.value));
        Ok(ProbeResult { value, moves })
    }

    /// The line of best play to the royal capture (empty for a draw): each side plays its
    /// best move, the first in [`Tablebase::probe`] order.
    pub fn mainline(&self, position: &Position) -> Result<(Value, Vec<MainlineStep>), ProbeError> {
        let value = self.value(position)?;
        let mut line = Vec::new();
        let mut current = *position;
        if value == Value::Draw {
            return Ok((value, line));
        }
        // A consistent table lowers the distance by one each ply; anything else is a damaged
        // table, reported rather than followed.
        let corrupt = |at: &Position| ProbeError::Inconsistent { material: at.material(), sfen: at.to_sfen() };
        let mut expected = value.dtw().expect("not a draw");
        while expected > 0 {
            let probe = self.probe(&current)?;
            let best = probe.moves.first().ok_or_else(|| corrupt(&current))?;
            if best.value.dtw() != Some(expected) {
                return Err(corrupt(&current));
            }
            expected -= 1;
            line.push(MainlineStep { mv: best.mv, result: best.result, dtw_after: expected });
            match best.result {
                Some(next) => current = next,
                None if expected == 0 => break,
                None => return Err(corrupt(&current)),
            }
        }
        Ok((value, line))
    }
}
