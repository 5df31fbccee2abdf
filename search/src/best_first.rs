//! The best-first prover: grows what is proven from a start position, best-first by proof
//! numbers (PN², with the df-pn search as the inner prover), over a [`ProofRecord`] that
//! keeps every settled position (the proof store, for `shogi4 prove`).
//!
//! The record's positions form a game graph from the start. The prover keeps the part it
//! has explored in memory and asks two questions of every node at once, "does the side to
//! move win?" and "does it lose?", each with a proof and a disproof number (how many
//! unresolved positions must at least be settled to answer yes, or no). Each step follows
//! the cheaper question from the root down to its most-proving leaf, and the caller analyses
//! that leaf within its budget (the position and every move, as [`Search::analyse`] does):
//! what the analysis proves is kept at once, and the leaf's unproven children become the new
//! leaves. An interior node whose children settle it is settled without search, by
//! back-propagation, and kept too.
//!
//! **Several leaves at once.** A step may choose up to `N` leaves, each the most-proving one
//! once the leaves chosen before it are passed over (the next-best sibling, or further up
//! where none is left), searched side by side, one searcher each, and recorded in the order
//! chosen, so one leaf a step makes the same choices as the plain loop.
//!
//! **Resumable.** A position the record already holds counts as analysed: reached again, it
//! is expanded without search, so a second run rebuilds the explored graph from the record as
//! it descends and goes on where the first one stopped.
//!
//! **Cycles.** Moves are reversible, so the graph has cycles. A move back to a position on the
//! current path counts as an unexpanded leaf for the numbers and is never selected; a node
//! whose every child is settled or on the path is set aside for the rest of the step. The
//! numbers only steer: every value kept comes from a search's proof or from the moves'
//! proven values. What was tried to steer it otherwise, and dropped, is in
//! `docs/measurements.md`.

use std::collections::{HashMap, HashSet};

use shogi4_engine::Position;
use shogi4_tablebase::Value;

use crate::{Analysis, Limits, Outcome, Recall, Search};

/// An infinite proof or disproof number.
pub const INFINITE: u32 = u32::MAX;

/// Proof and disproof numbers of the two questions asked of a node's side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Numbers {
    /// To prove "it wins", and to disprove it.
    pub win: (u32, u32),
    /// To prove "it loses", and to disprove it.
    pub loss: (u32, u32),
}

impl Numbers {
    /// A settled node's numbers.
    fn settled(outcome: Outcome) -> Numbers {
        match outcome.proven_win() {
            Some(true) => Numbers { win: (0, INFINITE), loss: (INFINITE, 0) },
            Some(false) => Numbers { win: (INFINITE, 0), loss: (0, INFINITE) },
            // A draw: neither question can be proven.
            None => Numbers { win: (INFINITE, 0), loss: (INFINITE, 0) },
        }
    }

    /// An unexpanded node's: a win needs one good move, a loss every move answered.
    fn leaf(moves: u32) -> Numbers {
        let moves = moves.max(1);
        Numbers { win: (1, moves), loss: (moves, 1) }
    }

    /// An expanded node's, from its children's: the side to move wins if some move leads to a
    /// loss of the opponent, and loses if every move leads to a win of the opponent.
    fn of_children(children: impl Iterator<Item = Numbers>) -> Numbers {
        let mut numbers = Numbers { win: (INFINITE, 0), loss: (0, INFINITE) };
        for child in children {
            numbers.win = (numbers.win.0.min(child.loss.0), numbers.win.1.saturating_add(child.loss.1));
            numbers.loss = (numbers.loss.0.saturating_add(child.win.0), numbers.loss.1.min(child.win.1));
        }
        numbers
    }
}

/// Which question a step pursues at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Question {
    Win,
    Loss,
}

/// One explored position.
struct Node {
    position: Position,
    /// What the record or a search established (for its side to move); `None` if nothing yet.
    outcome: Option<Outcome>,
    /// The positions its moves lead to (royal captures aside), once expanded.
    children: Option<Vec<usize>>,
    /// Its safe moves' number, for the numbers of an unexpanded node.
    moves: u32,
}

/// The explored part of the game graph, with its numbers, over the record that keeps what it
/// settles.
pub struct BestFirst<'a, R: ProofRecord> {
    record: &'a R,
    nodes: Vec<Node>,
    index: HashMap<u128, usize>,
    root: usize,
    /// Numbers of the current step, by node.
    numbers: Vec<Numbers>,
    /// Nodes expanded without search, from the record.
    resumed: u64,
}

/// Where the best-first prover keeps what it settles, and finds what earlier runs settled:
/// the proof store, or anything that keeps outcomes by position. A record that holds an
/// outcome for a position means "analysed": reached again, the position is expanded without
/// search.
pub trait ProofRecord: Recall + Sync {
    /// Why the record could not be read or written.
    type Error;
    /// What the record holds for each of `positions`, in order.
    fn stored(&self, positions: &[Position]) -> Result<Vec<Option<Outcome>>, Self::Error>;
    /// Keeps these outcomes, merged with what is held.
    fn keep(&self, facts: &[(u128, Outcome)]) -> Result<(), Self::Error>;
}

impl<'a, R: ProofRecord> BestFirst<'a, R> {
    /// The graph from `start`, over `record`.
    pub fn new(record: &'a R, start: Position) -> Result<BestFirst<'a, R>, R::Error> {
        let mut tree =
            BestFirst { record, nodes: Vec::new(), index: HashMap::new(), root: 0, numbers: Vec::new(), resumed: 0 };
        tree.root = tree.nodes_of(&[start])?[0];
        // A run that stops before its first step still reports the start's numbers.
        tree.compute_numbers(&HashSet::new());
        Ok(tree)
    }

    /// The start's proof and disproof numbers, as the last step computed them.
    pub fn root_numbers(&self) -> Numbers {
        self.numbers[self.root]
    }

    /// The start's outcome, if settled.
    pub fn root_settled(&self) -> Option<Outcome> {
        self.settled(self.root)
    }

    /// What is known of the start, settled or not.
    pub fn root_outcome(&self) -> Option<Outcome> {
        self.nodes[self.root].outcome
    }

    /// Positions in the graph.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph is empty (never: it holds the start).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Nodes expanded without search, from the record.
    pub fn resumed(&self) -> u64 {
        self.resumed
    }

    /// What the graph holds of `position` (for its side to move), adding it from the record if
    /// it is not there yet.
    pub fn outcome_of(&mut self, position: &Position) -> Result<Option<Outcome>, R::Error> {
        let id = self.nodes_of(std::slice::from_ref(position))?[0];
        Ok(self.nodes[id].outcome)
    }

    /// The nodes of `positions`, those not in the graph yet added with what the record knows
    /// of them (read at once).
    fn nodes_of(&mut self, positions: &[Position]) -> Result<Vec<usize>, R::Error> {
        let new: Vec<Position> = positions.iter().filter(|p| !self.index.contains_key(&p.key())).copied().collect();
        for (position, stored) in new.iter().zip(self.record.stored(&new)?) {
            if self.index.contains_key(&position.key()) {
                continue; // listed twice
            }
            let moves = position.legal_moves();
            let royal_capture = moves.iter().any(|&mv| position.captures_royal(mv));
            // A royal capture wins by the rules, whatever is stored.
            let outcome = if royal_capture { Some(Outcome::Proven(Value::Win(1))) } else { stored };
            self.index.insert(position.key(), self.nodes.len());
            self.nodes.push(Node { position: *position, outcome, children: None, moves: moves.len() as u32 });
        }
        Ok(positions.iter().map(|p| self.index[&p.key()]).collect())
    }

    /// The node's outcome if it settles its value (a proven win, loss or draw).
    fn settled(&self, id: usize) -> Option<Outcome> {
        self.nodes[id].outcome.filter(|o| o.is_settled())
    }

    /// Proven nodes and expanded nodes of the graph.
    pub fn counts(&self) -> (usize, usize) {
        let proven = (0..self.nodes.len()).filter(|&id| self.settled(id).is_some()).count();
        (proven, self.nodes.iter().filter(|n| n.children.is_some()).count())
    }

    /// The path from the root to the leaf the next step analyses: the numbers computed afresh,
    /// then the cheaper question followed from the root, passing over the `chosen` leaves
    /// (already taken by this step). Their numbers still count: below a node that needs every
    /// child settled, the next leaf is then a sibling, which has to be settled anyway. `None`
    /// when no other unsettled leaf is reachable.
    fn most_proving(&mut self, chosen: &[usize]) -> Option<Vec<usize>> {
        if chosen.contains(&self.root) {
            return None;
        }
        let mut set_aside = HashSet::new();
        loop {
            self.compute_numbers(&set_aside);
            let root = self.numbers[self.root];
            let question = if root.win.0 <= root.loss.0 { Question::Win } else { Question::Loss };
            if root.win.0 == INFINITE && root.loss.0 == INFINITE {
                return None;
            }
            let (mut at, mut question) = (self.root, question);
            let mut path = HashSet::from([self.root]);
            let mut line = vec![self.root];
            loop {
                let Some(children) = &self.nodes[at].children else {
                    return Some(line);
                };
                // The child whose number is least for the question it must answer: a win of
                // ours needs the opponent's loss (least proof number), a loss of ours every
                // opponent's win (least disproof number: the likeliest escape first).
                let number = |c: &usize| match question {
                    Question::Win => self.numbers[*c].loss.0,
                    Question::Loss => self.numbers[*c].win.1,
                };
                let best = children
                    .iter()
                    .filter(|c| !path.contains(*c) && !set_aside.contains(*c) && !chosen.contains(*c))
                    .filter(|c| self.settled(**c).is_none())
                    .filter(|c| number(c) != INFINITE)
                    .min_by_key(|c| number(c));
                match best {
                    Some(&child) => {
                        path.insert(child);
                        line.push(child);
                        at = child;
                        question = match question {
                            Question::Win => Question::Loss,
                            Question::Loss => Question::Win,
                        };
                    }
                    None => {
                        // Everything below is settled or loops back: try elsewhere.
                        set_aside.insert(at);
                        break;
                    }
                }
            }
            if set_aside.contains(&self.root) {
                return None;
            }
        }
    }

    /// The moves of a path of nodes, in notation.
    fn line(&self, path: &[usize]) -> Vec<String> {
        path.windows(2)
            .filter_map(|pair| {
                let (from, to) = (&self.nodes[pair[0]].position, self.nodes[pair[1]].position.key());
                from.successors().find(|(_, child)| child.key() == to).map(|(mv, _)| mv.to_string())
            })
            .collect()
    }

    /// Every reachable node's numbers, depth-first from the root; a child on the current path
    /// counts as unexpanded, a node set aside as unprovable either way.
    fn compute_numbers(&mut self, set_aside: &HashSet<usize>) {
        self.numbers = vec![Numbers::leaf(1); self.nodes.len()];
        let mut done = vec![false; self.nodes.len()];
        let mut on_path = vec![false; self.nodes.len()];
        // An explicit stack: (node, next child to visit).
        let mut stack = vec![(self.root, 0usize)];
        on_path[self.root] = true;
        while let Some(&(id, next)) = stack.last() {
            let children = self.nodes[id].children.as_deref().unwrap_or(&[]);
            let unsettled = self.settled(id).is_none() && !set_aside.contains(&id);
            if unsettled && next < children.len() {
                let child = children[next];
                stack.last_mut().expect("not empty").1 += 1;
                if !done[child] && !on_path[child] {
                    on_path[child] = true;
                    stack.push((child, 0));
                }
                continue;
            }
            let node = &self.nodes[id];
            self.numbers[id] = if let Some(outcome) = self.settled(id) {
                Numbers::settled(outcome)
            } else if set_aside.contains(&id) {
                Numbers { win: (INFINITE, INFINITE), loss: (INFINITE, INFINITE) }
            } else if node.children.is_some() {
                let numbers = &self.numbers;
                Numbers::of_children(children.iter().map(|&c| {
                    if on_path[c] && !done[c] {
                        Numbers::leaf(self.nodes[c].moves)
                    } else {
                        numbers[c]
                    }
                }))
            } else {
                Numbers::leaf(node.moves)
            };
            done[id] = true;
            on_path[id] = false;
            stack.pop();
        }
    }

    /// The leaves the next step searches: up to `wanted` of them, each the most-proving one
    /// once those chosen before are passed over, and `line` set to the first one's moves from
    /// the start. `None` when the most-proving leaf was one the store had analysed already: it
    /// is expanded from the store instead (and settled from its children if they settle it),
    /// and the step ends there, as a step with one search always did. Empty when no unsettled
    /// leaf is reachable.
    pub fn choose_leaves(&mut self, wanted: usize, line: &mut Vec<String>) -> Result<Option<Vec<usize>>, R::Error> {
        let mut chosen: Vec<usize> = Vec::with_capacity(wanted);
        while chosen.len() < wanted {
            let Some(path) = self.most_proving(&chosen) else { break };
            let leaf = *path.last().expect("a path ends at its leaf");
            if chosen.is_empty() {
                *line = self.line(&path);
            }
            if !self.open(leaf)? {
                if chosen.is_empty() {
                    self.settle_from_children()?;
                    return Ok(None);
                }
                // Chosen for another search's sake: stop here and search those chosen.
                break;
            }
            chosen.push(leaf);
        }
        Ok(Some(chosen))
    }

    /// Adds a leaf's children to the graph. A leaf the record has analysed already is expanded
    /// from it at once (`false`); any other awaits a search (`true`).
    fn open(&mut self, id: usize) -> Result<bool, R::Error> {
        let position = self.nodes[id].position;
        let children: Vec<Position> = position.successors().map(|(_, child)| child).collect();
        let child_ids = self.nodes_of(&children)?;
        if self.nodes[id].outcome.is_some() {
            self.resumed += 1;
            self.nodes[id].children = Some(child_ids);
            return Ok(false);
        }
        Ok(true)
    }

    /// Each leaf (opened) analysed within `limits`, side by side, one searcher each; in the
    /// order given. What the record knows of a leaf's children helps the search through them.
    pub fn analyse(&self, leaves: &[usize], searches: &mut [Search], limits: &Limits) -> Vec<(usize, Analysis)> {
        let store = self.record;
        let positions: Vec<Position> = leaves.iter().map(|&id| self.nodes[id].position).collect();
        if let ([position], [search, ..]) = (&positions[..], &mut *searches) {
            // One leaf: no thread to start.
            return vec![(leaves[0], search.analyse_recalling(position, limits, store).0)];
        }
        std::thread::scope(|scope| {
            let running: Vec<_> = positions
                .iter()
                .zip(searches.iter_mut())
                .map(|(position, search)| scope.spawn(move || search.analyse_recalling(position, limits, store).0))
                .collect();
            let analyses = running.into_iter().map(|thread| thread.join().expect("a search does not panic"));
            leaves.iter().copied().zip(analyses).collect()
        })
    }

    /// Records a search's analysis of an opened leaf and expands it: unlike
    /// `Analysis::facts`, the position's own record and the children's proven values only:
    /// here a record means "analysed", and a child with an unknown record would be expanded
    /// from the store and never searched itself.
    pub fn record_analysis(&mut self, id: usize, analysis: &Analysis) -> Result<(), R::Error> {
        let position = self.nodes[id].position;
        let mut facts = vec![(position.key(), analysis.outcome)];
        let mut ids = Vec::with_capacity(analysis.moves.len());
        for m in &analysis.moves {
            let Some(child) = m.result else { continue };
            let child = self.index[&child.key()];
            let after = m.outcome.after_move();
            if after.is_settled() {
                facts.push((self.nodes[child].position.key(), after));
                let node = &mut self.nodes[child];
                node.outcome = Some(node.outcome.map_or(after, |o| o.merge(after)));
            }
            ids.push(child);
        }
        self.record.keep(&facts)?;
        let node = &mut self.nodes[id];
        // Merged, as the store merges: another leaf of the same step may have proven this one
        // meanwhile, as one of its moves' positions (a transposition).
        node.outcome = Some(node.outcome.map_or(analysis.outcome, |o| o.merge(analysis.outcome)));
        node.children = Some(ids);
        Ok(())
    }

    /// Back-propagation: every expanded, unsettled node whose children's values now settle
    /// it gets that value, kept in the record, until nothing changes.
    pub fn settle_from_children(&mut self) -> Result<(), R::Error> {
        loop {
            let mut facts = Vec::new();
            for id in 0..self.nodes.len() {
                let Some(children) = &self.nodes[id].children else { continue };
                if self.settled(id).is_some() {
                    continue;
                }
                let moves = children
                    .iter()
                    .map(|&c| self.nodes[c].outcome.unwrap_or(Outcome::Unknown { no_result_within: 0 }).for_mover());
                let Some(derived) = Outcome::from_moves(moves).filter(|o| o.is_settled()) else {
                    continue;
                };
                let node = &mut self.nodes[id];
                let outcome = node.outcome.map_or(derived, |o| o.merge(derived));
                node.outcome = Some(outcome);
                facts.push((node.position.key(), outcome));
            }
            if facts.is_empty() {
                return Ok(());
            }
            self.record.keep(&facts)?;
        }
    }
}

/// A record in memory, for tests and experiments: what it keeps is lost with it.
#[derive(Default)]
pub struct InMemory(std::sync::Mutex<HashMap<u128, Outcome>>);

impl InMemory {
    /// Everything it holds.
    pub fn facts(&self) -> Vec<(u128, Outcome)> {
        self.0.lock().expect("not poisoned").iter().map(|(&k, &o)| (k, o)).collect()
    }
}

impl Recall for InMemory {
    fn recall(&self, positions: &[Position]) -> Vec<Option<Outcome>> {
        let held = self.0.lock().expect("not poisoned");
        positions.iter().map(|p| held.get(&p.key()).copied()).collect()
    }
}

impl ProofRecord for InMemory {
    type Error = std::convert::Infallible;
    fn stored(&self, positions: &[Position]) -> Result<Vec<Option<Outcome>>, Self::Error> {
        Ok(self.recall(positions))
    }
    fn keep(&self, facts: &[(u128, Outcome)]) -> Result<(), Self::Error> {
        let mut held = self.0.lock().expect("not poisoned");
        for &(key, outcome) in facts {
            let merged = held.get(&key).map_or(outcome, |o| o.merge(outcome));
            held.insert(key, merged);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use shogi4_engine::MaterialIndex;
    use shogi4_tablebase::{solve, Silent, Table};

    use super::*;

    /// Runs the prover from `start` until it settles it or `steps` steps are spent, one leaf
    /// at a time with a tiny budget each; returns the start's outcome and the steps taken.
    fn prove(record: &InMemory, start: Position, steps: usize, threads: usize) -> (Option<Outcome>, usize) {
        let mut tree = BestFirst::new(record, start).unwrap();
        let mut searches: Vec<Search> = (0..threads).map(|_| Search::new(1 << 20)).collect();
        let limits = Limits::nodes(300);
        let mut line = Vec::new();
        for step in 0..steps {
            if let Some(outcome) = tree.root_settled() {
                return (Some(outcome), step);
            }
            let Ok(Some(batch)) = tree.choose_leaves(threads, &mut line) else { continue };
            if batch.is_empty() {
                break;
            }
            for (leaf, analysis) in tree.analyse(&batch, &mut searches, &limits) {
                tree.record_analysis(leaf, &analysis).unwrap();
            }
            tree.settle_from_children().unwrap();
        }
        (tree.root_settled(), steps)
    }

    #[test]
    fn numbers_combine_as_and_or() {
        let won = Numbers::settled(Outcome::Proven(Value::Win(3)));
        let lost = Numbers::settled(Outcome::Proven(Value::Loss(2)));
        // One child lost for the opponent: the node wins at once.
        assert_eq!(Numbers::of_children([won, lost].into_iter()).win.0, 0);
        // Every child won for the opponent: the node loses.
        assert_eq!(Numbers::of_children([won, won].into_iter()).loss.0, 0);
        let open = Numbers::leaf(4);
        let both = Numbers::of_children([open, open].into_iter());
        assert_eq!((both.win.0, both.loss.0), (4, 2));
    }

    #[test]
    fn proves_what_the_table_says_and_resumes_from_its_record() {
        // Positions of KKCF that a 300-node search does not settle alone, proven best-first;
        // every settled start must be the table's value.
        let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
        let index = MaterialIndex::new(table.header().material);
        let (mut settled, mut tried) = (0, 0);
        for slot in (0..index.slots()).step_by(7_919) {
            let start = index.position_at(slot);
            let truth = table.value(slot).unwrap();
            let mut alone = Search::new(1 << 20);
            if alone.prove(&start, &Limits::nodes(300)).outcome.is_settled() || truth == Value::Draw {
                continue;
            }
            tried += 1;
            let record = InMemory::default();
            let (outcome, steps) = prove(&record, start, 400, 1 + tried % 2);
            let Some(outcome) = outcome else { continue };
            settled += 1;
            assert_eq!(outcome.proven_win(), Some(matches!(truth, Value::Win(_))), "{}", start.to_sfen());
            // Everything kept is true of the table too.
            for (key, kept) in record.facts() {
                let position = Position::from_key(key).unwrap();
                let value = table.value(index.index_of(&position)).unwrap();
                if let Some(win) = kept.proven_win() {
                    assert_eq!(win, matches!(value, Value::Win(_)), "{}", position.to_sfen());
                }
            }
            // A second run over the same record settles it again without a search.
            if steps > 0 {
                let mut again = BestFirst::new(&record, start).unwrap();
                assert_eq!(again.root_settled().map(|o| o.proven_win()), Some(outcome.proven_win()));
                assert_eq!(again.outcome_of(&start).unwrap(), Some(outcome));
            }
            if settled >= 6 {
                break;
            }
        }
        assert!(settled >= 6, "only {settled} of {tried} positions settled best-first");
    }
}
