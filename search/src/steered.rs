//! The steered prover: proves that one side, the **attacker**, wins a position, with a
//! [`Guide`] (an engine) choosing the attacker's moves, over a [`ProofRecord`] that keeps every
//! position it settles (the proof store, for `shogi4 prove --steer`).
//!
//! A weak solution needs one winning move at each of the attacker's positions and a win
//! against every reply at each of the defender's. So, unlike the [best-first
//! prover](crate::best_first), which asks both questions of every node, this one asks one:
//!
//! - **At the attacker's nodes** (OR) it follows the guide's best move alone, and widens to the
//!   next one only when every move it follows is refuted (its proof number is infinite: a
//!   proven draw or loss, or a line that only repeats).
//! - **At the defender's nodes** (AND) every reply counts, the guide's strongest first.
//! - **Leaves** are settled by the proof search (df-pn, [`Search::prove`]) on a node budget
//!   that grows fourfold each time the same leaf is picked again; a leaf still open after
//!   [`Steering::leaf_searches`] searches is expanded instead.
//! - **Proof numbers**, started from the guide's estimate of each position (a position the
//!   guide rates well for the attacker is cheaper to prove, dearer to refute), choose which
//!   open line to work on: the most-proving leaf, as in proof-number search.
//!
//! **What is kept.** Every settled position goes into the record at once, and so does every
//! leaf search's "no result within" (at least [`MIN_RECORDED_DEPTH`] deep): a record means
//! "searched", so a run over the same record expands such a leaf at once instead of searching
//! it again, and rebuilds the tree from the record as it descends. Each searcher keeps its
//! transposition table across all the leaf searches of a run.
//!
//! **Invariants.** Values come only from the proof search, the record and the rules (a royal
//! capture); a node is settled from its children only when their proven values settle it
//! ([`Outcome::from_moves`]), so the numbers and the guide steer and never decide. A move back
//! to a position on the current line counts as refuted for that line only (a proof is a finite
//! tree; a repetition can't end one), and nothing path-dependent is ever recorded.

use std::collections::{HashMap, HashSet};

use shogi4_engine::{Color, Move, Played, Position};
use shogi4_tablebase::Value;

use crate::best_first::{ProofRecord, INFINITE};
use crate::{Limits, Narrowing, Outcome, Plan, Search, MIN_RECORDED_DEPTH};

/// Chooses moves for the prover: an engine.
pub trait Guide {
    /// The moves of `position` (royal captures aside), best first for its side to move, each
    /// with the guide's expected score for that side after it (0 a sure loss, 1 a sure win).
    /// `path` holds the keys of the positions before it on the current line, oldest first,
    /// so that a guide may score a repetition as a draw. Moves left out are ranked last.
    fn rank(&mut self, position: &Position, path: &[u128]) -> Vec<(Move, f32)>;
}

/// How the prover spends its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steering {
    /// A leaf's first search, in nodes; each later search of the same leaf gets four times the
    /// one before.
    pub leaf_nodes: u64,
    /// And in time (`None`: the nodes alone, which makes a one-thread run the same on every
    /// machine); scaled the same way.
    pub leaf_time: Option<std::time::Duration>,
    /// Searches of a leaf before it is expanded instead.
    pub leaf_searches: u32,
    /// How long the attacker's first open move is followed alone: `None` until it is refuted;
    /// `Some(w)`, while its proof number stays below `w` times the second's (and the second's
    /// below `w` times the third's, and so on).
    pub patience: Option<u32>,
    /// Whether every leaf the attacker wins is certified as it is proven: its proof tree is
    /// spelt out from the searcher's table at once ([`crate::assemble::certify_leaf`]), checked
    /// by the rules, and kept in the record position by position
    /// ([`crate::assemble::records_of`]), and a leaf whose tree cannot be spelt out within its
    /// budget is not taken as proven. Leaf searches then recall nothing
    /// from the record (a recalled value has no tree to spell out). Over a record that holds
    /// only such proofs, [`crate::assemble::Assembler`] writes the whole certificate without a
    /// search of its own.
    pub certified: bool,
}

/// The plan a leaf's searcher should follow (`Search::with_plan`): the default one, without
/// narrowing a proven value's distance, which the prover does not need and which would spend
/// the rest of the leaf's budget.
pub fn leaf_plan() -> Plan {
    Plan { narrowing: Narrowing::Keep, ..Plan::default() }
}

impl Default for Steering {
    fn default() -> Self {
        Steering { leaf_nodes: 1_000_000, leaf_time: None, leaf_searches: 1, patience: Some(1), certified: false }
    }
}

/// Proof and disproof numbers of "the attacker wins".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Numbers {
    /// Positions at least to settle to prove it.
    pub proof: u32,
    /// To refute it.
    pub disproof: u32,
}

impl Numbers {
    const PROVEN: Numbers = Numbers { proof: 0, disproof: INFINITE };
    const REFUTED: Numbers = Numbers { proof: INFINITE, disproof: 0 };
}

/// The estimate that makes a leaf's numbers even, and how far an estimate leans them: a leaf
/// the attacker is expected to score `p` at has numbers `SCALE · (1 − p) / p` to prove and
/// `SCALE · p / (1 − p)` to refute, each at least 1.
const SCALE: f32 = 4.0;
/// How many times the tree's size the numbers' computation may visit nodes, recomputing those
/// whose numbers depend on the line (see `Steered::compute_numbers`).
const RECOMPUTE: usize = 8;
/// Estimates are clamped to this distance from 0 and 1 before they lean anything.
const SUREST: f32 = 0.02;

/// One explored position.
struct Node {
    position: Position,
    /// What the record, a search or the children established, for its side to move.
    outcome: Option<Outcome>,
    /// The guide's expected score for the attacker.
    estimate: f32,
    /// Leaf searches run on it (this run, or earlier ones when the record holds a result).
    searches: u32,
    /// Its moves and the nodes they lead to, the guide's best first, once expanded.
    children: Option<Vec<(Move, usize)>>,
}

/// A node's state for the attacker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The attacker is proven to win.
    Proven,
    /// The attacker is proven not to win (a draw, or the defender wins).
    Refuted,
    /// Neither yet.
    Open,
}

/// The explored tree (a graph: transpositions share a node) over the record that keeps what
/// it settles.
pub struct Steered<'a, R: ProofRecord> {
    record: &'a R,
    attacker: Color,
    steering: Steering,
    nodes: Vec<Node>,
    index: HashMap<u128, usize>,
    root: usize,
    /// Numbers as the last step computed them, by node.
    numbers: Vec<Numbers>,
    /// Nodes expanded, and leaf searches run, by this run.
    expanded: u64,
    searched: u64,
    /// Nodes the leaf searches examined.
    search_nodes: u64,
}

/// A reply or move of the root and where its proof stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    /// The move from the root.
    pub mv: Move,
    /// What is established of the position it leads to, for its side to move.
    pub outcome: Option<Outcome>,
    /// Proven, refuted or open, for the attacker.
    pub status: Status,
    /// The guide's expected score for the attacker.
    pub estimate: f32,
    /// Its numbers.
    pub numbers: Numbers,
    /// The most-proving line below it (its own move first), while it is open.
    pub line: Vec<Move>,
}

/// What one leaf search found: its outcome, the nodes it took, and the records of the proof
/// tree it spelt out (certified runs only).
struct LeafReport {
    id: usize,
    outcome: Outcome,
    nodes: u64,
    spelt: Vec<(u128, Outcome)>,
}

/// A certified run's leaf search: a win for the attacker counts only with its proof tree spelt
/// out (from the table the search just filled, so this costs little unless the table let part
/// of it go); else the leaf stays open, with the depth its proof showed to have no result.
fn search_certified(
    search: &mut Search,
    id: usize,
    position: &Position,
    limits: &Limits,
    attacking: bool,
) -> LeafReport {
    let report = search.prove(position, limits);
    let mut leaf = LeafReport { id, outcome: report.outcome, nodes: report.nodes, spelt: Vec::new() };
    if report.outcome.proven_win() != Some(attacking) {
        return leaf;
    }
    // Checked by the rules before its records are kept: nothing unchecked enters the record.
    let checked = crate::assemble::certify_leaf(search, position, limits)
        .filter(|certificate| shogi4_certificate::verify(&certificate.to_bytes()).is_ok());
    match checked {
        Some(certificate) => leaf.spelt = crate::assemble::records_of(&certificate),
        None => {
            // The distance is at least `at_least`: nobody forces a result within one ply less.
            let at_least = report.outcome.distance_bounds().map_or(0, |(at_least, _)| at_least);
            leaf.outcome = Outcome::Unknown { no_result_within: at_least.saturating_sub(1) };
        }
    }
    leaf
}

impl<'a, R: ProofRecord> Steered<'a, R> {
    /// The tree from `start`, proving that `attacker` wins it, over `record`.
    pub fn new(record: &'a R, start: Position, attacker: Color, steering: Steering) -> Result<Self, R::Error> {
        let mut tree = Steered {
            record,
            attacker,
            steering,
            nodes: Vec::new(),
            index: HashMap::new(),
            root: 0,
            numbers: Vec::new(),
            expanded: 0,
            searched: 0,
            search_nodes: 0,
        };
        tree.root = tree.nodes_of(&[(start, 0.5)])?[0];
        tree.compute_numbers();
        Ok(tree)
    }

    /// The start's outcome (for its side to move), if the record or the run knows one.
    pub fn root_outcome(&self) -> Option<Outcome> {
        self.nodes[self.root].outcome
    }

    /// The start's status for the attacker.
    pub fn root_status(&self) -> Status {
        self.status(self.root)
    }

    /// The start's numbers, as the last step computed them.
    pub fn root_numbers(&self) -> Numbers {
        self.numbers[self.root]
    }

    /// Positions in the tree, nodes expanded and leaf searches run by this run, and the nodes
    /// those searches examined.
    pub fn counts(&self) -> (usize, u64, u64, u64) {
        (self.nodes.len(), self.expanded, self.searched, self.search_nodes)
    }

    /// Whether the attacker moves at this node.
    fn attacking(&self, id: usize) -> bool {
        self.nodes[id].position.turn() == self.attacker
    }

    fn status(&self, id: usize) -> Status {
        let Some(outcome) = self.nodes[id].outcome.filter(|o| o.is_settled()) else {
            return Status::Open;
        };
        // Whether the side to move at this node wins, as the attacker needs it.
        let wanted = self.attacking(id);
        if outcome.proven_win() == Some(wanted) {
            Status::Proven
        } else {
            Status::Refuted
        }
    }

    /// The nodes of `positions` (each with the guide's estimate for the attacker, used if it
    /// is new), those not in the tree yet added with what the record knows of them.
    fn nodes_of(&mut self, positions: &[(Position, f32)]) -> Result<Vec<usize>, R::Error> {
        let new: Vec<(Position, f32)> =
            positions.iter().filter(|(p, _)| !self.index.contains_key(&p.key())).copied().collect();
        let stored = self.record.stored(&new.iter().map(|(p, _)| *p).collect::<Vec<_>>())?;
        for ((position, estimate), stored) in new.iter().zip(stored) {
            if self.index.contains_key(&position.key()) {
                continue; // listed twice
            }
            let moves = position.legal_moves();
            // A royal capture wins by the rules, whatever is stored.
            let outcome = if moves.iter().any(|&mv| position.captures_royal(mv)) {
                Some(Outcome::Proven(Value::Win(1)))
            } else {
                stored
            };
            // A result in the record means an earlier run searched it.
            let searches = if outcome.is_some() { self.steering.leaf_searches } else { 0 };
            self.index.insert(position.key(), self.nodes.len());
            self.nodes.push(Node { position: *position, outcome, estimate: *estimate, searches, children: None });
        }
        Ok(positions.iter().map(|(p, _)| self.index[&p.key()]).collect())
    }

    /// An unexpanded node's numbers, from the guide's estimate: a position it rates well for
    /// the attacker is cheaper to prove; each search that left it open makes it dearer.
    fn leaf_numbers(&self, id: usize) -> Numbers {
        let node = &self.nodes[id];
        let p = node.estimate.clamp(SUREST, 1.0 - SUREST);
        let dearer = 1u32 << node.searches.min(8);
        let proof = (SCALE * (1.0 - p) / p).round().max(1.0) as u32;
        let disproof = (SCALE * p / (1.0 - p)).round().max(1.0) as u32;
        Numbers { proof: proof.saturating_mul(dearer), disproof }
    }

    /// The proof number of the attacker's `k`-th open move (in the guide's order), as the
    /// prover's patience weighs it against the earlier ones.
    fn weighed(&self, proof: u32, k: usize) -> u32 {
        let w = self.steering.patience.unwrap_or(INFINITE).max(1);
        let factor = (0..k.min(32)).fold(1u32, |f, _| f.saturating_mul(w));
        proof.saturating_mul(factor)
    }

    /// Every reachable node's numbers, depth-first from the root. A move back to a node on the
    /// current line counts as refuted (for this line); an attacker's node follows its open
    /// moves in the guide's order and counts the first one; a defender's counts every reply.
    ///
    /// A node whose numbers rest on such a move (or on a node that does) holds for the line it
    /// was reached by only, so it is computed again when another line reaches it, up to
    /// [`RECOMPUTE`] times the tree's size in all; without this, a line cut short by a
    /// repetition once would count as refuted from everywhere, and a provable root could run
    /// out of open leaves.
    fn compute_numbers(&mut self) {
        // Nodes the walk below does not reach (below a settled node) keep numbers of their
        // own, for the report.
        self.numbers = (0..self.nodes.len())
            .map(|id| match self.status(id) {
                Status::Proven => Numbers::PROVEN,
                Status::Refuted => Numbers::REFUTED,
                Status::Open => self.leaf_numbers(id),
            })
            .collect();
        let mut done = vec![false; self.nodes.len()];
        let mut on_path = vec![false; self.nodes.len()];
        let mut loopy = vec![false; self.nodes.len()];
        let mut budget = RECOMPUTE.saturating_mul(self.nodes.len());
        let mut stack = vec![(self.root, 0usize)];
        on_path[self.root] = true;
        while let Some(&(id, next)) = stack.last() {
            let status = self.status(id);
            let children = self.nodes[id].children.as_deref().unwrap_or(&[]);
            if status == Status::Open && next < children.len() {
                let child = children[next].1;
                stack.last_mut().expect("not empty").1 += 1;
                if !done[child] && !on_path[child] {
                    on_path[child] = true;
                    stack.push((child, 0));
                }
                continue;
            }
            self.numbers[id] = match status {
                Status::Proven => Numbers::PROVEN,
                Status::Refuted => Numbers::REFUTED,
                Status::Open if self.nodes[id].children.is_none() => self.leaf_numbers(id),
                Status::Open => {
                    let of = |c: usize| if on_path[c] { Numbers::REFUTED } else { self.numbers[c] };
                    if self.attacking(id) {
                        // The open moves in the guide's order, each later one's proof number
                        // weighed by the prover's patience with the earlier ones.
                        let open: Vec<Numbers> =
                            children.iter().map(|&(_, c)| of(c)).filter(|n| n.proof != INFINITE).collect();
                        match self.steering.patience {
                            None => open.first().copied().unwrap_or(Numbers::REFUTED),
                            Some(_) => Numbers {
                                proof: open
                                    .iter()
                                    .enumerate()
                                    .map(|(k, n)| self.weighed(n.proof, k))
                                    .min()
                                    .unwrap_or(INFINITE),
                                disproof: open.iter().fold(0u32, |sum, n| sum.saturating_add(n.disproof)),
                            },
                        }
                    } else {
                        children.iter().map(|&(_, c)| of(c)).fold(Numbers::PROVEN, |sum, n| Numbers {
                            proof: sum.proof.saturating_add(n.proof),
                            disproof: sum.disproof.min(n.disproof),
                        })
                    }
                }
            };
            loopy[id] = status == Status::Open
                && children.iter().any(|&(_, c)| (on_path[c] && c != id) || (loopy[c] && !done[c]));
            budget = budget.saturating_sub(1);
            done[id] = !loopy[id] || budget == 0;
            on_path[id] = false;
            stack.pop();
        }
    }

    /// The line from `from` to the next leaf to work on, passing over the `chosen` leaves
    /// (taken by this step already): at the attacker's nodes the guide's first open move, at
    /// the defender's the reply likeliest to refute the proof (least disproof number), so that
    /// a bad line is given up early. `None` when no other open leaf is reachable.
    fn most_proving(&self, from: usize, chosen: &HashSet<usize>) -> Option<Vec<usize>> {
        // Nodes found to lead only to chosen leaves or back onto the line: passed over.
        let mut set_aside: HashSet<usize> = HashSet::new();
        'descent: loop {
            let mut line = vec![from];
            let mut on_line = HashSet::from([from]);
            let mut at = from;
            loop {
                if set_aside.contains(&from) || self.status(at) != Status::Open || self.numbers[at].proof == INFINITE {
                    return None;
                }
                let Some(children) = &self.nodes[at].children else {
                    if chosen.contains(&at) {
                        set_aside.insert(at);
                        continue 'descent;
                    }
                    return Some(line);
                };
                let mut open = children.iter().map(|&(_, c)| c).filter(|c| {
                    !on_line.contains(c)
                        && !set_aside.contains(c)
                        && self.status(*c) == Status::Open
                        && self.numbers[*c].proof != INFINITE
                });
                let next = if self.attacking(at) {
                    // Ranked among the moves that are not refuted, as the numbers rank them.
                    let ranked: Vec<usize> =
                        children.iter().map(|&(_, c)| c).filter(|&c| self.numbers[c].proof != INFINITE).collect();
                    match self.steering.patience {
                        None => open.next(),
                        Some(_) => open.min_by_key(|&c| {
                            let k = ranked.iter().position(|&r| r == c).unwrap_or(0);
                            self.weighed(self.numbers[c].proof, k)
                        }),
                    }
                } else {
                    open.min_by_key(|&c| (self.numbers[c].disproof, self.numbers[c].proof))
                };
                let Some(next) = next else {
                    set_aside.insert(at);
                    continue 'descent;
                };
                on_line.insert(next);
                line.push(next);
                at = next;
            }
        }
    }

    /// Runs one step: chooses up to `searches.len()` leaves (expanding, without search, the
    /// leaves already searched enough on the way), searches them side by side (one searcher
    /// each), records what they found and settles what their values settle. `false` when
    /// nothing is left to do: the root is settled, or no open leaf is reachable.
    pub fn step(&mut self, guide: &mut dyn Guide, searches: &mut [Search]) -> Result<bool, R::Error> {
        let mut chosen: Vec<usize> = Vec::new();
        let mut taken = HashSet::new();
        // Expansions never search, so a step may expand many nodes before it finds its leaves.
        let mut expansions = 0;
        while chosen.len() < searches.len().max(1) {
            if self.root_status() != Status::Open {
                break;
            }
            let Some(line) = self.most_proving(self.root, &taken) else { break };
            let leaf = *line.last().expect("a line ends at its leaf");
            if self.nodes[leaf].searches >= self.steering.leaf_searches {
                self.expand(leaf, &line, guide)?;
                expansions += 1;
                self.settle_from_children()?;
                self.compute_numbers();
                if expansions > 10_000 {
                    break;
                }
                continue;
            }
            taken.insert(leaf);
            chosen.push(leaf);
        }
        if chosen.is_empty() {
            return Ok(expansions > 0 && self.root_status() == Status::Open);
        }
        let positions: Vec<(usize, Position, Limits, bool)> = chosen
            .iter()
            .map(|&id| {
                let node = &self.nodes[id];
                let times = 1u32 << (2 * node.searches.min(10));
                let limits = Limits {
                    max_nodes: self.steering.leaf_nodes.saturating_mul(u64::from(times)),
                    time: self.steering.leaf_time.map(|t| t.saturating_mul(times)),
                    ..Limits::nodes(0)
                };
                (id, node.position, limits, self.attacking(id))
            })
            .collect();
        let (record, certified) = (self.record, self.steering.certified);
        let reports: Vec<LeafReport> = std::thread::scope(|scope| {
            let running: Vec<_> = positions
                .iter()
                .zip(searches.iter_mut())
                .map(|(&(id, position, limits, attacking), search)| {
                    scope.spawn(move || {
                        if certified {
                            return search_certified(search, id, &position, &limits, attacking);
                        }
                        let known = search.recall(&position, record);
                        let report = search.prove(&position, &limits);
                        let outcome = known.map_or(report.outcome, |k| k.merge(report.outcome));
                        LeafReport { id, outcome, nodes: report.nodes, spelt: Vec::new() }
                    })
                })
                .collect();
            running.into_iter().map(|t| t.join().expect("a search does not panic")).collect()
        });
        let mut facts = Vec::new();
        for LeafReport { id, outcome, nodes, spelt } in reports {
            self.searched += 1;
            self.search_nodes += nodes;
            let node = &mut self.nodes[id];
            node.searches += 1;
            let merged = node.outcome.map_or(outcome, |o| o.merge(outcome));
            node.outcome = Some(merged);
            let deep =
                !matches!(merged, Outcome::Unknown { no_result_within } if no_result_within < MIN_RECORDED_DEPTH);
            if deep {
                facts.push((node.position.key(), merged));
            }
            facts.extend(spelt);
        }
        self.record.keep(&facts)?;
        self.settle_from_children()?;
        self.compute_numbers();
        Ok(true)
    }

    /// Adds a leaf's children, ranked by the guide, each with the guide's estimate.
    fn expand(&mut self, id: usize, line: &[usize], guide: &mut dyn Guide) -> Result<(), R::Error> {
        let position = self.nodes[id].position;
        let path: Vec<u128> = line[..line.len() - 1].iter().map(|&n| self.nodes[n].position.key()).collect();
        let ranked = guide.rank(&position, &path);
        let attacking = self.attacking(id);
        let mut children: Vec<(Move, Position, f32)> = Vec::new();
        for (mv, score) in ranked {
            if let Ok(Played::Position(child)) = position.play(mv) {
                if !children.iter().any(|c| c.0 == mv) {
                    let for_attacker = if attacking { score } else { 1.0 - score };
                    children.push((mv, child, for_attacker));
                }
            }
        }
        // Moves the guide left out, last, at the worst estimate it gave.
        let worst = children.iter().map(|c| c.2).fold(0.5f32, |w, e| if attacking { w.min(e) } else { w.max(e) });
        for (mv, child) in position.successors() {
            if !children.iter().any(|c| c.0 == mv) {
                children.push((mv, child, worst));
            }
        }
        let ids = self.nodes_of(&children.iter().map(|c| (c.1, c.2)).collect::<Vec<_>>())?;
        self.nodes[id].children = Some(children.iter().map(|c| c.0).zip(ids).collect());
        self.expanded += 1;
        Ok(())
    }

    /// Back-propagation: every expanded, open node whose children's values now settle it gets
    /// that value, kept in the record, until nothing changes.
    pub fn settle_from_children(&mut self) -> Result<(), R::Error> {
        loop {
            let mut facts = Vec::new();
            for id in 0..self.nodes.len() {
                let Some(children) = &self.nodes[id].children else { continue };
                if self.nodes[id].outcome.is_some_and(|o| o.is_settled()) {
                    continue;
                }
                let moves = children.iter().map(|&(_, c)| {
                    self.nodes[c].outcome.unwrap_or(Outcome::Unknown { no_result_within: 0 }).for_mover()
                });
                let Some(derived) = Outcome::from_moves(moves).filter(|o| o.is_settled()) else { continue };
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

    /// The root's moves and where each one's proof stands, the guide's best first (empty
    /// until the root is expanded).
    pub fn branches(&self) -> Vec<Branch> {
        let Some(children) = &self.nodes[self.root].children else { return Vec::new() };
        children
            .iter()
            .map(|&(mv, id)| {
                let mut line = vec![mv];
                if let Some(path) = self.most_proving(id, &HashSet::new()) {
                    line.extend(self.moves_of(&path));
                }
                Branch {
                    mv,
                    outcome: self.nodes[id].outcome,
                    status: self.status(id),
                    estimate: self.nodes[id].estimate,
                    numbers: self.numbers[id],
                    line,
                }
            })
            .collect()
    }

    /// The most-proving line from the root, in moves.
    pub fn most_proving_line(&self) -> Vec<Move> {
        self.most_proving(self.root, &HashSet::new()).map(|path| self.moves_of(&path)).unwrap_or_default()
    }

    /// The moves along a path of nodes.
    fn moves_of(&self, path: &[usize]) -> Vec<Move> {
        path.windows(2)
            .filter_map(|pair| {
                let children = self.nodes[pair[0]].children.as_ref()?;
                children.iter().find(|&&(_, c)| c == pair[1]).map(|&(mv, _)| mv)
            })
            .collect()
    }

    /// The proof's size so far: the attacker's positions in the proof tree of a proven root
    /// (one winning move at each, every reply below it), counting each position once; the
    /// positions the leaf searches settled are leaves of it. `None` while the root is open.
    pub fn proof_size(&self) -> Option<usize> {
        if self.root_status() != Status::Proven {
            return None;
        }
        let mut seen = HashSet::new();
        let mut stack = vec![self.root];
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let Some(children) = &self.nodes[id].children else { continue };
            if self.attacking(id) {
                if let Some(&(_, c)) = children.iter().find(|&&(_, c)| self.status(c) == Status::Proven) {
                    stack.push(c);
                }
            } else {
                stack.extend(children.iter().map(|&(_, c)| c));
            }
        }
        Some(seen.into_iter().filter(|&id| self.attacking(id)).count())
    }
}

#[cfg(test)]
mod tests {
    use shogi4_engine::MaterialIndex;
    use shogi4_tablebase::{solve, Silent, Table};

    use super::*;
    use crate::best_first::InMemory;

    /// A guide from the table itself: the true values, as an oracle-perfect engine would rank.
    struct Perfect<'t>(&'t Table<Vec<u8>>, &'t MaterialIndex);

    impl Guide for Perfect<'_> {
        fn rank(&mut self, position: &Position, _: &[u128]) -> Vec<(Move, f32)> {
            let mut moves: Vec<(Move, f32)> = position
                .successors()
                .map(|(mv, child)| {
                    let value = self.0.value(self.1.index_of(&child)).unwrap();
                    let score = match value {
                        Value::Loss(n) => 1.0 - n as f32 / 1000.0,
                        Value::Win(n) => n as f32 / 1000.0,
                        Value::Draw => 0.5,
                    };
                    (mv, score)
                })
                .collect();
            moves.sort_by(|a, b| b.1.total_cmp(&a.1));
            moves
        }
    }

    /// A guide that knows nothing: the moves in generation order, all even.
    struct Blind;

    impl Guide for Blind {
        fn rank(&mut self, position: &Position, _: &[u128]) -> Vec<(Move, f32)> {
            position.successors().map(|(mv, _)| (mv, 0.5)).collect()
        }
    }

    fn prove(
        record: &InMemory,
        start: Position,
        guide: &mut dyn Guide,
        threads: usize,
        steps: usize,
    ) -> (Status, Option<usize>) {
        // Strict steering with one thread, by the numbers with more.
        let patience = (threads > 1).then_some(1);
        let steering = Steering {
            leaf_nodes: 200,
            leaf_time: None,
            leaf_searches: 1 + (threads as u32 % 2),
            patience,
            certified: false,
        };
        let mut tree = Steered::new(record, start, start.turn(), steering).unwrap();
        let mut searches: Vec<Search> = (0..threads).map(|_| Search::new(1 << 20).with_plan(leaf_plan())).collect();
        for _ in 0..steps {
            if !tree.step(guide, &mut searches).unwrap() {
                break;
            }
        }
        (tree.root_status(), tree.proof_size())
    }

    #[test]
    fn proves_only_what_the_table_says_and_never_refutes_a_win() {
        // Won positions of KKCF beyond what a 200-node search proves alone: proven by the
        // steered prover, steered well and blindly; everything it records is true of the table.
        let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
        let index = MaterialIndex::new(table.header().material);
        let (mut proven, mut tried) = (0, 0);
        for slot in (0..index.slots()).step_by(3_001) {
            let start = index.position_at(slot);
            let truth = table.value(slot).unwrap();
            let mut alone = Search::new(1 << 20);
            if alone.prove(&start, &Limits::nodes(200)).outcome.is_settled() {
                continue;
            }
            tried += 1;
            let record = InMemory::default();
            let (status, size) = if tried % 2 == 0 {
                prove(&record, start, &mut Perfect(&table, &index), 1 + tried % 3, 300)
            } else {
                prove(&record, start, &mut Blind, 1, 300)
            };
            match truth {
                Value::Win(_) => assert_ne!(status, Status::Refuted, "{}", start.to_sfen()),
                _ => assert_ne!(status, Status::Proven, "{}", start.to_sfen()),
            }
            if status == Status::Proven {
                proven += 1;
                assert!(size.is_some_and(|s| s >= 1));
            }
            for (key, kept) in record.facts() {
                let position = Position::from_key(key).unwrap();
                let value = table.value(index.index_of(&position)).unwrap();
                if let Some(win) = kept.proven_win() {
                    assert_eq!(win, matches!(value, Value::Win(_)), "{}", position.to_sfen());
                }
            }
            if proven >= 6 {
                break;
            }
        }
        assert!(proven >= 6, "only {proven} of {tried} positions proven");
    }

    /// A won position of KKCF at 9 to 18 plies that a 200-node search does not prove alone.
    fn deep_win(table: &Table<Vec<u8>>, index: &MaterialIndex) -> Position {
        (0..index.slots())
            .step_by(3_001)
            .map(|slot| index.position_at(slot))
            .find(|p| {
                let win = matches!(table.value(index.index_of(p)).unwrap(), Value::Win(n) if (9..19).contains(&n));
                win && !Search::new(1 << 20).prove(p, &Limits::nodes(200)).outcome.is_settled()
            })
            .expect("a deep win")
    }

    #[test]
    fn a_second_run_over_the_record_goes_on_without_searching_again() {
        let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
        let index = MaterialIndex::new(table.header().material);
        let start = deep_win(&table, &index);
        let record = InMemory::default();
        let (status, _) = prove(&record, start, &mut Perfect(&table, &index), 1, 1000);
        assert_eq!(status, Status::Proven, "{} {:?}", start.to_sfen(), table.value(index.index_of(&start)));
        let steering =
            Steering { leaf_nodes: 200, leaf_time: None, leaf_searches: 1, patience: None, certified: false };
        let again = Steered::new(&record, start, start.turn(), steering).unwrap();
        assert_eq!(again.root_status(), Status::Proven);
    }

    /// A certified run leaves a record from which the certificate is written without one
    /// search; the same run uncertified leaves leaves that need searching.
    #[test]
    fn a_certified_run_leaves_a_record_the_assembler_spells_out_without_searching() {
        let table = Table::new(solve("KKCF".parse().unwrap(), &Silent).table.to_bytes()).unwrap();
        let index = MaterialIndex::new(table.header().material);
        let start = deep_win(&table, &index);
        let mut searched = Vec::new();
        for certified in [true, false] {
            let record = InMemory::default();
            let steering =
                Steering { leaf_nodes: 200, leaf_time: None, leaf_searches: 2, patience: Some(1), certified };
            let mut tree = Steered::new(&record, start, start.turn(), steering).unwrap();
            let mut searches = vec![Search::new(1 << 20).with_plan(leaf_plan())];
            while tree.step(&mut Perfect(&table, &index), &mut searches).unwrap() {}
            assert_eq!(tree.root_status(), Status::Proven, "certified: {certified}");
            for (key, kept) in record.facts() {
                let position = Position::from_key(key).unwrap();
                if let Some(win) = kept.proven_win() {
                    let value = table.value(index.index_of(&position)).unwrap();
                    assert_eq!(win, matches!(value, Value::Win(_)), "{}", position.to_sfen());
                }
            }
            let mut search = Search::new(1 << 20);
            let assembler = crate::assemble::Assembler::new(&record, &mut search, Limits::nodes(100_000), start, true);
            let (certificate, _, leaves, failed) = assembler.assemble();
            let verdict = shogi4_certificate::verify(&certificate.expect("assembled").to_bytes()).unwrap();
            assert!(verdict.root_wins && failed == 0);
            searched.push(leaves);
        }
        assert_eq!(searched[0], 0, "the certified record needed leaf searches");
        assert!(searched[1] > 0, "the uncertified record needed none: the test shows nothing");
    }
}
