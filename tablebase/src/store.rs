//! The table directory: where each closed game's table lives (`DIR/KKCF.s4tb`), which tables
//! in it are usable, and solving the ones that are missing or damaged. The CLI's
//! `solve --missing` and the server's start-up both go through here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use shogi4_engine::{Material, MaterialIndex};

use crate::checkpoint::Checkpoints;
use crate::format::{SolveError, TableError, EXTENSION};
use crate::memory::{available_memory, refuse_too_large, solve_memory_needed};
use crate::progress::Progress;
use crate::solver::{solve_resumable, Solution};
use crate::table::{open_table, MappedTable, Table};

/// A directory of tables, one file per closed game, named after it.
#[derive(Clone, Debug)]
pub struct TableDir {
    dir: PathBuf,
}

/// Whether a closed game's table can be served.
#[derive(Debug)]
pub enum TableStatus {
    /// The file is there and passed the checks asked for.
    Present,
    /// There is no file.
    Missing,
    /// The file is there but unusable: unreadable, truncated, failing its checksum, or naming
    /// another closed game in its header.
    Damaged(TableError),
}

/// The usable tables of a directory, and the files that were refused.
pub struct Loaded {
    /// One table per closed game. A table is accepted only under its own name, so two files
    /// can never claim the same closed game.
    pub tables: BTreeMap<Material, MappedTable>,
    /// Files that failed validation, with the reason.
    pub rejected: Vec<(PathBuf, TableError)>,
}

/// Which of the named closed games to solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveMode {
    /// Every one, replacing existing tables.
    Replace,
    /// Only those whose table is missing or damaged (checksum included).
    Missing,
}

/// What [`TableDir::solve`] did for one closed game.
pub enum SolveEvent<'a> {
    /// A valid table was already there; nothing was done.
    Present(Material, &'a Path),
    /// The table was there but damaged; it is being solved again.
    Replacing(Material, &'a TableError),
    /// The game was solved and its table written.
    Solved(&'a Solution, &'a Path),
}

impl TableDir {
    /// The directory `dir` (it need not exist yet).
    pub fn new(dir: impl Into<PathBuf>) -> TableDir {
        TableDir { dir: dir.into() }
    }

    /// Where the table of `material` lives.
    pub fn path_of(&self, material: Material) -> PathBuf {
        self.dir.join(crate::format::file_name(material))
    }

    /// The table files (`*.s4tb`, not hidden temporary files), sorted by name.
    pub fn files(&self) -> Result<Vec<PathBuf>, TableError> {
        let entries = std::fs::read_dir(&self.dir).map_err(|e| TableError::Io(self.dir.clone(), e))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == EXTENSION))
            .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        files.sort();
        Ok(files)
    }

    /// Opens one table file: header checks always, the checksum when `verify`, and the file
    /// name against the header's material.
    pub fn open(path: &Path, verify: bool) -> Result<MappedTable, TableError> {
        let table = open_table(path)?;
        TableDir::check_name(path, &table)?;
        if verify {
            table.verify_checksum()?;
        }
        Ok(table)
    }

    /// Refuses a table whose file is not named after the closed game its header describes:
    /// so no file can hide another game's table or stand in for it.
    pub fn check_name<B: AsRef<[u8]>>(path: &Path, table: &Table<B>) -> Result<(), TableError> {
        let header = table.header().material;
        if path.file_stem().and_then(|s| s.to_str()) != Some(header.to_string().as_str()) {
            return Err(TableError::NameMismatch { path: path.to_path_buf(), header });
        }
        Ok(())
    }

    /// The status of one closed game's table.
    pub fn status(&self, material: Material, verify: bool) -> TableStatus {
        match TableDir::open(&self.path_of(material), verify) {
            Ok(_) => TableStatus::Present,
            Err(TableError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound => TableStatus::Missing,
            Err(error) => TableStatus::Damaged(error),
        }
    }

    /// Which of `materials` need solving: each one whose table is missing, or present but
    /// failing validation (with why), smallest first. The one rule of "missing" for the CLI's
    /// `solve --missing` and the server's background solve.
    pub fn unsolved(&self, materials: &[Material], verify: bool) -> Vec<(Material, Option<TableError>)> {
        let mut materials = materials.to_vec();
        materials.sort();
        materials.dedup();
        materials
            .into_iter()
            .filter_map(|material| match self.status(material, verify) {
                TableStatus::Present => None,
                TableStatus::Missing => Some((material, None)),
                TableStatus::Damaged(error) => Some((material, Some(error))),
            })
            .collect()
    }

    /// Maps every table file, keeping the usable ones.
    pub fn load(&self, verify: bool) -> Result<Loaded, TableError> {
        let mut loaded = Loaded { tables: BTreeMap::new(), rejected: Vec::new() };
        for path in self.files()? {
            match TableDir::open(&path, verify) {
                Ok(table) => {
                    loaded.tables.insert(table.header().material, table);
                }
                Err(error) => loaded.rejected.push((path, error)),
            }
        }
        Ok(loaded)
    }

    /// Solves `materials` (smallest first) into this directory, writing each table atomically,
    /// and reports each step to `on_event`. Before solving any, refuses the whole request if
    /// one game would need more memory than `max_memory` (default: what the system has
    /// available). With `checkpoint_every`, each solve keeps a checkpoint beside its table
    /// (at most that often, after a level), resumes from one left by an interrupted run, and
    /// deletes it once the table is written.
    pub fn solve(
        &self,
        materials: &[Material],
        mode: SolveMode,
        max_memory: Option<u64>,
        checkpoint_every: Option<std::time::Duration>,
        progress: &dyn Progress,
        mut on_event: impl FnMut(SolveEvent<'_>),
    ) -> Result<(), SolveError> {
        let mut materials = materials.to_vec();
        materials.sort();
        materials.dedup();
        let to_solve: Vec<Material> = match mode {
            SolveMode::Missing => {
                let unsolved = self.unsolved(&materials, true);
                for &material in &materials {
                    match unsolved.iter().find(|(m, _)| *m == material) {
                        None => on_event(SolveEvent::Present(material, &self.path_of(material))),
                        Some((_, Some(error))) => on_event(SolveEvent::Replacing(material, error)),
                        Some((_, None)) => {}
                    }
                }
                unsolved.into_iter().map(|(material, _)| material).collect()
            }
            _ => materials,
        };
        let limit = max_memory.or_else(available_memory);
        for &material in &to_solve {
            refuse_too_large(material, solve_memory_needed(MaterialIndex::new(material).slots()), limit)?;
        }
        for material in to_solve {
            let checkpoints = checkpoint_every.map(|every| Checkpoints::in_dir(&self.dir, material, every));
            if checkpoints.is_some() {
                std::fs::create_dir_all(&self.dir).map_err(|e| TableError::Io(self.dir.clone(), e))?;
            }
            let solution = solve_resumable(material, progress, checkpoints.as_ref())?;
            let path = solution.table.write_to_dir(&self.dir)?;
            if let Some(checkpoints) = &checkpoints {
                let _ = std::fs::remove_file(&checkpoints.path);
            }
            on_event(SolveEvent::Solved(&solution, &path));
        }
        Ok(())
    }
}
