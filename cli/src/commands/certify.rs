//! `shogi4 certify` and `shogi4 verify-proof`: a proven position's certificate, written by
//! the search, and checked by the rules alone (`shogi4-certificate`, which knows no search).

use std::path::{Path, PathBuf};

use shogi4_api::{Category, CertificateReport};
use shogi4_certificate::{verify, Certificate, Verdict};

use super::grouped;
use super::probe::SearchBudget;
use crate::error::{parse_position, CliError};

/// Assembles the certificate of `pos` from the proof store at `store_path`
/// (`shogi4_search::assemble`): the store's proven positions walked from the root, each leaf
/// it cannot spell out certified by a search within `budget`; checked before it is written.
/// With `leaves`, each leaf's certificate is kept in that folder as it is found (and those
/// already there seed the walk), and the leaves no search certified are listed in its
/// `open.txt`: a long assembly resumes, and what is left to prove is named. The leaves an
/// earlier pass listed there are not searched again unless a kept certificate proves them.
pub fn assemble(
    pos: &str,
    out: &Written,
    store_path: &Path,
    with: &[PathBuf],
    leaves: Option<&Path>,
    budget: &SearchBudget,
    json: bool,
) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    replaceable(&out.path)?;
    if !store_path.exists() {
        return Err(CliError::Usage(format!("no proof store at {}", store_path.display())));
    }
    let store = shogi4_proofs::ProofStore::open_read_only(store_path)?;
    // The root's value as the store proves it, or as its moves' stored values prove it.
    let children: Vec<_> = position.successors().map(|(_, child)| child).collect();
    let recalled = shogi4_search::Recall::recall(&store, &children);
    let from_moves = shogi4_search::Outcome::from_moves(
        recalled.iter().map(|o| o.unwrap_or(shogi4_search::Outcome::Unknown { no_result_within: 0 }).for_mover()),
    );
    let stored = shogi4_search::Recall::recall(&store, &[position]).pop().flatten();
    let root_wins =
        stored.and_then(|o| o.proven_win()).or_else(|| from_moves.and_then(|o| o.proven_win())).ok_or_else(|| {
            CliError::Certificate(format!("{}: the store proves no value of it or of its moves", position.to_sfen()))
        })?;
    // Each given certificate is checked by the rules before its tree is used.
    let mut files = Vec::new();
    for path in with.iter().map(PathBuf::as_path).chain(leaves) {
        files.extend(certificate_files(path));
    }
    let mut seeds = Vec::new();
    for file in &files {
        let (bytes, _) = read_checked(file)?;
        seeds.push(Certificate::parse(&bytes).map_err(|e| CliError::Certificate(format!("{}: {e}", file.display())))?);
    }
    // The leaves the last pass named open are not searched again (delete `open.txt` to
    // search them again, e.g. with a larger budget).
    let open_before = match leaves {
        Some(folder) => read_open_leaves(&folder.join(OPEN_LEAVES))?,
        None => Vec::new(),
    };
    let mut open_leaves = match leaves {
        Some(folder) => Some(
            std::fs::File::create(folder.join(OPEN_LEAVES))
                .map_err(|e| CliError::Certificate(format!("{}: {e}", folder.display())))?,
        ),
        None => None,
    };
    let mut search = budget.search()?;
    let started = std::time::Instant::now();
    // The walk recurses along the proof's lines, which may run to hundreds of plies.
    let (certificate, walked, searched, failed) = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(scope, || {
                let mut assembler = shogi4_search::assemble::Assembler::new(
                    &store,
                    &mut search.search,
                    budget.limits,
                    position,
                    root_wins,
                )
                .with_progress(|walked, searched, failed| {
                    eprintln!("shogi4: {walked} positions walked, {searched} leaves searched, {failed} not certified");
                })
                .with_leaves(|leaf, certificate| {
                    if let Err(e) = keep_leaf(leaves, open_leaves.as_mut(), leaf, certificate) {
                        eprintln!("shogi4: {e}");
                    }
                })
                .open_before(open_before);
                for seed in &seeds {
                    assembler.seed(seed);
                }
                assembler.assemble()
            })
            .expect("a thread")
            .join()
            .expect("the walk does not panic")
    });
    eprintln!(
        "shogi4: {walked} positions walked from the store, {searched} leaves searched ({failed} not certified), {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let certificate = certificate.ok_or_else(|| {
        CliError::Certificate(format!(
            "{}: the store's proof could not be spelt out ({failed} leaves not certified: those of the {searched} \
             searched that the budget did not settle, and those an earlier pass named open)",
            position.to_sfen()
        ))
    })?;
    write_checked(&certificate, out, json)
}

/// The file, in a folder of kept leaves, that names the leaves no search certified.
const OPEN_LEAVES: &str = "open.txt";

/// The leaves named in a folder's `open.txt` (none if there is no such file).
fn read_open_leaves(file: &Path) -> Result<Vec<shogi4_engine::Position>, CliError> {
    match std::fs::read_to_string(file) {
        Ok(text) => text.lines().filter(|line| !line.trim().is_empty()).map(parse_position).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(CliError::Certificate(format!("{}: {e}", file.display()))),
    }
}

/// `path` if a file, else the certificates (`*.s4cert`) in the folder `path`, in name order.
fn certificate_files(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        shogi4_answer::certificate_files(path)
    } else {
        vec![path.to_path_buf()]
    }
}

/// Keeps a leaf's certificate in `folder` (checked first; named by the leaf's key), or names
/// the leaf in `open` where no search certified it.
fn keep_leaf(
    folder: Option<&Path>,
    open: Option<&mut std::fs::File>,
    leaf: &shogi4_engine::Position,
    certificate: Option<&Certificate>,
) -> Result<(), String> {
    use std::io::Write;
    let Some(folder) = folder else { return Ok(()) };
    match (certificate, open) {
        (Some(certificate), _) => {
            let bytes = certificate.to_bytes();
            verify(&bytes).map_err(|e| format!("a leaf's certificate fails: {e}"))?;
            let file = folder.join(format!("{:032x}.s4cert", leaf.key()));
            shogi4_tablebase::write_atomically(&file, &[&bytes]).map_err(|e| format!("{}: {e}", file.display()))
        }
        (None, Some(open)) => writeln!(open, "{}", leaf.to_sfen()).map_err(|e| format!("{OPEN_LEAVES}: {e}")),
        (None, None) => Ok(()),
    }
}

/// Proves `pos` within `budget` and writes its certificate to `out`, checked before it is
/// reported.
pub fn certify(pos: &str, out: &Written, budget: &SearchBudget, json: bool) -> Result<(), CliError> {
    let position = parse_position(pos)?;
    // Refused before the search, not after it.
    replaceable(&out.path)?;
    let mut search = budget.search()?;
    let certificate = search.search.certify(&position, &budget.limits).ok_or_else(|| {
        CliError::Certificate(format!(
            "{}: no proof within the budget (nothing proven, or the proof tree could not be written out in time)",
            position.to_sfen()
        ))
    })?;
    write_checked(&certificate, out, json)
}

/// Where a certificate is written, and in which form.
pub struct Written {
    /// The file.
    pub path: PathBuf,
    /// The compact form (one byte a winner's position), else the keyed one.
    pub compact: bool,
}

/// Refuses `out` unless it is missing or a certificate already (either form): checked before
/// any search.
fn replaceable(out: &Path) -> Result<(), CliError> {
    shogi4_tablebase::replaceable(out, shogi4_certificate::MAGIC)
        .or_else(|_| shogi4_tablebase::replaceable(out, shogi4_certificate::COMPACT_MAGIC))
        .map_err(|e| CliError::Certificate(e.to_string()))
}

/// Writes `certificate` to `out` once the checker accepts it, and reports what it proves.
fn write_checked(certificate: &Certificate, out: &Written, json: bool) -> Result<(), CliError> {
    let bytes = if out.compact {
        certificate
            .to_compact_bytes()
            .map_err(|e| CliError::Certificate(format!("the certificate written fails: {e}")))?
    } else {
        certificate.to_bytes()
    };
    let verdict = verify(&bytes).map_err(|e| CliError::Certificate(format!("the certificate written fails: {e}")))?;
    shogi4_tablebase::write_atomically(&out.path, &[&bytes])
        .map_err(|e| CliError::Certificate(format!("{}: {e}", out.path.display())))?;
    report(&verdict, bytes.len() as u64, json);
    Ok(())
}

/// The bytes of the certificate in `file` and what the checker says of them; refused with the
/// checker's reason.
fn read_checked(file: &Path) -> Result<(Vec<u8>, Verdict), CliError> {
    let bytes =
        shogi4_certificate::read_file(file).map_err(|e| CliError::Certificate(format!("{}: {e}", file.display())))?;
    let verdict = verify(&bytes).map_err(|e| CliError::Certificate(format!("{}: refused: {e}", file.display())))?;
    Ok((bytes, verdict))
}

/// Checks the certificate in `file` and says what it proves; with `compact`, then writes the
/// same proof in the compact form there (and reports that file).
pub fn verify_proof(file: &Path, compact: Option<&Path>, json: bool) -> Result<(), CliError> {
    if let Some(path) = compact {
        replaceable(path)?;
    }
    let (bytes, verdict) = read_checked(file)?;
    match compact {
        None => report(&verdict, bytes.len() as u64, json),
        Some(path) => {
            let certificate = Certificate::parse(&bytes).map_err(|e| CliError::Certificate(e.to_string()))?;
            write_checked(&certificate, &Written { path: path.to_path_buf(), compact: true }, json)?;
        }
    }
    Ok(())
}

fn report(verdict: &Verdict, file_size: u64, json: bool) {
    let report = CertificateReport {
        sfen: verdict.root.to_sfen(),
        category: if verdict.root_wins { Category::Win } else { Category::Loss },
        dtw_at_most: verdict.bound,
        winner_positions: verdict.winner_positions,
        loser_positions: verdict.loser_positions,
        longest_line: verdict.longest_line,
        file_size,
    };
    if json {
        println!("{}", serde_json::to_string(&report).expect("serializable"));
        return;
    }
    let value = if verdict.root_wins { "wins" } else { "loses" };
    println!("position    {}", report.sfen);
    println!("proven      the side to move {value}, within {} plies", verdict.bound);
    println!(
        "proof tree  {} winner positions, {} loser positions, longest line {} plies",
        grouped(verdict.winner_positions),
        grouped(verdict.loser_positions),
        verdict.longest_line
    );
    println!("file        {} bytes", grouped(file_size));
}
