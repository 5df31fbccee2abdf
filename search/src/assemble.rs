//! Assembling a certificate from a record of proven positions: for a proof too large for one
//! search (a game solved by many searches over hours, whose results are kept in a proof
//! store), the certificate is spelt out by walking the record from the root, and each
//! position the record proves but cannot spell out (a leaf one search settled) is certified
//! by a search of its own, whose tree is merged in.
//!
//! At each of the winner's positions the walk tries the moves whose positions the record
//! proves lost, the quickest first, and keeps the first one whose tree it can spell out; at
//! each of the loser's, every reply. An entry's bound is the height of the tree written below
//! it (1 for a royal capture), so bounds fall along every line whatever the record's own
//! distance bounds say; where two trees reach the same position, the entry with the smaller
//! bound is kept, which leaves every tree above it valid. A line that comes back to a
//! position on the current path is not followed (a proof is a finite tree).
//!
//! Nothing here is trusted: the result is checked by [`shogi4_certificate::verify`], which
//! knows only the rules. A record that is wrong yields no certificate, never a false one.

use std::collections::HashSet;

use shogi4_certificate::{Certificate, Entry};
use shogi4_engine::Position;

use crate::{Limits, Recall, Search};

/// How a certificate is assembled, and what it took.
pub struct Assembler<'a> {
    known: &'a dyn Recall,
    search: &'a mut Search,
    leaf: Limits,
    certificate: Certificate,
    root_wins: bool,
    /// Positions on the current line.
    path: HashSet<u128>,
    /// Leaves certified by a search of their own (or tried).
    pub searched: u64,
    /// Leaves no search could certify within the budget.
    pub failed: u64,
    /// Positions walked from the record.
    pub walked: u64,
    /// Told (walked, searched, failed) every 20 leaf searches.
    progress: Box<dyn FnMut(u64, u64, u64) + 'a>,
}

impl<'a> Assembler<'a> {
    /// An assembler reading `known`, certifying leaves with `search` within `leaf` each.
    pub fn new(known: &'a dyn Recall, search: &'a mut Search, leaf: Limits, root: Position, root_wins: bool) -> Self {
        Assembler {
            known,
            search,
            leaf,
            certificate: Certificate::new(root, root_wins),
            root_wins,
            path: HashSet::new(),
            searched: 0,
            failed: 0,
            walked: 0,
            progress: Box::new(|_, _, _| {}),
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

    /// The certificate of the root, if its whole tree could be written (unchecked: verify it).
    pub fn assemble(mut self) -> (Option<Certificate>, u64, u64, u64) {
        let root = *self.certificate.root();
        let done = if self.root_wins { self.winner(&root).is_some() } else { self.loser(&root).is_some() };
        let counts = (self.walked, self.searched, self.failed);
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
        let recalled = self.known.recall(&children);
        let mut candidates: Vec<(usize, u32)> = recalled
            .iter()
            .enumerate()
            .filter_map(|(i, outcome)| {
                let outcome = (*outcome)?;
                (outcome.proven_win() == Some(false)).then(|| (i, outcome.distance_bounds().map_or(u32::MAX, |b| b.1)))
            })
            .collect();
        candidates.sort_by_key(|&(_, at_most)| at_most);
        let mut found = None;
        for (index, _) in candidates {
            if let Some(bound) = self.loser(&children[index]) {
                found = Some((index, bound + 1));
                break;
            }
        }
        self.path.remove(&position.key());
        if let Some((index, bound)) = found {
            let entry = Entry { move_index: u8::try_from(index).ok()?, bound: u16::try_from(bound).ok()? };
            return Some(self.keep(position, entry));
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
                    break;
                }
            }
        }
        self.path.remove(&position.key());
        whole.then(|| slowest.map_or(0, |s| s + 1))
    }

    /// A winner's position the record cannot spell out: certified by a search, its tree
    /// merged in (entry by entry, the smaller bound kept).
    fn by_search(&mut self, position: &Position) -> Option<u32> {
        self.searched += 1;
        // What the record knows of the leaf's moves helps the search find its way; the tree is
        // still spelt out by the search, down to royal captures.
        self.search.recall(position, self.known);
        // A second try with four times the budget, on the table the first one left.
        let larger = Limits {
            max_nodes: self.leaf.max_nodes.saturating_mul(4),
            time: self.leaf.time.map(|t| t * 4),
            ..self.leaf
        };
        let sub = self
            .search
            .certify(position, &self.leaf)
            .or_else(|| self.search.certify(position, &larger))
            .filter(|c| c.get(position).is_some());
        if self.searched.is_multiple_of(20) {
            (self.progress)(self.walked, self.searched, self.failed);
        }
        let Some(sub) = sub else {
            self.failed += 1;
            return None;
        };
        self.seed(&sub);
        self.certificate.get(position).map(|entry| u32::from(entry.bound))
    }
}

#[cfg(test)]
mod tests {
    use shogi4_engine::MaterialIndex;
    use shogi4_tablebase::{solve, Silent, Table, Value};

    use super::*;
    use crate::best_first::InMemory;
    use crate::best_first::ProofRecord;
    use crate::Outcome;

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
