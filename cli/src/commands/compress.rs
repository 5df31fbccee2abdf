//! `shogi4 compress`: tables rewritten in the compressed format (version 4), with the same
//! values (or, with `--plain`, back in version 1); and the same step after
//! `shogi4 solve --compress`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use shogi4_api::cli::CompressReport;
use shogi4_tablebase::{file_name, open_table, write_atomically, TableDir, TableError};

use super::grouped;
use crate::error::CliError;
use crate::progress::Bar;

/// What a table is rewritten as.
#[derive(Clone, Copy, Debug)]
pub enum Form {
    /// Version 1, one byte per slot.
    Plain,
    /// Version 4, with this many parts per block.
    Compressed {
        /// Parts per block.
        parts: usize,
    },
}

impl Form {
    /// The compressed form that `shogi4 solve --compress` writes.
    pub const DEFAULT: Form = Form::Compressed { parts: shogi4_tablebase::compressed::DEFAULT_PARTS };
}

/// Compresses every table of `paths` (files or directories) into `out`.
pub fn run(paths: &[PathBuf], out: &Path, form: Form, json: bool) -> Result<(), CliError> {
    let files = super::table_files(paths)?;
    std::fs::create_dir_all(out).map_err(|e| CliError::Table(TableError::Io(out.to_path_buf(), e)))?;
    // A table's source is never its own output: a crash or a bug would leave no table at all.
    let same_dir = |file: &PathBuf| {
        let dir = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        matches!((dir.canonicalize(), out.canonicalize()), (Ok(a), Ok(b)) if a == b)
    };
    if let Some(file) = files.iter().find(|f| same_dir(f)) {
        return Err(CliError::Usage(format!(
            "{} would be rewritten in place: give --out another directory than the tables'",
            file.display()
        )));
    }
    let (mut before, mut after, mut positions) = (0u64, 0u64, 0u64);
    for file in &files {
        let (from, to, n) = compress_file(file, out, form, json)?;
        (before, after, positions) = (before + from, after + to, positions + n);
    }
    if !json && files.len() > 1 {
        println!(
            "{} tables: {} → {} bytes, {:.4} byte per position",
            files.len(),
            grouped(before),
            grouped(after),
            after as f64 / positions.max(1) as f64
        );
    }
    Ok(())
}

/// Rewrites one table file into `out` in `form`, checking the result against the source;
/// returns the sizes before and after, and the positions.
pub fn compress_file(file: &Path, out: &Path, form: Form, json: bool) -> Result<(u64, u64, u64), CliError> {
    let started = Instant::now();
    let table = open_table(file)?;
    TableDir::check_name(file, &table)?;
    let material = table.header().material;
    // Either conversion reads its result back before handing it over: its checksums, its
    // blocks, and every value against the source's.
    let bytes = match form {
        Form::Plain => table.to_plain()?,
        Form::Compressed { parts } => table.to_compressed_in_parts(parts, &Bar::new())?,
    };
    let compressed = shogi4_tablebase::Table::new(bytes)?;
    let seconds = started.elapsed().as_secs_f64();
    let path = out.join(file_name(material));
    write_atomically(&path, &[compressed.file_bytes()])
        .map_err(|e| CliError::Table(TableError::Io(path.clone(), e)))?;
    let (from, to, positions) = (table.size(), compressed.size(), table.header().statistics.positions);
    let per_position = to as f64 / positions.max(1) as f64;
    if json {
        super::print_json(&CompressReport {
            material: material.to_string(),
            file: path.display().to_string(),
            bytes_before: from,
            bytes_after: to,
            bytes_per_position: per_position,
            seconds,
        });
    } else {
        println!(
            "{material}: {} → {} bytes ({:.1}×), {per_position:.4} byte per position, {seconds:.2} s → {}",
            grouped(from),
            grouped(to),
            from as f64 / to.max(1) as f64,
            path.display()
        );
    }
    Ok((from, to, positions))
}
