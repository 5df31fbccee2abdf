//! The driver of a search: iterative deepening for exact distances, then the deep questions
//! ([`Plan`]) asked of df-pn (`dfpn.rs`) and the value search (`value.rs`), then the proven
//! range narrowed. [`Prover::establish`] is where a budget is split between them.

use std::time::Instant;

use shogi4_engine::Position;
use shogi4_tablebase::Value;

use crate::numbers::Question;
use crate::outcome::{distance_from, Outcome};
use crate::prover::{Aborted, Prover};
use crate::table::MAX_DEPTH;
use crate::value::Settled;

/// How a search splits its budget between iterative deepening (exact distances) and deep
/// questions (proven values with distance bounds); each search follows one (see `Search::with_plan`).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The share of the budget that iterative deepening gets.
    pub deepening: f64,
    /// The deep questions, asked in turn with equal shares of what is left: for each horizon,
    /// "win?" and "loss?" of the side to move.
    pub bounds: Vec<Horizon>,
    /// How often the two questions of a distance are asked in turn, each turn with twice the
    /// budget of the one before.
    pub rounds: u32,
    /// How a proven value's range is narrowed with what is left of the budget.
    pub narrowing: Narrowing,
}

/// How far a deep question looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Horizon {
    /// Within a distance: "win within" the odd one of it and its even neighbour, "loss
    /// within" the even one (df-pn over (position, depth) nodes, `dfpn.rs`).
    Within(u32),
    /// At any distance (df-pn over positions, `value.rs`); the proof's own bound is the
    /// upper bound.
    Unbounded,
}

/// One deep question as [`Prover::establish`] asks it.
#[derive(Clone, Copy, Debug)]
enum Ask {
    /// "Win within" (or "loss within") a distance.
    Within(u32, Question),
    /// "Win or loss?" at any distance, by the question that looks cheaper.
    Either,
}

/// How a proven value's distance range is narrowed after the deep question that proved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrowing {
    /// Two questions just past the lower bound, then bisection: "yes" lowers the upper
    /// bound, "no" raises the lower one (see `Prover::tighten`).
    Bisect,
    /// Deepening from the lower bound (the value's own question only), for the exact
    /// distance of values not far beyond it.
    Deepen,
    /// Not at all: the range as the questions left it.
    Keep,
}

impl Default for Plan {
    /// The split measured best on the reach script's sets (the runs: `docs/measurements.md`, "The search's budget split and the cost of a node").
    fn default() -> Plan {
        Plan { deepening: 0.05, bounds: vec![Horizon::Unbounded], rounds: 1, narrowing: Narrowing::Bisect }
    }
}

impl Plan {
    /// Deepening alone, for exact distances only: the search before deep questions.
    pub fn exact_only() -> Plan {
        Plan { deepening: 1.0, bounds: Vec::new(), rounds: 0, narrowing: Narrowing::Keep }
    }
}

/// The farthest step past the lower bound that narrowing gallops to before it bisects.
const GALLOP_MAX: u32 = 4;

/// A budget as absolute limits.
#[derive(Clone, Copy, Debug)]
struct Limit {
    max_nodes: u64,
    deadline: Option<Instant>,
}

impl Limit {
    /// Whether a search under this limit stops by itself: a node budget or a deadline.
    fn has_an_end(&self) -> bool {
        self.max_nodes != u64::MAX || self.deadline.is_some()
    }
}

/// A budget as amounts left.
#[derive(Clone, Copy, Debug)]
struct Budget {
    nodes: u64,
    time: Option<std::time::Duration>,
}

impl Prover<'_> {
    /// The budget in force, as absolute limits.
    fn limit(&self) -> Limit {
        Limit { max_nodes: self.max_nodes, deadline: self.deadline }
    }

    /// What is left of `limit` now.
    fn left_of(&self, limit: Limit) -> Budget {
        Budget {
            nodes: limit.max_nodes.saturating_sub(self.nodes),
            time: limit.deadline.map(|d| d.saturating_duration_since(Instant::now())),
        }
    }

    /// Sets the budget to `share` of `budget`, counted from now.
    fn spend(&mut self, budget: Budget, share: f64) {
        let nodes = (budget.nodes as f64 * share) as u64;
        self.budget(nodes, budget.time.map(|t| Instant::now() + t.mul_f64(share)));
    }

    /// What the search can establish about `position` within the budget, and within
    /// `max_depth` plies: the exact distance when iterative deepening reaches it, else a
    /// proven value with distance bounds when one of the deep questions is answered "yes", or
    /// a draw when the value questions refute both results (see `value.rs`), else the depth to
    /// which neither side has a forced result.
    ///
    /// The budget is split by `plan`: deepening first, for the exact distance of the
    /// near results; then the plan's deep questions (depth-bounded, "win within `D`" and
    /// "loss within `D − 1`", or at any distance), each with an equal share of what is left;
    /// then, if a value was proven, its range narrowed as the plan's [`Narrowing`] says, with
    /// whatever remains. The budget in force when it was called is in force again when it
    /// returns.
    pub fn establish(&mut self, position: &Position, max_depth: u32, plan: &Plan) -> Outcome {
        let max_depth = max_depth.min(MAX_DEPTH);
        let whole = self.limit();
        self.spend(self.left_of(whole), plan.deepening);
        let (found, established) = self.deepen(position, max_depth);
        let outcome = match found {
            Some(dtw) => Outcome::Proven(Value::from_dtw(dtw)),
            None => self.ask_deep(position, max_depth, established, whole, plan),
        };
        self.max_nodes = whole.max_nodes;
        self.deadline = whole.deadline;
        outcome
    }

    /// The deep questions of [`Prover::establish`], past the depth `established` that
    /// deepening completed.
    fn ask_deep(
        &mut self,
        position: &Position,
        max_depth: u32,
        established: u32,
        whole: Limit,
        plan: &Plan,
    ) -> Outcome {
        // Questions are placed relative to the deepest allowed distance, so that a move's
        // search (one ply shallower) asks its position exactly what its parent's question
        // asked of it, and finds the parent's proof in the table.
        let shift = MAX_DEPTH - max_depth;
        let mut questions: Vec<(Ask, f64)> = Vec::new();
        for horizon in &plan.bounds {
            // The questions in turn, each turn with twice the budget of the one before:
            // df-pn resumes from the numbers it left in its table, so a question asked again
            // goes on where it stopped, and the side that is easier to prove is found early.
            for round in 0..plan.rounds {
                let weight = f64::from(1u32 << round);
                match *horizon {
                    // Both questions under one root, with the weight of two. Asked even when
                    // deepening has covered every distance asked about, if the budget has an end:
                    // a proof could not be used then (its bound lies past `max_depth`), but a draw
                    // can, and such a position is where draws are. Skipping them made a larger
                    // budget answer less: a position drawn within 300 ms was unknown within 1 s,
                    // its deepening having reached the deepest distance first. Without a budget
                    // the question is not asked then, since it may have no end.
                    Horizon::Unbounded if established < max_depth || whole.has_an_end() => {
                        questions.push((Ask::Either, 2.0 * weight))
                    }
                    Horizon::Unbounded => {}
                    Horizon::Within(bound) => {
                        let Some(bound) = bound.checked_sub(shift) else { continue };
                        // Wins at odd depths, losses at even ones.
                        let (win, loss) = if bound % 2 == 1 { (bound, bound - 1) } else { (bound - 1, bound) };
                        for (depth, question) in [(win, Question::Win), (loss, Question::Loss)] {
                            if depth > established && depth <= max_depth {
                                questions.push((Ask::Within(depth, question), weight));
                            }
                        }
                    }
                }
            }
        }
        // What the questions refute: no win within `no_win`, no loss within `no_loss`.
        let (mut no_win, mut no_loss) = (established, established);
        for asked in 0..questions.len() {
            let (ask, weight) = questions[asked];
            if let Ask::Within(depth, question) = ask {
                if depth <= if question == Question::Win { no_win } else { no_loss } {
                    continue;
                }
            }
            let weights: f64 = questions[asked..].iter().map(|q| q.1).sum();
            self.spend(self.left_of(whole), weight / weights);
            let answer = match ask {
                Ask::Within(depth, question) => {
                    self.prove_by_numbers(position, depth, question).map(|yes| yes.then_some((question, depth)))
                }
                Ask::Either => match self.prove_either(position) {
                    Ok(Some(Settled::Drawn)) => return Outcome::Proven(Value::Draw),
                    Ok(Some(Settled::Won(win, b))) => Ok(Some((if win { Question::Win } else { Question::Loss }, b))),
                    Ok(None) => Ok(None),
                    Err(e) => Err(e),
                },
            };
            match answer {
                // A proof whose bound lies past the deepest distance asked about is not used:
                // every answer stays within `max_depth`.
                Ok(Some((question, within))) if within <= max_depth => {
                    self.spend(self.left_of(whole), 1.0);
                    let win = question == Question::Win;
                    let at_least = if win { no_win + 1 } else { no_loss + 1 };
                    return match plan.narrowing {
                        Narrowing::Bisect => self.tighten(position, win, at_least, within),
                        Narrowing::Deepen => self.deepen_within(position, win, at_least, within),
                        Narrowing::Keep => Outcome::won(win, at_least, within),
                    };
                }
                Ok(None) => match ask {
                    Ask::Within(depth, Question::Win) => no_win = no_win.max(depth),
                    Ask::Within(depth, Question::Loss) => no_loss = no_loss.max(depth),
                    // Both refuted, but a line met the horizon: nothing for sure (see `value.rs`).
                    Ask::Either => {}
                },
                Ok(Some(_)) | Err(Aborted) => {}
            }
        }
        Outcome::Unknown { no_result_within: no_win.min(no_loss) }
    }

    /// A proven value whose distance lies in `at_least..=at_most`, the lower bound raised by
    /// iterative deepening (the value's own question only) while the budget lasts.
    fn deepen_within(&mut self, position: &Position, win: bool, at_least: u32, at_most: u32) -> Outcome {
        let mut at_least = distance_from(at_least, win);
        let question = if win { Question::Win } else { Question::Loss };
        while at_least < at_most {
            match self.prove_by_numbers(position, at_least, question) {
                Ok(true) => return Outcome::won(win, at_least, at_least),
                Ok(false) => at_least += 2,
                Err(Aborted) => break,
            }
        }
        Outcome::won(win, at_least, at_most)
    }

    /// A proven value whose distance lies in `at_least..=at_most`, the range narrowed while
    /// the budget lasts by questions that gallop up from the lower bound (at it, then 2 and
    /// 4 plies past each refuted one, at most [`GALLOP_MAX`]) and then bisect: "yes" lowers
    /// the upper bound, "no" raises the lower one. Most distances lie just past what
    /// deepening refuted, and galloping finds those in a few questions; a far one still takes
    /// only a logarithmic number.
    fn tighten(&mut self, position: &Position, win: bool, at_least: u32, mut at_most: u32) -> Outcome {
        let parity = u32::from(win);
        let mut at_least = distance_from(at_least, win);
        let question = if win { Question::Win } else { Question::Loss };
        // While galloping: how far past the lower bound the next question is (even, so the
        // parity holds); `None` once bisecting.
        let mut gallop = Some(0);
        while at_least < at_most {
            let probe = match gallop {
                Some(offset) if at_least + offset < at_most => at_least + offset,
                _ => {
                    gallop = None;
                    // The midpoint, rounded down to the value's parity (and below `at_most`).
                    let middle = at_least + (at_most - at_least) / 2;
                    if middle % 2 != parity {
                        middle - 1
                    } else {
                        middle
                    }
                }
            };
            match self.prove_by_numbers(position, probe, question) {
                Ok(true) => {
                    at_most = probe;
                    gallop = None;
                }
                Ok(false) => {
                    at_least = probe + 2;
                    gallop = gallop.map(|offset: u32| (offset * 2).max(2)).filter(|&offset| offset <= GALLOP_MAX);
                }
                Err(Aborted) => break,
            }
        }
        Outcome::won(win, at_least, at_most)
    }

    /// Iterative deepening up to `max_depth`: `Ok(Some(d))` when the first result comes at
    /// depth `d` (the exact distance to win), `Ok(None)` when there is none within
    /// `max_depth`, and the last depth completed with no result when the budget runs out.
    pub fn deepen(&mut self, position: &Position, max_depth: u32) -> (Option<u32>, u32) {
        if position.can_capture_royal() {
            return (Some(1), 1);
        }
        if position.has_no_legal_move() {
            return (Some(0), 0);
        }
        // Neither a win in 1 nor a loss in 0.
        let mut established = 1;
        for d in 2..=max_depth.min(MAX_DEPTH) {
            // Each question by df-pn: measured on 300 real-game positions at 1 s, it proves a
            // little more than the plain search in move order (56.3% against 55.3%) and
            // reaches longer proofs (19 plies against 16).
            let question = if d % 2 == 1 { Question::Win } else { Question::Loss };
            let found = self.prove_by_numbers(position, d, question);
            match found {
                Ok(true) => return (Some(d), d),
                Ok(false) => established = d,
                Err(Aborted) => break,
            }
        }
        (None, established)
    }
}
