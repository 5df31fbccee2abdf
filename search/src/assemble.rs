//! Assembling a certificate by walking what is known to be proven: for a proof too large for
//! one search (a game solved by many searches over hours, whose results are kept in a proof
//! store), and for spelling out one search's proof from its transposition table. The walk is
//! one; what it reads is a [`Source`]: a record of proven positions ([`Assembler::new`]), or
//! a search's table (`certify_by_walk`). Each position the source proves but cannot spell out
//! (a leaf one search settled, a table entry whose tree was let go) is certified by the
//! source's own fallback, a search, whose tree is merged in.
//!
//! At each of the winner's positions the walk tries the moves whose positions the source
//! proves lost, the quickest first, and keeps the first one whose tree it can spell out; at
//! each of the loser's, every reply. An entry's bound is the height of the tree written below
//! it (1 for a royal capture), so bounds fall along every line whatever the source's own
//! distance bounds say; where two trees reach the same position, the entry with the smaller
//! bound is kept, which leaves every tree above it valid. A line that comes back to a
//! position on the current path is not followed (a proof is a finite tree).
//!
//! Nothing here is trusted: the result is checked by [`shogi4_certificate::verify`], which
//! knows only the rules. A source that is wrong yields no certificate, never a false one.

use std::collections::HashSet;
use std::time::Instant;

use shogi4_certificate::{Certificate, Entry};
use shogi4_engine::Position;

use crate::prover::Prover;
use crate::spell::certify_winner;
use crate::table::MAX_DEPTH;
use crate::{Limits, Outcome, Recall, Search};

/// What a walk reads: which positions are proven lost, and a way to certify a winner's
/// position it cannot spell out.
pub trait Source {
    /// For each of `positions`, the number of plies within which its side to move is proven
    /// to lose, if it is.
    fn lost_within(&mut self, positions: &[Position]) -> Vec<Option<u32>>;
    /// A certificate whose tree holds `position` (a winner's), found some other way: a search.
    fn certify(&mut self, position: &Position) -> Option<Certificate>;
}

/// A record of proven positions (the proof store), with a search for its leaves.
struct Recorded<'a> {
    known: &'a dyn Recall,
    search: &'a mut Search,
    leaf: Limits,
}

impl Source for Recorded<'_> {
    fn lost_within(&mut self, positions: &[Position]) -> Vec<Option<u32>> {
        self.known
            .recall(positions)
            .into_iter()
            .map(|outcome| {
                let outcome = outcome?;
                (outcome.proven_win() == Some(false)).then(|| outcome.distance_bounds().map_or(u32::MAX, |b| b.1))
            })
            .collect()
    }

    fn certify(&mut self, position: &Position) -> Option<Certificate> {
        // What the record knows of the leaf's moves helps the search find its way; the tree is
        // still spelt out by the search, down to royal captures.
        self.search.recall(position, self.known);
        certify_leaf(self.search, position, &self.leaf)
    }
}

/// The table a leaf's last try gets to itself.
const FRESH_TABLE_BYTES: usize = 256 << 20;

/// A leaf's certificate, by [`Search::certify`] within `leaf`; else by
/// `certify_by_walk` with four times that, on the table the first try left; else by
/// `certify` with sixteen times that, on a fresh table (the same plan). The later tries are
/// for a table shared by many searches (a run's), whose entries let a position's value be
/// proven quickly but whose tree, bounds falling along every line, can be hard to spell out
/// from them (the runs: `docs/measurements.md`, "Certified runs").
pub fn certify_leaf(search: &mut Search, position: &Position, leaf: &Limits) -> Option<Certificate> {
    let times = |k: u32| Limits {
        max_nodes: leaf.max_nodes.saturating_mul(u64::from(k)),
        time: leaf.time.map(|t| t.saturating_mul(k)),
        ..*leaf
    };
    search
        .certify(position, leaf)
        .or_else(|| certify_by_walk(search, position, &times(4)))
        .or_else(|| Search::new(FRESH_TABLE_BYTES).with_plan(search.plan.clone()).certify(position, &times(16)))
}

/// [`Search::certify`], the tree found another way: walked from what the table proves
/// ([`Assembler`], bounds the heights of the trees written), and where the table
/// has let part of it go, that part proven again as `certify` does. For a table shared by
/// many searches, whose entries' bounds need not fall along the lines of one tree.
fn certify_by_walk(search: &mut Search, position: &Position, limits: &Limits) -> Option<Certificate> {
    let started = Instant::now();
    let (mut prover, plan) = search.prover(limits.max_nodes, limits.time.map(|t| started + t));
    let win = prover.establish(position, limits.max_depth, plan).proven_win()?;
    let (certificate, ..) = Assembler::over(Tabled { prover: &mut prover }, *position, win).assemble();
    certificate
}

/// A search's table as the source of a certificate's walk.
struct Tabled<'p, 't> {
    prover: &'p mut Prover<'t>,
}

impl Source for Tabled<'_, '_> {
    fn lost_within(&mut self, positions: &[Position]) -> Vec<Option<u32>> {
        positions.iter().map(|position| self.prover.proven_loss_within(position)).collect()
    }

    fn certify(&mut self, position: &Position) -> Option<Certificate> {
        let within = self.prover.proven_win_within(position).unwrap_or(MAX_DEPTH - 1);
        let mut certificate = Certificate::new(*position, true);
        certify_winner(self.prover, position, within, &mut certificate)?;
        Some(certificate)
    }
}

/// What is told of each leaf searched: the leaf, and its certificate if one was found.
type LeafReport<'a> = dyn FnMut(&Position, Option<&Certificate>) + 'a;

/// How a certificate is assembled, and what it took.
pub struct Assembler<'a> {
    source: Box<dyn Source + 'a>,
    certificate: Certificate,
    root_wins: bool,
    /// Positions on the current line.
    path: HashSet<u128>,
    /// Leaves certified by the source's fallback (or tried).
    pub searched: u64,
    /// Positions walked from the record.
    pub walked: u64,
    /// Told (walked, searched, failed) every 20 leaf searches.
    progress: Box<dyn FnMut(u64, u64, u64) + 'a>,
    /// Told each leaf searched and its certificate, if one was found.
    leaves: Box<LeafReport<'a>>,
    /// Whether the walk keeps to one proof and lists its open leaves (see
    /// [`Assembler::with_leaves`]).
    frontier: bool,
    /// Leaves no search could certify within the budget, not searched again where the walk
    /// meets them again.
    uncertified: HashSet<u128>,
    /// Leaves an earlier pass could not certify: not searched, only named again (see
    /// [`Assembler::open_before`]).
    open_before: HashSet<u128>,
    /// Times the walk met a leaf it could not certify (again or for the first time).
    setbacks: u64,
}

impl<'a> Assembler<'a> {
    /// An assembler reading the record `known`, certifying leaves with `search` within `leaf`
    /// each, and with more where that fails ([`certify_leaf`]).
    pub fn new(known: &'a dyn Recall, search: &'a mut Search, leaf: Limits, root: Position, root_wins: bool) -> Self {
        Assembler::over(Recorded { known, search, leaf }, root, root_wins)
    }

    /// An assembler reading `source`.
    pub fn over(source: impl Source + 'a, root: Position, root_wins: bool) -> Self {
        Assembler {
            source: Box::new(source),
            certificate: Certificate::new(root, root_wins),
            root_wins,
            path: HashSet::new(),
            searched: 0,
            walked: 0,
            progress: Box::new(|_, _, _| {}),
            leaves: Box::new(|_, _| {}),
            frontier: false,
            uncertified: HashSet::new(),
            open_before: HashSet::new(),
            setbacks: 0,
        }
    }

    /// Takes in the proof trees of `certificate` (checked already): their positions need no
    /// walk and no search.
    pub fn seed(&mut self, certificate: &Certificate) {
        for reached in certificate.reachable() {
            if let Some(entry) = certificate.get(&reached) {
                self.keep(&reached, entry);
            }
        }
    }

    /// Calls `progress` with (walked, searched, failed) every 20 leaf searches.
    pub fn with_progress(mut self, progress: impl FnMut(u64, u64, u64) + 'a) -> Self {
        self.progress = Box::new(progress);
        self
    }

    /// Calls `leaves` with each leaf searched and its certificate, or `None` where no search
    /// certified it: what a later assembly may be seeded with, and what is left to prove.
    ///
    /// The walk then keeps to one proof and names its whole frontier: at a loser's position
    /// every reply is walked even after one has failed, and a winner's position whose move
    /// failed because a leaf below could not be certified neither tries another move nor is
    /// searched itself (a search there, above a leaf that failed, would be harder still). So
    /// the leaves named as failed are those of one proof, each worth proving on its own before
    /// the next pass; a move that fails only by coming back to the current line still gives
    /// way to the next.
    pub fn with_leaves(mut self, leaves: impl FnMut(&Position, Option<&Certificate>) + 'a) -> Self {
        self.leaves = Box::new(leaves);
        self.frontier = true;
        self
    }

    /// Leaves an earlier pass named open: where the walk meets one that no seed certifies, it
    /// is reported open again without a search (an earlier search of it failed; it is left to
    /// be proven on its own, and its certificate seeded).
    pub fn open_before(mut self, leaves: impl IntoIterator<Item = Position>) -> Self {
        self.open_before.extend(leaves.into_iter().map(|leaf| leaf.key()));
        self
    }

    /// The certificate of the root, if its whole tree could be written (unchecked: verify it).
    pub fn assemble(mut self) -> (Option<Certificate>, u64, u64, u64) {
        let root = *self.certificate.root();
        let done = if self.root_wins { self.winner(&root).is_some() } else { self.loser(&root).is_some() };
        let counts = (self.walked, self.searched, self.failed());
        (done.then(|| self.certificate.reachable_only()), counts.0, counts.1, counts.2)
    }

    /// Keeps `entry` for `position` unless one with a bound as small is there; returns the
    /// bound in force.
    fn keep(&mut self, position: &Position, entry: Entry) -> u32 {
        match self.certificate.get(position) {
            Some(held) if held.bound <= entry.bound => u32::from(held.bound),
            _ => {
                self.certificate.insert(position, entry);
                u32::from(entry.bound)
            }
        }
    }

    /// Leaves not certified: those no search could certify within the budget, and those an
    /// earlier pass named open ([`Assembler::open_before`]), which are not searched again.
    pub fn failed(&self) -> u64 {
        self.uncertified.len() as u64
    }

    /// Writes the tree of a winner's position; returns its entry's bound.
    fn winner(&mut self, position: &Position) -> Option<u32> {
        if let Some(entry) = self.certificate.get(position) {
            return Some(u32::from(entry.bound));
        }
        let moves = position.legal_moves();
        if let Some(index) = moves.iter().position(|&mv| position.captures_royal(mv)) {
            return Some(self.keep(position, Entry { move_index: u8::try_from(index).ok()?, bound: 1 }));
        }
        if !self.path.insert(position.key()) {
            return None;
        }
        self.walked += 1;
        let children: Vec<Position> = moves.iter().map(|&mv| position.play_unchecked(mv)).collect();
        let mut candidates: Vec<(usize, u32)> = self
            .source
            .lost_within(&children)
            .into_iter()
            .enumerate()
            .filter_map(|(i, within)| Some((i, within?)))
            .collect();
        candidates.sort_by_key(|&(_, at_most)| at_most);
        let mut found = None;
        let setbacks_before = self.setbacks;
        for (index, _) in candidates {
            if let Some(bound) = self.loser(&children[index]) {
                found = Some((index, bound + 1));
                break;
            }
            if self.frontier && self.setbacks > setbacks_before {
                break;
            }
        }
        self.path.remove(&position.key());
        if let Some((index, bound)) = found {
            let entry = Entry { move_index: u8::try_from(index).ok()?, bound: u16::try_from(bound).ok()? };
            return Some(self.keep(position, entry));
        }
        if self.frontier && self.setbacks > setbacks_before {
            return None;
        }
        self.by_search(position)
    }

    /// Writes the tree of a loser's position: every reply's; returns one more than the
    /// largest of their bounds (0 without a move).
    fn loser(&mut self, position: &Position) -> Option<u32> {
        if !self.path.insert(position.key()) {
            return None;
        }
        self.walked += 1;
        let mut slowest: Option<u32> = None;
        let mut whole = true;
        for &mv in position.legal_moves().iter() {
            if position.captures_royal(mv) {
                whole = false;
                break;
            }
            match self.winner(&position.play_unchecked(mv)) {
                Some(bound) => slowest = Some(slowest.unwrap_or(0).max(bound)),
                None => {
                    whole = false;
                    if !self.frontier {
                        break;
                    }
                }
            }
        }
        self.path.remove(&position.key());
        whole.then(|| slowest.map_or(0, |s| s + 1))
    }

    /// A winner's position the source cannot spell out: certified by its fallback, the tree
    /// merged in (entry by entry, the smaller bound kept).
    fn by_search(&mut self, position: &Position) -> Option<u32> {
        if self.uncertified.contains(&position.key()) {
            self.setbacks += 1;
            return None;
        }
        if self.open_before.remove(&position.key()) {
            (self.leaves)(position, None);
            self.setbacks += 1;
            self.uncertified.insert(position.key());
            return None;
        }
        self.searched += 1;
        let sub = self.source.certify(position).filter(|c| c.get(position).is_some());
        (self.leaves)(position, sub.as_ref());
        if self.searched.is_multiple_of(20) {
            let failed = self.failed();
            (self.progress)(self.walked, self.searched, failed);
        }
        let Some(sub) = sub else {
            self.setbacks += 1;
            self.uncertified.insert(position.key());
            return None;
        };
        self.seed(&sub);
        self.certificate.get(position).map(|entry| u32::from(entry.bound))
    }
}

/// The records a certificate proves, for a proof record: each winner's position, a win within
/// its entry's bound, and the loser's position after its move, a loss within one ply less.
/// Over such records the walk of [`Assembler`] finds the whole tree again without a search.
pub fn records_of(certificate: &Certificate) -> Vec<(u128, Outcome)> {
    let mut records = Vec::new();
    for winner in certificate.reachable() {
        let Some(entry) = certificate.get(&winner) else { continue };
        let bound = u32::from(entry.bound);
        records.push((winner.key(), Outcome::won(true, 1, bound)));
        let moves = winner.legal_moves();
        if let Some(&mv) = moves.get(usize::from(entry.move_index)).filter(|&&mv| !winner.captures_royal(mv)) {
            records.push((winner.play_unchecked(mv).key(), Outcome::won(false, 0, bound - 1)));
        }
    }
    if !certificate.root_wins() {
        // A losing root has no entry of its own: its bound is one more than its moves' slowest.
        let root = *certificate.root();
        let slowest =
            root.successors().filter_map(|(_, child)| certificate.get(&child)).map(|e| u32::from(e.bound)).max();
        records.push((root.key(), Outcome::won(false, 0, slowest.map_or(0, |s| s + 1))));
    }
    records
}

#[cfg(test)]
mod tests {
    use shogi4_engine::MaterialIndex;
    use shogi4_tablebase::{solve, Silent, Table, Value};

    use super::*;
    use crate::best_first::InMemory;
    use crate::best_first::ProofRecord;

    /// A certificate assembled from a record of a closed game's wins (the table's values for
    /// the winner's moves, as a prover would have stored them) verifies, and says what the
    /// table says.
    #[test]
    fn assembled_certificates_verify() {
        let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
        let index = MaterialIndex::new(table.header().material);
        let (_, start) = table.longest_win().unwrap();
        let record = InMemory::default();
        // Every position within six plies, as a prover's store would hold some of them.
        let mut frontier = vec![start];
        let mut seen = HashSet::from([start.key()]);
        for _ in 0..6 {
            let mut next = Vec::new();
            for position in frontier {
                let value = table.value(index.index_of(&position)).unwrap();
                if value != Value::Draw {
                    record.keep(&[(position.key(), Outcome::Proven(value))]).unwrap();
                }
                for (_, child) in position.successors() {
                    if seen.insert(child.key()) {
                        next.push(child);
                    }
                }
            }
            frontier = next;
        }
        {
            let known = &record as &dyn Recall;
            let mut search = Search::new(16 << 20);
            let assembler = Assembler::new(known, &mut search, Limits::nodes(2_000_000), start, true);
            let (certificate, walked, searched, failed) = assembler.assemble();
            let bytes = certificate
                .unwrap_or_else(|| panic!("not assembled: {walked} walked, {searched} searched, {failed} failed"))
                .to_bytes();
            let verdict = shogi4_certificate::verify(&bytes).unwrap();
            assert!(verdict.root_wins);
            assert!(walked >= 1 && searched >= 1, "{walked} walked, {searched} searched");
        }
    }
}
