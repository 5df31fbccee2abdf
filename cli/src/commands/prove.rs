//! `shogi4 prove`: grows the proof store from the start position, best-first by proof numbers.
//!
//! The store's positions form a game graph from `--from`. `prove` keeps the part it has
//! explored in memory and asks two questions of every node at once, "does the side to move
//! win?" and "does it lose?", each with a proof and a disproof number (how many unresolved
//! positions must at least be settled to answer yes, or no), as proof-number search does.
//! Each step follows the cheaper question from the root down to its most-proving leaf and
//! analyses that leaf within the budget (the position and every move, as `shogi4 search`
//! would): what the analysis proves is committed at once, and the leaf's unproven children
//! become the new leaves. An interior node whose children settle it is settled without
//! search, by back-propagation, and recorded too. This is PN² with the df-pn search as the
//! inner prover: the outer numbers decide where the next second of search is spent.
//!
//! **Several leaves at once** (`--threads N`): each step chooses up to `N` leaves, each the
//! most-proving one once the leaves chosen before it are passed over (the next-best sibling,
//! or further up where none is left), and searches them side by side, one searcher and
//! transposition table per thread. Their analyses are recorded in the order the leaves were
//! chosen, so one thread makes the same choices as the loop always did.
//!
//! **Resumable.** A position the store already holds a record for counts as analysed: reached
//! again, it is expanded without search, so a second run rebuilds the explored graph from the
//! store as it descends and goes on where the first one stopped.
//!
//! **Cycles.** Moves are reversible, so the graph has cycles. A move back to a position on the
//! current path counts as an unexpanded leaf for the numbers and is never selected; a node
//! whose every child is settled or on the path is set aside for the rest of the step. The
//! numbers only steer the search: every value `prove` records comes from a search's proof or
//! from the moves' proven values.
//!
//! **Leaves by their moves alone.** Tried and dropped: an unexpanded node's numbers leaning
//! toward the side the search's learned guess favours, as the search's own starting numbers do
//! (each move counting 4, divided or multiplied by `2^(0.25 s)` for the guess's log-odds `s`).
//! Compared with `--ms 0 --nodes 300000` (the same choices on every run) from fresh stores: of
//! the 16 positions after the start's replies and after `b1b2 b4c3`'s, with at most 600 leaves
//! each, the same 10 settled, in 47, 105 and 3 leaves against 64, 71 and 9 where they took more
//! than two, and one more with the lean (548 leaves); of the first 22 of 27 random playouts
//! that the search leaves unknown at 8 M nodes, with at most 1,000 leaves each, 7 settled
//! against 4 with the lean (181, 721, 131, 824, 209, 540 and 287 leaves; leaned, 879, 384, 200
//! and 882). The guess orders one search's children well; as the order of whole lines it
//! misleads.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use shogi4_api::cli::{ProofsExported, ProofsImported, ProveReport, StartNumbers};
use shogi4_engine::Position;
use shogi4_proofs::{Carried, Exported, Imported, Opened, ProofStore, StoreError};
use shogi4_search::{Analysis, Limits, Outcome, Search};
use shogi4_tablebase::Value;

use crate::commands::probe::describe;
use crate::error::{parse_position, CliError};
use crate::progress::Bar;

/// When `prove` stops, besides a settled start.
pub struct Stop {
    /// Positions searched at most.
    pub positions: u64,
    /// Wall-clock time at most.
    pub time: Option<Duration>,
    /// Resident memory at most: the run stops at the first step that finds it reached.
    pub memory_bytes: u64,
    /// Size of the store's file at most, checked the same way (a step adds a few records).
    pub store_bytes: u64,
}

/// Memory the process needs besides the transposition table, before the graph grows: the
/// binary, the store's cache, the first nodes.
const BASE_MEMORY: u64 = 64 << 20;

pub fn run(
    from: &str,
    stop: &Stop,
    store_path: &Path,
    limits: &Limits,
    table_bytes: usize,
    threads: usize,
    json: bool,
) -> Result<(), CliError> {
    let start = parse_position(from)?;
    let tables = (table_bytes as u64).saturating_mul(threads as u64);
    if tables.saturating_add(BASE_MEMORY) > stop.memory_bytes {
        return Err(CliError::Usage(format!(
            "a transposition table of {} MiB for each of {threads} thread(s) does not fit a memory limit of {} MiB \
             with {} MiB to spare",
            table_bytes >> 20,
            stop.memory_bytes >> 20,
            BASE_MEMORY >> 20
        )));
    }
    super::probe::tables_fit(table_bytes, threads)?;
    let (store, opened) = ProofStore::open(store_path)?;
    match opened {
        Opened::Rebuilt { aside, salvaged } => eprintln!(
            "shogi4: {} was damaged: moved to {}, {salvaged} readable records carried over",
            store_path.display(),
            aside.display()
        ),
        Opened::ReadOnly => return Err(StoreError::ReadOnly(store_path.to_path_buf()).into()),
        Opened::Fine => {}
    }
    let started = Instant::now();
    let bar = Bar::new();
    shogi4_tablebase::Progress::phase(&bar, "prove", stop.positions);
    let mut tree = ProofTree::new(&store, start)?;
    let mut searches: Vec<Search> = (0..threads).map(|_| Search::new(table_bytes)).collect();
    let (mut searched, mut nodes) = (0u64, 0u64);
    let mut ended = "budget spent";
    // The most-proving line of the last step: the moves from the start to the leaf searched.
    let mut line: Vec<String> = Vec::new();
    while searched < stop.positions {
        if stop.time.is_some_and(|t| started.elapsed() >= t) {
            ended = "time is up";
            break;
        }
        if tree.settled(tree.root).is_some() {
            ended = "the start is settled";
            break;
        }
        let resident = shogi4_tablebase::resident_bytes().unwrap_or(0);
        if resident >= stop.memory_bytes {
            ended = "the memory limit is reached";
            break;
        }
        let store_now = std::fs::metadata(store_path).map_or(0, |m| m.len());
        if store_now >= stop.store_bytes {
            ended = "the store's size limit is reached";
            break;
        }
        let wanted = (stop.positions - searched).min(threads as u64) as usize;
        let Some(batch) = tree.choose_leaves(wanted, &mut line)? else {
            continue; // expanded from the store alone: check the limits and choose again
        };
        if batch.is_empty() {
            ended = "nothing left to expand";
            break;
        }
        for (leaf, analysis) in tree.analyse(&batch, &mut searches, limits) {
            searched += 1;
            nodes += analysis.nodes;
            tree.record_analysis(leaf, &analysis)?;
            shogi4_tablebase::Progress::advance(&bar, 1);
        }
        tree.settle_from_children()?;
        let root = tree.numbers[tree.root];
        let speed = nodes as f64 / started.elapsed().as_secs_f64().max(1e-3) / 1e6;
        bar.note(format!(
            "start: win {}/{}, loss {}/{}; graph {} ({} proven); {speed:.1} M nodes/s; {} MiB, store {} MiB; line {}",
            shown(root.win.0),
            shown(root.win.1),
            shown(root.loss.0),
            shown(root.loss.1),
            tree.nodes.len(),
            tree.counts().0,
            resident >> 20,
            store_now >> 20,
            line.join(" ")
        ));
    }
    shogi4_tablebase::Progress::finish_phase(&bar);
    let (proven, expanded) = tree.counts();
    let records = store.len()?;
    // The replies' positions, with what the store knows of those not explored this run.
    let replies_positions: Vec<Position> = start.successors().map(|(_, child)| child).collect();
    tree.nodes_of(&replies_positions)?;
    let unknown = Outcome::Unknown { no_result_within: 0 };
    let start_value = describe(tree.nodes[tree.root].outcome.unwrap_or(unknown));
    // Each reply's outcome for the player making it.
    let replies: Vec<(String, String)> = start
        .legal_moves()
        .iter()
        .map(|&mv| {
            let outcome = if start.captures_royal(mv) {
                Outcome::Proven(Value::Win(1))
            } else {
                let child = tree.index.get(&start.play_unchecked(mv).key()).and_then(|&c| tree.nodes[c].outcome);
                child.map_or(unknown, Outcome::for_mover)
            };
            (mv.to_string(), describe(outcome))
        })
        .collect();
    let root = tree.numbers[tree.root];
    let store_bytes = std::fs::metadata(store_path).map_or(0, |m| m.len());
    let peak_memory = shogi4_tablebase::peak_rss_bytes();
    if json {
        // Proof and disproof numbers of the start's two questions; null for infinite.
        let finite = |n: u32| (n != INFINITE).then_some(n);
        super::print_json(&ProveReport {
            start: start_value,
            replies: replies.into_iter().collect(),
            searched,
            threads: threads as u64,
            resumed: tree.resumed,
            expanded: expanded as u64,
            graph: tree.nodes.len() as u64,
            proven: proven as u64,
            nodes,
            records,
            ended: ended.to_string(),
            seconds: started.elapsed().as_secs_f64(),
            start_numbers: StartNumbers {
                win: [finite(root.win.0), finite(root.win.1)],
                loss: [finite(root.loss.0), finite(root.loss.1)],
            },
            store_bytes,
            peak_memory_bytes: peak_memory,
            line,
        });
    } else {
        println!("start: {start_value}");
        for (mv, outcome) in replies {
            println!("  {mv:<7} {outcome}");
        }
        println!(
            "{searched} positions searched ({nodes} nodes, {threads} at a time at most), {} expanded from the \
             store; the graph holds {} positions, {proven} proven, {expanded} expanded; the store holds {records} \
             records ({ended})",
            tree.resumed,
            tree.nodes.len()
        );
        println!(
            "start's numbers: win {}/{}, loss {}/{} (proof/disproof); store {store_bytes} bytes; peak memory {} MiB",
            shown(root.win.0),
            shown(root.win.1),
            shown(root.loss.0),
            shown(root.loss.1),
            peak_memory.map_or("?".to_string(), |bytes| (bytes >> 20).to_string())
        );
        println!("most-proving line: {}", line.join(" "));
    }
    Ok(())
}

/// A proof or disproof number as the progress line shows it.
fn shown(number: u32) -> String {
    if number == INFINITE {
        "∞".to_string()
    } else {
        number.to_string()
    }
}

/// Unreachable: the question is answered the other way.
const INFINITE: u32 = u32::MAX;

/// Proof and disproof numbers of the two questions asked of a node's side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Numbers {
    /// To prove "it wins", and to disprove it.
    win: (u32, u32),
    /// To prove "it loses", and to disprove it.
    loss: (u32, u32),
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
    /// What the store or a search established (for its side to move); `None` if nothing yet.
    outcome: Option<Outcome>,
    /// The positions its moves lead to (royal captures aside), once expanded.
    children: Option<Vec<usize>>,
    /// Its safe moves' number, for the numbers of an unexpanded node.
    moves: u32,
}

/// The explored part of the game graph, with its numbers.
struct ProofTree<'a> {
    store: &'a ProofStore,
    nodes: Vec<Node>,
    index: HashMap<u128, usize>,
    root: usize,
    /// Numbers of the current step, by node.
    numbers: Vec<Numbers>,
    /// Nodes expanded without search, from the store's records.
    resumed: u64,
}

impl<'a> ProofTree<'a> {
    fn new(store: &'a ProofStore, start: Position) -> Result<ProofTree<'a>, StoreError> {
        let mut tree =
            ProofTree { store, nodes: Vec::new(), index: HashMap::new(), root: 0, numbers: Vec::new(), resumed: 0 };
        tree.root = tree.nodes_of(&[start])?[0];
        // A run that stops before its first step still reports the start's numbers.
        tree.compute_numbers(&HashSet::new());
        Ok(tree)
    }

    /// The nodes of `positions`, those not in the graph yet added with what the store knows
    /// of them (read in one transaction).
    fn nodes_of(&mut self, positions: &[Position]) -> Result<Vec<usize>, StoreError> {
        let new: Vec<Position> = positions.iter().filter(|p| !self.index.contains_key(&p.key())).copied().collect();
        for (position, stored) in new.iter().zip(self.store.recall(&new)?) {
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
    fn counts(&self) -> (usize, usize) {
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
    fn choose_leaves(&mut self, wanted: usize, line: &mut Vec<String>) -> Result<Option<Vec<usize>>, StoreError> {
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

    /// Adds a leaf's children to the graph. A leaf the store has analysed already is expanded
    /// from it at once (`false`); any other awaits a search (`true`).
    fn open(&mut self, id: usize) -> Result<bool, StoreError> {
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
    /// order given. What the store knows of a leaf's children helps the search through them.
    fn analyse(&self, leaves: &[usize], searches: &mut [Search], limits: &Limits) -> Vec<(usize, Analysis)> {
        let store = self.store;
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
    fn record_analysis(&mut self, id: usize, analysis: &Analysis) -> Result<(), StoreError> {
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
        self.store.record(&facts)?;
        let node = &mut self.nodes[id];
        // Merged, as the store merges: another leaf of the same step may have proven this one
        // meanwhile, as one of its moves' positions (a transposition).
        node.outcome = Some(node.outcome.map_or(analysis.outcome, |o| o.merge(analysis.outcome)));
        node.children = Some(ids);
        Ok(())
    }

    /// Back-propagation: every expanded, unsettled node whose children's values now settle
    /// it gets that value, recorded in the store, until nothing changes.
    fn settle_from_children(&mut self) -> Result<(), StoreError> {
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
            self.store.record(&facts)?;
        }
    }
}

/// `shogi4 proofs export`: the store's proven outcomes (and with `carried`, its unknown
/// ones too) to one file.
pub fn export(store_path: &Path, file: &Path, carried: Carried, json: bool) -> Result<(), CliError> {
    // Opening a missing store would begin an empty one, only to export nothing from it.
    if !store_path.exists() {
        return Err(CliError::Usage(format!("no proof store at {}: nothing to export", store_path.display())));
    }
    let (store, _) = ProofStore::open(store_path)?;
    let Exported { records, unknown } = store.export(file, carried)?;
    let bytes = std::fs::metadata(file).map_or(0, |m| m.len());
    if json {
        super::print_json(&ProofsExported { records, unknown, bytes });
    } else {
        let proven = records - unknown;
        println!("{proven} proven and {unknown} unknown outcomes written to {} ({bytes} bytes)", file.display());
    }
    Ok(())
}

/// `shogi4 proofs import`: an exported file merged into the store.
pub fn import(store_path: &Path, file: &Path, json: bool) -> Result<(), CliError> {
    // The file is read and checked whole before the store is opened, so that a refused file
    // leaves no new, empty store behind.
    let facts = shogi4_proofs::read_export(file)?;
    let (store, _) = ProofStore::open(store_path)?;
    let Imported { records, changed } = store.import_facts(&facts)?;
    if json {
        super::print_json(&ProofsImported { records, changed });
    } else {
        println!(
            "{records} outcomes read from {}; {changed} records of {} new or narrowed",
            file.display(),
            store_path.display()
        );
    }
    Ok(())
}
