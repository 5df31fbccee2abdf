//! Proof certificates: a proven win (or loss) of a Shogi4 position as a file anyone can
//! check, and the checker, which trusts nothing but the rules (`shogi4-engine`): no search,
//! no store, no table.
//!
//! A certificate names its root position and whether its side to move wins or loses, and
//! holds one entry for every position of the proof where the winner is to move: the
//! winner's move there and a bound, "wins within `b` plies". [`verify`] checks, from the
//! root:
//!
//! - every winner's move is legal (an index into the position's legal moves);
//! - it captures the royal, or after it every legal reply of the loser leads to a position
//!   with an entry of its own, whose bound is at least 2 smaller (the two plies played);
//! - no reply of the loser captures the winner's royal.
//!
//! Bounds are natural numbers that fall along every line, so every line ends, at a royal
//! capture or at a loser without a move: the tree is finite and has no cycles, whatever
//! repetitions the game allows, and the root's value holds within the root's bound.
//!
//! The file (`.s4cert`), all integers little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `S4CERT1\n` |
//! | 2 | length `n` of the root's SFEN |
//! | `n` | the root's SFEN |
//! | 1 | 1 if the root's side to move wins, 0 if it loses |
//! | 8 | number of entries |
//! | 19 each | entries by ascending position key ([`Position::key`]): key (16), move index (1), bound (2) |
//!
//! **The compact form** (`S4CERT2\n`, for proofs of millions of positions) holds one byte a
//! winner's position, its move index, and neither keys nor bounds: the same header (its own
//! magic, the entry count), then the move indices in the order the checker first meets the
//! winner's positions on a depth-first walk from the root (the losing root's moves, and the
//! loser's replies, in generation order; a position met again takes no byte). The checker
//! reads one byte at each new winner's position, refuses a line that comes back to a position
//! still open on it (so the tree is finite), and computes each bound as the longest line
//! below it: 1 for the royal capture, else 2 more than the slowest reply's (3 where the
//! loser has no reply). Both forms prove the same things; [`Certificate::to_compact_bytes`]
//! writes the second from the first.
//!
//! ```
//! use shogi4_certificate::{verify, Certificate, Entry};
//! use shogi4_engine::Position;
//!
//! // The first player's carp takes the royal: a win in 1.
//! let root = Position::parse("k3/C3/4/3K b - 1").unwrap();
//! let capture = root.legal_moves().iter().position(|&mv| root.captures_royal(mv)).unwrap();
//! let mut certificate = Certificate::new(root, true);
//! certificate.insert(&root, Entry { move_index: capture as u8, bound: 1 });
//! let verdict = verify(&certificate.to_bytes()).unwrap();
//! assert_eq!((verdict.root_wins, verdict.bound, verdict.winner_positions), (true, 1, 1));
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use shogi4_engine::Position;

/// The first bytes of every certificate file in the keyed form.
pub const MAGIC: &[u8; 8] = b"S4CERT1\n";

/// The first bytes of every certificate file in the compact form.
pub const COMPACT_MAGIC: &[u8; 8] = b"S4CERT2\n";

/// Whether `bytes` begin as a certificate of either form.
pub fn is_certificate(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC) || bytes.starts_with(COMPACT_MAGIC)
}

/// One winner's position of a proof: its move and its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The winning move, as its index among the position's legal moves (in generation order).
    pub move_index: u8,
    /// The winner captures the royal within this many plies (odd).
    pub bound: u16,
}

/// A proof of a position's value: its root and the winner's positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Certificate {
    root: Position,
    root_wins: bool,
    entries: BTreeMap<u128, Entry>,
}

impl Certificate {
    /// An empty proof that `root`'s side to move wins (or loses).
    pub fn new(root: Position, root_wins: bool) -> Certificate {
        Certificate { root, root_wins, entries: BTreeMap::new() }
    }

    /// The position proven.
    pub fn root(&self) -> &Position {
        &self.root
    }

    /// Whether the root's side to move wins (else it loses).
    pub fn root_wins(&self) -> bool {
        self.root_wins
    }

    /// The entry of a winner's position, if any.
    pub fn get(&self, position: &Position) -> Option<Entry> {
        self.entries.get(&position.key()).copied()
    }

    /// Sets the entry of a winner's position.
    pub fn insert(&mut self, position: &Position, entry: Entry) {
        self.entries.insert(position.key(), entry);
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The same proof without the entries that no line from the root reaches.
    pub fn reachable_only(mut self) -> Certificate {
        let kept: BTreeMap<u128, Entry> =
            self.reachable().iter().filter_map(|p| Some((p.key(), *self.entries.get(&p.key())?))).collect();
        self.entries = kept;
        self
    }

    /// The winner's positions with an entry that some line from the root reaches, each once.
    pub fn reachable(&self) -> Vec<Position> {
        let mut seen = std::collections::HashSet::new();
        let mut reached = Vec::new();
        let mut stack = self.winner_positions_below_root();
        while let Some(position) = stack.pop() {
            let Some(&entry) = self.entries.get(&position.key()) else { continue };
            if !seen.insert(position.key()) {
                continue;
            }
            reached.push(position);
            if let Some(loser) = after(&position, entry) {
                stack.extend(loser.legal_moves().iter().map(|&mv| loser.play_unchecked(mv)));
            }
        }
        reached
    }

    /// The winner's positions the proof starts from: the root, or every position after the
    /// losing root's moves.
    fn winner_positions_below_root(&self) -> Vec<Position> {
        if self.root_wins {
            vec![self.root]
        } else {
            self.root
                .legal_moves()
                .iter()
                .filter(|&&mv| !self.root.captures_royal(mv))
                .map(|&mv| self.root.play_unchecked(mv))
                .collect()
        }
    }

    /// The file's bytes, in the keyed form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.header(MAGIC, self.entries.len() as u64, 19 * self.entries.len());
        for (key, entry) in &self.entries {
            bytes.extend_from_slice(&key.to_le_bytes());
            bytes.push(entry.move_index);
            bytes.extend_from_slice(&entry.bound.to_le_bytes());
        }
        bytes
    }

    /// The file's bytes in the compact form: the moves of the winner's positions that a line
    /// from the root reaches, in the checker's order (the module documentation). Refused where
    /// the entries are no proof (a winner's position without an entry, an illegal move, a
    /// line that comes back to a position still open on it).
    pub fn to_compact_bytes(&self) -> Result<Vec<u8>, CertificateError> {
        let mut moves = Vec::new();
        walk(self.root, self.root_wins, self.entries.len(), |position| {
            let entry = self.get(position).ok_or_else(|| CertificateError::Missing(position.to_sfen()))?;
            moves.push(entry.move_index);
            Ok(entry.move_index)
        })?;
        let mut bytes = self.header(COMPACT_MAGIC, moves.len() as u64, moves.len());
        bytes.extend_from_slice(&moves);
        Ok(bytes)
    }

    /// A file's header: the magic, the root, the winner flag and the entry count (with room for
    /// `body` bytes more).
    fn header(&self, magic: &[u8; 8], count: u64, body: usize) -> Vec<u8> {
        let sfen = self.root.to_sfen();
        let mut bytes = Vec::with_capacity(19 + sfen.len() + body);
        bytes.extend_from_slice(magic);
        bytes.extend_from_slice(&(sfen.len() as u16).to_le_bytes());
        bytes.extend_from_slice(sfen.as_bytes());
        bytes.push(u8::from(self.root_wins));
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes
    }

    /// Reads a certificate's bytes. The keyed form is read as it stands ([`verify`] checks the
    /// proof); the compact form holds no keys, so it is read by checking it.
    pub fn parse(bytes: &[u8]) -> Result<Certificate, CertificateError> {
        let (header, mut reader) = Header::read(bytes)?;
        let Header { root, root_wins, count, compact } = header;
        if compact {
            let entries =
                read_compact(header, reader.0)?.reached.into_iter().map(|(key, at)| (key.get(), at.entry)).collect();
            return Ok(Certificate { root, root_wins, entries });
        }
        let mut entries = BTreeMap::new();
        let mut previous = None;
        for _ in 0..count {
            let key = u128::from_le_bytes(reader.array()?);
            let [move_index, low, high] = reader.array()?;
            if previous.is_some_and(|p| p >= key) {
                return Err(CertificateError::Unsorted);
            }
            previous = Some(key);
            entries.insert(key, Entry { move_index, bound: u16::from_le_bytes([low, high]) });
        }
        if !reader.0.is_empty() {
            return Err(CertificateError::TrailingBytes);
        }
        Ok(Certificate { root, root_wins, entries })
    }
}

/// A certificate's header, either form.
#[derive(Clone, Copy)]
struct Header {
    root: Position,
    root_wins: bool,
    /// Entries that follow.
    count: u64,
    /// The compact form (one byte an entry), else the keyed one (19).
    compact: bool,
}

impl Header {
    /// The header at the start of `bytes`, and the rest.
    fn read(bytes: &[u8]) -> Result<(Header, Reader<'_>), CertificateError> {
        let mut reader = Reader(bytes);
        let compact = match reader.take(8)? {
            magic if magic == MAGIC => false,
            magic if magic == COMPACT_MAGIC => true,
            _ => return Err(CertificateError::NotACertificate),
        };
        let length = u16::from_le_bytes(reader.array()?) as usize;
        let sfen = std::str::from_utf8(reader.take(length)?).map_err(|_| CertificateError::BadRoot)?;
        let root = Position::parse(sfen).map_err(|_| CertificateError::BadRoot)?;
        let root_wins = match reader.take(1)?[0] {
            0 => false,
            1 => true,
            _ => return Err(CertificateError::BadRoot),
        };
        let count = u64::from_le_bytes(reader.array()?);
        Ok((Header { root, root_wins, count, compact }, reader))
    }
}

/// The unread rest of a certificate's bytes.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CertificateError> {
        if self.0.len() < n {
            return Err(CertificateError::Truncated);
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CertificateError> {
        Ok(self.take(N)?.try_into().expect("N bytes taken"))
    }
}

/// The position after the winner's move of `entry`, unless that move takes the royal (or is
/// no legal move).
fn after(position: &Position, entry: Entry) -> Option<Position> {
    let moves = position.legal_moves();
    let &mv = moves.get(usize::from(entry.move_index))?;
    (!position.captures_royal(mv)).then(|| position.play_unchecked(mv))
}

/// What a certificate proves, once checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The position proven.
    pub root: Position,
    /// Whether its side to move wins (else it loses).
    pub root_wins: bool,
    /// The result comes within this many plies (the root's bound; for a losing root one more
    /// than its slowest move's).
    pub bound: u32,
    /// Winner's positions in the proof (the entries reached from the root).
    pub winner_positions: u64,
    /// Loser's positions in the proof (after each winner's move that does not take the royal,
    /// and a losing root).
    pub loser_positions: u64,
    /// The longest line of the proof, in plies, to the royal capture (or the loser without a
    /// move).
    pub longest_line: u32,
    /// Entries that no line from the root reaches (ignored).
    pub unused_entries: u64,
}

/// Why a certificate is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CertificateError {
    /// The file does not start with [`MAGIC`].
    NotACertificate,
    /// The file ends inside a field.
    Truncated,
    /// Bytes follow the last entry.
    TrailingBytes,
    /// The root's SFEN or its winner flag is malformed.
    BadRoot,
    /// Entries are not in strictly ascending key order.
    Unsorted,
    /// A winner's position of the proof has no entry.
    Missing(String),
    /// An entry's move index is not a legal move of its position.
    IllegalMove(String),
    /// A bound is even, or too small for the move (a win that does not take the royal at once
    /// needs at least 3).
    BadBound(String),
    /// A winner's position after the loser's reply has a bound not at least 2 below its
    /// grandparent's.
    BoundNotDecreasing(String),
    /// The loser can take the winner's royal: the winner's move exposed it.
    LoserCaptures(String),
    /// A line of a compact certificate comes back to a winner's position still open on it.
    Cycle(String),
    /// A compact certificate's line is longer than a bound can say (65,535 plies).
    TooDeep(String),
}

impl fmt::Display for CertificateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertificateError::NotACertificate => write!(f, "not a certificate (no S4CERT1 or S4CERT2 magic)"),
            CertificateError::Truncated => write!(f, "the file is truncated"),
            CertificateError::TrailingBytes => write!(f, "bytes follow the last entry"),
            CertificateError::BadRoot => write!(f, "the root position or its winner flag is malformed"),
            CertificateError::Unsorted => write!(f, "entries are not in ascending key order"),
            CertificateError::Missing(sfen) => write!(f, "no entry for the winner's position {sfen}"),
            CertificateError::IllegalMove(sfen) => write!(f, "the entry of {sfen} names no legal move"),
            CertificateError::BadBound(sfen) => write!(f, "the bound of {sfen} is impossible for its move"),
            CertificateError::BoundNotDecreasing(sfen) => {
                write!(f, "the bound of {sfen} is not below its grandparent's by 2")
            }
            CertificateError::LoserCaptures(sfen) => {
                write!(f, "after the winner's move the loser takes the royal, in {sfen}")
            }
            CertificateError::Cycle(sfen) => write!(f, "a line comes back to {sfen}, still open on it"),
            CertificateError::TooDeep(sfen) => write!(f, "the line below {sfen} is longer than a bound can say"),
        }
    }
}

impl std::error::Error for CertificateError {}

/// The most bytes a certificate's header takes: the magic, the SFEN's length and the SFEN,
/// the winner flag and the entry count.
const MAX_HEADER: u64 = 8 + 2 + u16::MAX as u64 + 1 + 8;

/// The size a certificate beginning with `head` declares for itself (its header, then 19
/// bytes an entry, or 1 in the compact form), once `head` holds the whole header; why not
/// otherwise.
pub fn declared_size(head: &[u8]) -> Result<u64, CertificateError> {
    let start = &head[..head.len().min(MAGIC.len())];
    let entry_size = if MAGIC.starts_with(start) {
        19
    } else if COMPACT_MAGIC.starts_with(start) {
        1
    } else {
        return Err(CertificateError::NotACertificate);
    };
    let mut reader = Reader(head);
    reader.take(MAGIC.len())?;
    let length = usize::from(u16::from_le_bytes(reader.array()?));
    reader.take(length + 1)?;
    let count = u64::from_le_bytes(reader.array()?);
    let header = (8 + 2 + length + 1 + 8) as u64;
    count.checked_mul(entry_size).and_then(|entries| entries.checked_add(header)).ok_or(CertificateError::TrailingBytes)
}

/// A certificate file's bytes, read whole only once it shows itself a certificate of the size
/// its header declares: a regular file (a device, a FIFO or a directory is refused before it
/// is opened), its magic, and its size matching its entry count. Anything else costs its
/// header's read, not its size in memory. The bytes are then for [`verify`] to check.
pub fn read_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    if !std::fs::metadata(path)?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut bytes = Vec::new();
    (&mut file).take(size.min(MAX_HEADER)).read_to_end(&mut bytes)?;
    let declared = declared_size(&bytes).map_err(|e| Error::new(ErrorKind::InvalidData, e.to_string()))?;
    if declared != size {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("its size ({size} bytes) is not the {declared} its header declares"),
        ));
    }
    bytes.reserve_exact(usize::try_from(size).map_err(|_| Error::new(ErrorKind::InvalidData, "too large"))?);
    file.take(size - bytes.len() as u64).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Checks a certificate's bytes by the rules alone: see the module documentation.
pub fn verify(bytes: &[u8]) -> Result<Verdict, CertificateError> {
    check(bytes).map(|(verdict, _)| verdict)
}

/// The winner's positions a check reached from the root, by key. A position is rebuilt from
/// its key where it is needed ([`position_of`]): a few bytes a position instead of a whole
/// board, for proofs of millions of positions.
type Reached = HashMap<Key, Reach>;

/// A [`Position::key`] held as two words: aligned to 8 bytes rather than a `u128`'s 16, a map
/// entry takes 24 bytes rather than 32 (a 22-million-position proof: 0.8 GB rather than 1.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key([u64; 2]);

impl Key {
    fn of(position: &Position) -> Key {
        Key::from(position.key())
    }

    fn get(self) -> u128 {
        u128::from(self.0[0]) << 64 | u128::from(self.0[1])
    }
}

impl From<u128> for Key {
    fn from(key: u128) -> Key {
        Key([(key >> 64) as u64, key as u64])
    }
}

/// A winner's position reached: its entry, and its longest line (plies to the royal capture
/// along the slowest line the proof allows below it).
#[derive(Clone, Copy)]
struct Reach {
    entry: Entry,
    line: u32,
}

/// The position of a key that [`Position::key`] wrote.
fn position_of(key: u128) -> Position {
    Position::from_key(key).expect("a key written by Position::key")
}

/// [`verify`], with every winner's position reached from the root and its entry.
fn check(bytes: &[u8]) -> Result<(Verdict, Reached), CertificateError> {
    let (header, rest) = Header::read(bytes)?;
    if header.compact {
        return check_compact(header, rest.0);
    }
    let certificate = Certificate::parse(bytes)?;
    let entries = &certificate.entries;
    // Every winner's position reached, with its entry, in the order first met.
    let mut reached: Reached = HashMap::new();
    let mut stack = Vec::new();
    let mut loser_positions = 0u64;
    let root_bound = if certificate.root_wins {
        stack.push((certificate.root, u32::MAX));
        None
    } else {
        // A losing root is a loser's position with no bound above it but its own, which is
        // one more than the largest of its moves' bounds (checked below as each is reached).
        let root = certificate.root;
        loser_positions += 1;
        let mut slowest = None::<u32>;
        for &mv in root.legal_moves().iter() {
            if root.captures_royal(mv) {
                return Err(CertificateError::LoserCaptures(root.to_sfen()));
            }
            let winner = root.play_unchecked(mv);
            let entry = entries.get(&winner.key()).ok_or_else(|| CertificateError::Missing(winner.to_sfen()))?;
            slowest = Some(slowest.unwrap_or(0).max(u32::from(entry.bound)));
            stack.push((winner, u32::MAX));
        }
        // No move at all: lost in 0.
        Some(slowest.map_or(0, |slowest| slowest + 1))
    };
    // `limit`: the largest bound this position may have (2 below its grandparent's).
    while let Some((position, limit)) = stack.pop() {
        let key = position.key();
        let entry = *entries.get(&key).ok_or_else(|| CertificateError::Missing(position.to_sfen()))?;
        let bound = u32::from(entry.bound);
        if bound > limit {
            return Err(CertificateError::BoundNotDecreasing(position.to_sfen()));
        }
        if reached.insert(Key::from(key), Reach { entry, line: 0 }).is_some() {
            continue;
        }
        if bound % 2 == 0 {
            return Err(CertificateError::BadBound(position.to_sfen()));
        }
        let moves = position.legal_moves();
        let &mv = moves
            .get(usize::from(entry.move_index))
            .ok_or_else(|| CertificateError::IllegalMove(position.to_sfen()))?;
        if position.captures_royal(mv) {
            continue;
        }
        if bound < 3 {
            return Err(CertificateError::BadBound(position.to_sfen()));
        }
        let loser = position.play_unchecked(mv);
        loser_positions += 1;
        for &reply in loser.legal_moves().iter() {
            if loser.captures_royal(reply) {
                return Err(CertificateError::LoserCaptures(loser.to_sfen()));
            }
            stack.push((loser.play_unchecked(reply), bound - 2));
        }
    }
    // A position met again with a smaller limit was checked against it above (the bound
    // test comes before the "seen" test), so every edge respects the bounds.
    measure_lines(&mut reached);
    let longest_line = longest_line(certificate.root, certificate.root_wins, &reached);
    let bound = match root_bound {
        Some(bound) => bound,
        None => u32::from(entries[&certificate.root.key()].bound),
    };
    let verdict = Verdict {
        root: certificate.root,
        root_wins: certificate.root_wins,
        bound,
        winner_positions: reached.len() as u64,
        loser_positions,
        longest_line,
        unused_entries: (entries.len() - reached.len()) as u64,
    };
    Ok((verdict, reached))
}

/// Checks a compact certificate's moves (`body`, after its header), with its verdict.
fn check_compact(header: Header, body: &[u8]) -> Result<(Verdict, Reached), CertificateError> {
    let walked = read_compact(header, body)?;
    let verdict = Verdict {
        root: header.root,
        root_wins: header.root_wins,
        bound: walked.root_bound,
        winner_positions: walked.reached.len() as u64,
        loser_positions: walked.loser_positions,
        longest_line: longest_line(header.root, header.root_wins, &walked.reached),
        unused_entries: 0,
    };
    Ok((verdict, walked.reached))
}

/// The compact form's walk over `body` (the moves after the header), every byte read once:
/// what [`Certificate::parse`] needs, without the verdict's longest line.
fn read_compact(header: Header, body: &[u8]) -> Result<Walked, CertificateError> {
    if body.len() as u64 != header.count {
        return Err(if (body.len() as u64) < header.count {
            CertificateError::Truncated
        } else {
            CertificateError::TrailingBytes
        });
    }
    let mut rest = body;
    // One byte a winner's position, and the length was checked above: the map is made once,
    // at its full size, not doubled (and copied) on the way.
    let walked = walk(header.root, header.root_wins, body.len(), |_| {
        let (&move_index, tail) = rest.split_first().ok_or(CertificateError::Truncated)?;
        rest = tail;
        Ok(move_index)
    })?;
    if !rest.is_empty() {
        return Err(CertificateError::TrailingBytes);
    }
    Ok(walked)
}

/// What the compact form's walk found: every winner's position with its move and computed
/// bound, the loser's positions counted, and the root's bound.
struct Walked {
    reached: Reached,
    loser_positions: u64,
    root_bound: u32,
}

/// The compact form's walk (the module documentation): depth first from the root, asking
/// `next_move` for the move of each winner's position the first time it is met, and giving
/// each its bound once every reply below it is settled. `capacity`: the winner's positions
/// expected (at most).
fn walk(
    root: Position,
    root_wins: bool,
    capacity: usize,
    next_move: impl FnMut(&Position) -> Result<u8, CertificateError>,
) -> Result<Walked, CertificateError> {
    let mut walker = Walker {
        next_move,
        reached: HashMap::with_capacity(capacity),
        open: HashSet::new(),
        stack: Vec::new(),
        losers: 0,
    };
    let root_bound = if root_wins {
        walker.bound_of(root)?
    } else {
        // A losing root: one more than its slowest move's bound (0 with no move at all).
        walker.losers += 1;
        let mut slowest = None::<u32>;
        for &mv in root.legal_moves().iter() {
            if root.captures_royal(mv) {
                return Err(CertificateError::LoserCaptures(root.to_sfen()));
            }
            let bound = walker.bound_of(root.play_unchecked(mv))?;
            slowest = Some(slowest.unwrap_or(0).max(bound));
        }
        slowest.map_or(0, |slowest| slowest + 1)
    };
    Ok(Walked { reached: walker.reached, loser_positions: walker.losers, root_bound })
}

/// A winner's position the walk has entered and not yet settled: its move, the positions
/// after the loser's replies, how many of them are walked, and the slowest bound among them.
struct Open {
    winner: Position,
    move_index: u8,
    replies: Vec<Position>,
    next: usize,
    slowest: u32,
    /// The longest line below any reply walked so far.
    longest: u32,
}

/// The walk's state: its own stack (lines may be long), so that no input can overflow the
/// thread's.
struct Walker<F> {
    next_move: F,
    reached: Reached,
    /// Keys of the positions on `stack`: met again, they close a cycle.
    open: HashSet<Key>,
    stack: Vec<Open>,
    losers: u64,
}

impl<F: FnMut(&Position) -> Result<u8, CertificateError>> Walker<F> {
    /// The bound of the winner's position `start`, walking what is below it.
    fn bound_of(&mut self, start: Position) -> Result<u32, CertificateError> {
        if let Some((bound, _)) = self.enter(start)? {
            return Ok(bound);
        }
        loop {
            let top = self.stack.last_mut().expect("an open position");
            if let Some(&reply) = top.replies.get(top.next) {
                top.next += 1;
                if let Some((bound, line)) = self.enter(reply)? {
                    let top = self.stack.last_mut().expect("an open position");
                    top.slowest = top.slowest.max(bound);
                    top.longest = top.longest.max(line);
                }
                continue;
            }
            let done = self.stack.pop().expect("an open position");
            let bound = done.slowest + 2;
            let entry = Entry {
                move_index: done.move_index,
                bound: u16::try_from(bound).map_err(|_| CertificateError::TooDeep(done.winner.to_sfen()))?,
            };
            let key = Key::of(&done.winner);
            self.open.remove(&key);
            let line = line_through(done.replies.len(), done.longest);
            self.reached.insert(key, Reach { entry, line });
            match self.stack.last_mut() {
                Some(parent) => {
                    parent.slowest = parent.slowest.max(bound);
                    parent.longest = parent.longest.max(line);
                }
                None => return Ok(bound),
            }
        }
    }

    /// Meets a winner's position: its bound and longest line if it is settled (already, or by
    /// a royal capture), else opened on the stack.
    fn enter(&mut self, position: Position) -> Result<Option<(u32, u32)>, CertificateError> {
        let key = Key::of(&position);
        if let Some(at) = self.reached.get(&key) {
            return Ok(Some((u32::from(at.entry.bound), at.line)));
        }
        if self.open.contains(&key) {
            return Err(CertificateError::Cycle(position.to_sfen()));
        }
        let move_index = (self.next_move)(&position)?;
        let moves = position.legal_moves();
        let &mv =
            moves.get(usize::from(move_index)).ok_or_else(|| CertificateError::IllegalMove(position.to_sfen()))?;
        if position.captures_royal(mv) {
            self.reached.insert(key, Reach { entry: Entry { move_index, bound: 1 }, line: 1 });
            return Ok(Some((1, 1)));
        }
        let loser = position.play_unchecked(mv);
        self.losers += 1;
        let mut replies = Vec::new();
        for &reply in loser.legal_moves().iter() {
            if loser.captures_royal(reply) {
                return Err(CertificateError::LoserCaptures(loser.to_sfen()));
            }
            replies.push(loser.play_unchecked(reply));
        }
        self.open.insert(key);
        // With no reply, the loser has lost at its turn: a bound of 3, as the keyed form asks.
        self.stack.push(Open { winner: position, move_index, replies, next: 0, slowest: 1, longest: 0 });
        Ok(None)
    }
}

/// A position a checked certificate proves, with its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proven {
    /// The position.
    pub position: Position,
    /// Whether its side to move wins (else it loses).
    pub wins: bool,
    /// The result comes within this many plies.
    pub within: u32,
}

/// Every position a certificate proves, once [`verify`] accepts it: each winner's position
/// reached from the root (a win within its bound), the position after its winning move (a
/// loss within one ply less, since every reply leads to a win within two less), and a losing
/// root. Made one at a time, so that a proof of millions of positions is read without a board
/// apiece in memory.
pub fn proven_positions(bytes: &[u8]) -> Result<ProvenPositions, CertificateError> {
    let (verdict, reached) = check(bytes)?;
    let root = (!verdict.root_wins).then_some(Proven { position: verdict.root, wins: false, within: verdict.bound });
    Ok(ProvenPositions { verdict, next: root, reached: reached.into_iter() })
}

/// The positions a checked certificate proves ([`proven_positions`]).
pub struct ProvenPositions {
    /// What the check found, as [`verify`] gives it.
    verdict: Verdict,
    /// The position to give next, before the next entry's.
    next: Option<Proven>,
    reached: std::collections::hash_map::IntoIter<Key, Reach>,
}

impl ProvenPositions {
    /// What the check found: the same verdict [`verify`] gives, without checking again.
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }
}

impl Iterator for ProvenPositions {
    type Item = Proven;

    fn next(&mut self) -> Option<Proven> {
        if let Some(proven) = self.next.take() {
            return Some(proven);
        }
        let (key, Reach { entry, .. }) = self.reached.next()?;
        let position = position_of(key.get());
        let bound = u32::from(entry.bound);
        self.next = after(&position, entry).map(|loser| Proven { position: loser, wins: false, within: bound - 1 });
        Some(Proven { position, wins: true, within: bound })
    }
}

/// Measures the longest line below each of a keyed certificate's winner's positions, in
/// ascending bound order, so that every position's successors (whose bounds are smaller) are
/// measured before it. (The compact form's walk measures them as it goes.)
fn measure_lines(reached: &mut Reached) {
    let mut order: Vec<(u16, u128)> = reached.iter().map(|(&key, at)| (at.entry.bound, key.get())).collect();
    order.sort_unstable();
    for (_, key) in order {
        let key = Key::from(key);
        let line = match after(&position_of(key.get()), reached[&key].entry) {
            None => 1,
            Some(loser) => {
                let replies = loser.legal_moves();
                let longest = replies.iter().map(|&reply| reached[&Key::of(&loser.play_unchecked(reply))].line).max();
                line_through(replies.len(), longest.unwrap_or(0))
            }
        };
        reached.get_mut(&key).expect("a reached position").line = line;
    }
}

/// The longest line of a winner's position whose move leaves the loser `replies` replies, the
/// longest line below them being `longest`: the move and a reply, then that line; one ply
/// where the loser has no reply.
fn line_through(replies: usize, longest: u32) -> u32 {
    if replies == 0 {
        1
    } else {
        longest + 2
    }
}

/// The longest line of a checked proof, from its measured positions.
fn longest_line(root: Position, root_wins: bool, reached: &Reached) -> u32 {
    if root_wins {
        reached[&Key::of(&root)].line
    } else {
        1 + root.legal_moves().iter().map(|&mv| reached[&Key::of(&root.play_unchecked(mv))].line).max().unwrap_or(0)
            - u32::from(root.legal_moves().is_empty())
    }
}
