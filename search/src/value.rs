//! Value proofs: df-pn without a depth, for "does the side to move win, however far?" (and
//! "does it lose?"), with an upper bound on the distance read off the proof.
//!
//! The depth-bounded questions of `dfpn.rs` key every node by (position, depth), so a deep
//! question such as "win within 121" meets each position at dozens of depths, each searched
//! apart. Here a node is (position, question) alone: every transposition is one node, at any
//! depth. What a depth used to guarantee, that the graph has no cycles, is replaced by the
//! path:
//!
//! - **A proof holds whatever the path.** It is a finite tree whose leaves are royal
//!   captures (or a player without a move), so it is recorded as a fact, with its bound: an
//!   OR node wins within one more ply than the proven child's loss, an AND node loses within
//!   one more than the slowest of its children's wins (two, for a move that exposes the
//!   royal). Those bounds are true of the strategy the tree describes, so they are true upper
//!   bounds on the distance. A proof is only ever built from proofs, never from a disproof.
//! - **A disproof may depend on the path.** A position met again on the current path is a
//!   repetition, a draw for this line, so it refutes the question here, but not from another
//!   path (history never changes a value: the same position reached otherwise may well be
//!   won). Such a refutation, and every refutation built on one, is marked as the path's
//!   own: it is used by the nodes above it on this path, never stored. So is the path's
//!   horizon ([`MAX_PATH`] plies, which bounds the recursion as the deepest question does for
//!   the depth-bounded search). A refutation that depends on no path is one whose leaves are
//!   all captures of the questioner's royal: it is the opposite result, proven, and its
//!   numbers are stored as settled.
//!
//! A disproof is claimed in one case only, a **draw**: when both questions of the root are
//! refuted ([`Settled::Drawn`]). Every line of each refutation then ends in the questioner's
//! proven defeat or in a repetition of a position on the line, since the root has no path
//! above it; the defender of each question can follow its refutation for ever, going back to
//! the repeated position each time, so the questioner never captures the royal. Neither side
//! can force a result: a draw. A refutation that met the path's horizon proves nothing (the
//! line was cut, not repeated), so a search that met it anywhere claims no draw. The
//! differential test against the tables checks every draw it claims. Otherwise nothing a
//! disproof says is claimed: a wrong one could cost a proof, never make one.
//!
//! Such draws are rare where players are, and take long searches: within 1 s a position, none
//! of the reach script's 600. Searched again with up to 64 M nodes each, of the 32 self-play
//! positions left unknown within 1 s one is proven drawn (`4/Rt1c/c2k/1KF1 b Tfr 1`, which the
//! set holds twice, after 18.4 M nodes; 9 others won or lost); of the 23 random playouts, with
//! up to 128 M nodes, one (`f1t1/1c1C/1R2/KR1k b Ft 1`, after 75.6 M). Background searches,
//! whose budgets grow, reach such draws. A search of a closed game as if untabled proves some
//! of its table's draws (the differential test's 2,000 nodes a position: 55 of about 100,000
//! positions).
//!
//! **No shortcut loops.** The depth-bounded search answers its last questions ("win within 3",
//! "loss within 4") by plain loops (`dfpn.rs`); this one did too, at each node's first visit,
//! until counting showed where its nodes went. On 20 careful-play positions left unknown at
//! 8 M nodes, the loops took 48% of the value search's nodes and failed 96–97% of the time: a
//! failed "loss within 4" cost 24 nodes on average and told nothing that the node's expansion
//! did not find again. The numbers settle those nodes as cheaply: a child without a safe move
//! is known when its parent is expanded. Without the loops, on the reach script's sets of 200:
//! at 8 M nodes careful play 138 → 145 proven as a value, self-play 140 → 149, random 167 →
//! 167; within 1 s on this machine, the same run alternating the two builds, careful 141 and
//! 144 → 145 and 146, self-play 146 → 149, random 167 → 166; within 100 ms careful 94 and 96
//! → 98 and 97, self-play 117 and 120 → 117 and 118, random 146 and 145 → 148 and 150. (Before
//! ε = ¼ and the node budgets, skipping them had measured 67.5% against 70.5% within 1 s.)
//! Keeping "win within 3" alone: careful 146, self-play 145 within 1 s. Without the loops, at
//! 8 M nodes (careful / self-play, 145 / 149 as kept): ε = ½ or ⅛ (145 / 148, 143 / 146);
//! deepening's share 0.1 or 0.3 (146 / 149, 145 / 145); the depth-bounded search's "win within
//! 5" loop dropped too (144 / 147), and its "loss within 4" as well (147 / 149, but exactly
//! 75 / 111 against 75 / 115, and a sixth fewer nodes a second).
//!
//! **Children's numbers from the table.** When a node is expanded, each open child takes its
//! numbers from the number table, and only a child without an entry has its moves counted for
//! starting numbers; a child whose entry says refuted is marked refuted whatever the path,
//! since only such refutations are stored. Before, a transposed refutation read as an open
//! child with a disproof number of 0, so its parent's refutation counted as the path's own and
//! was not stored. A safe move's position is not asked whether it can take the royal: the move
//! kept the royal safe (in `dfpn.rs` too). At 8 M nodes: careful 145 → 145, random 167 → 168,
//! self-play 149 → 149; at 2 M nodes careful 121 → 122; 2% more nodes a second.
//!
//! The entries are read when the node is expanded, not again after each child's expansion
//! (which may change a sibling's entry through a transposition: the sibling's numbers then
//! stay as read until the node's next expansion). With the reads after each child, the
//! search proved one more position at 8 M nodes on careful play and random playouts when
//! first measured (145 and 168); with the guess and the unit of 4 (`numbers.rs`) the same at 2
//! and 8 M nodes on all three sets but one fewer random playout (171 against 172), two more
//! careful-play positions at 12 M nodes (161 against 159), at 2.5–4% more CPU
//! (`scripts/search-reach.sh 200 2000000n`, alternating); within 1 s careful play 156 and 156
//! against 157 and 156 without them. A wash in what is proven; on the careful-play positions
//! still unknown after 1 s those reads took 6% of the time, so they go.
//!
//! Tried and dropped in the same round: the children of recently expanded nodes kept for
//! their re-entries (direct-mapped, 8,192 families a search; only 27% of expansions found
//! their family, 43% even with 524,288, since most expansions are first visits; 6% fewer nodes
//! a second at 8,192); simulation (after Kawano: the attack that beat one defence replayed
//! move for move against each open sibling, the model's moves read off the recorded facts,
//! no search; 15–17% of the attempts proved the sibling, at about 20 positions an attempt,
//! and at 2 M nodes the careful set fell from 122 to 119, or to 116 when a defence the model
//! lacks was answered as the model's move to the same square or its first move); starting
//! numbers that count the other side's safe moves too, as if it were to move, for the number
//! that is 1 today (a "win?" node's proof number, a "loss?" node's disproof number: at 2 M
//! nodes careful 122 → 86, or 110 with a quarter of that count).
//!
//! Tried and dropped, on the reach script's 200 careful-play positions at 1 s (70.5% proven
//! as a value with what was kept then): storing the refutations that rest only on repetitions of
//! the node itself or of positions below it (they hold from any path; 69.5%); the short
//! results' loops extended to "win within 5" (58.5%); proven facts kept
//! first when the fact table replaces an entry (65.5–66.0%); refutations resting on the path
//! stored as very large proof numbers instead of not at all (70.5%); a 256 MiB table instead
//! of 64 (70.5%).
//!
//! Tried and dropped later, on the same 200 positions with a budget of 8 M nodes (the same searches
//! on every run; 137 proven as a value with what was kept then): a sibling's winning move tried first
//! (138, and one fewer on the random set); with that move on, the attacker's moves restricted to
//! threats of the royal, as two more questions under the root beside the full ones (138 again, at a
//! third of the speed), and a horizon of 60 or 120 plies instead of 250 (138 again); drops counted
//! once per kind, or per four squares, in a node's starting numbers (130, 134); a node's starting
//! numbers with its mobility halved, doubled, quadrupled or squared (131, 138, 133, 120), or none
//! on the winner's side (136); deepening's share at 0.1 or 0.3 instead of 0.2 (139 and 138, exactly
//! 79 and 83 against 80). Within 1 s and before ε = ¼ (see `numbers.rs`): weak proof numbers (an
//! AND node's proof number the largest child's plus one for each other open child, against the
//! overcounting of transpositions; 50.0% against 64.5%). Of the 62 left unproven with the sibling's
//! move on, 24 are proven with eight times the budget (13 of them losses).
//!
//! Tried and dropped with the loops still on (8 M nodes, careful play, 138 with what was
//! kept): four-way fact-table buckets, so that more hands of a board meet (138); starting
//! numbers scaled by the plies left to a path length of 16 or 40 (117, 136) or growing with the
//! path (137); children that threaten the royal first among equal numbers, below "win?" or
//! below "loss?" nodes (137, 138); the wins in 3 that "loss within 4" finds recorded as facts
//! (139); the move count skipped for children that already have numbers (the same answers,
//! and no faster). Nor does keeping a child's starting numbers in the number table, in a slot
//! that is empty or holds other starting numbers (never displacing an expanded node's, so the
//! search stays the same): a third of the move counts were found there instead (11.3 M of
//! 34.4 M on 60 careful-play positions at 2 M nodes), but the writes cost more than the counts
//! saved, 2–3% fewer nodes a second (alternating, the same answers). The budget itself: of the 62 positions unknown at 8 M nodes, 16 M proves
//! 10, 32 M 18 and 64 M 26 (82% of the set), about eight more positions per doubling.
//!
//! **The path's own refutations are rare.** Such a refutation rests on the path only up to the
//! deepest position it repeats (up to the node's parent if it meets the horizon), so it holds
//! again whenever the node is reached below that same entry of the path. Kept for that (each
//! path entry numbered at its push, a refutation valid while its entry's number is unchanged),
//! on 10 careful-play positions at 2 M nodes each: 4,228 recorded and 751 reused in 20 M nodes,
//! so the re-searches they cause cost little; the careful set at 2 M nodes went from 122 to 119
//! proven as a value (a changed search order), and the code was dropped.
//!
//! **Three more tried and dropped**, at 2 M nodes a position (`scripts/search-reach.sh 200
//! 2000000n`; as kept, careful play 122, random 159 and self-play 130 proven as a value):
//! - The root favouring "win?", which alone proves three times as many careful-play positions
//!   as "loss?": going on with it until its proof number passes two or four times the other
//!   question's instead of once: careful 124 and 122, random 159 and 158 (three times: 158),
//!   self-play 130 and 130; at 8 M nodes, careful 145 against 145.
//! - A child's starting proof number raised by what deepening refuted for it: times
//!   `1 + r/2`, `1 + r/4` or `1 + r/8` for a child known not to win (or lose) within `r`
//!   plies: careful 125, 120 and 123, the spread of any changed order.
//! - The summed side of each node's numbers damped, between the sum kept and the weak proof
//!   numbers above: the largest child's number plus half, or a quarter, of the others': careful
//!   121 and 98 (the depth-bounded search's numbers damped too: exactly 29 and 18 against 36).
//!
//! **Hands in the starting numbers, tried and dropped** (same runs as above): the mobility
//! side of a child's starting numbers times one more than its mover's lead in pieces in hand,
//! and the other side (1 today) one more than its deficit: careful 125 against 122 at 2 M
//! nodes and 147 against 145 at 8 M, random 159 and self-play 131 against 159 and 130 at 2 M
//! (self-play exactly 104 against 105). The lead alone on the mobility side, the deficit alone,
//! both doubled, or as powers of two: careful 122, 121, 122, 121. Drops decide attacks here,
//! but how many pieces a side holds does not tell the search where a proof is near.
//!
//! **Threats in the starting numbers, tried and dropped** (2 M nodes, careful play 122 as
//! kept): the number that is 1 today set to 2 for a "loss?" child whose royal is not
//! threatened (121) or is (122; exactly 38 against 36), or for a "win?" child whose royal is
//! threatened (118) or is not (114). Mobility already counts what a threat does: a threatened
//! side has few safe moves. Nor does a smaller table run faster: 16 MiB instead of 64 within
//! 1 s, alternating, proved 70.0% and 71.0% as a value against 72.0% and 71.0%, and 35.0% and
//! 34.5% exactly against 39.0% twice, at 8.2–8.8 M nodes a second against 8.4–8.6.
//!
//! **Who looks ahead, in the starting numbers (kept).** Where the tweaks above asked what a
//! position's own moves say, a model trained on the opening prover's proofs says who tends to
//! win such positions (`guess.rs`): a child's starting numbers lean toward that side
//! (`numbers::starting_numbers`). At 2 M nodes careful play went from 122 to 129 proven as a
//! value (36 to 44 exactly, with the depth-bounded search leaning too), self-play from 130 to
//! 142: the largest step any starting-number change made here. Figures in `guess.rs`.
//!
//! **Drops to one square counted once, tried and dropped** (2 M nodes, with the guess: careful
//! play 129, self-play 141, random 162 as kept). Different pieces dropped on the same square
//! often lead to the same proof, so a node's summed number could take only the largest of
//! theirs (as tsume-shogi solvers do for interpositions): below "loss?" nodes careful 127,
//! self-play 143, random 160; below "win?" nodes 129, 143, 162; below both 128, 143, 162. All
//! moves to one square counted once (board moves too): 126 and 123 on careful play.
//!
//! **The guess beyond the frontier, tried and dropped** (2 M nodes, careful play 137 as kept
//! with `numbers::VALUE_UNIT`). The lean acts on a child's starting numbers only; once the
//! child is expanded its numbers come from below and the guess no longer counts. Kept on for
//! good, as a weight on every open child's numbers in its parent's step (the limits handed
//! down converted back, rounded so that reaching them still passes the parent's): the
//! weights multiply along a line, so a favoured line's numbers shrink with its depth and the
//! search dives; 3 of 200 proven with weights of `2^(s/4)` for log-odds `s`. As an edge cost
//! added to the parent's own number of a child whose mover the guess favours (as df-pn+
//! charges moves it does not like), a cost of 0.2, 0.5 and 1 times `4s`: 135, 133 and 130.
//!
//! **Children's positions built only where needed** (the move kept in the child instead, the
//! position made again to count its moves or to expand it), since many children are settled
//! by a table read: the same searches, slightly more instructions, and 8.5–8.75 s against
//! 7.05–7.8 s on the 44 positions below at 2 M nodes. A transposition table eight times as
//! large (512 MiB) gave exactly the same answers at 4 M nodes on careful play and random
//! playouts: its capacity, and so its replacement policy, is not what limits the search.
//!
//! **Where a value search's expansions go** (44 careful-play positions still unknown after 1 s,
//! 2 M nodes each): 7.16 M expansions, 32% of them of a node that already had numbers, 92%
//! ending at a threshold rather than settled; the path averaged 10.4 plies, and 41,540
//! refutations were the path's own. The search is broad and shallow, as df-pn is with
//! numbers summed over many moves.
//!
//! **Two more tried and dropped** (2 M nodes a position; as kept, careful play 137 / 43,
//! self-play 143 / 106, random 163 / 132, proven as a value / exactly):
//! - A refutation that holds whatever the path proves the opposite result, with a bound read
//!   off its children like a proof's; recorded as that fact, so that the other question of the
//!   same position (asked under the other root question) finds it at once: 238,823 such facts
//!   beside 278,221 proofs on the 44 positions above, but careful play 136 / 43, self-play
//!   144 / 106, random 162 / 132, and at 8 M nodes careful play 153 against 155.
//! - "Win?" nodes searched over their best moves only, by starting proof number (a proof over
//!   some moves is a proof; a refutation of such a node is the path's own): 4 moves, careful
//!   play 123, self-play 131, random 156; 8 moves, 137, 142, 163; 4 moves only 8 plies or more
//!   from the root, careful 138 and self-play 142; 6 from 4 plies, 136 and 143.
//!
//! **No symmetries in the tables.** The fact table is keyed by the position as it stands, not
//! by a canonical image under the mirror and the colour flip. Counted before deciding: of
//! 24.7 M fact-table misses of the value search (60 careful-play positions, 1 M nodes each),
//! the mirror image was recorded for 1 and a colour-flipped image for 315. One search rarely
//! meets a position's images, so looking them up would cost more than it finds. The proof
//! store, which serves many searches, does use them.

use shogi4_engine::{Move, Position};

use crate::guess::ChildGuesses;
use crate::numbers::{grow, starting_numbers, step, Question, Step, INFINITE, VALUE_UNIT};
use crate::prover::{Aborted, Prover, MAX_DEPTH};
use crate::table::{key_of, mix, Depth, UNKNOWN};

/// The deepest path a value search follows: past it a node counts as refuted for this path.
const MAX_PATH: usize = MAX_DEPTH as usize;

/// The number table's depth for value nodes: no depth-bounded question comes near it.
fn slot(question: Question) -> u32 {
    match question {
        Question::Win => u32::MAX,
        Question::Loss => u32::MAX - 1,
    }
}

/// What the two value questions under one root settle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The side to move wins (`true`) or loses, within the bound.
    Won(bool, u32),
    /// Both questions refuted, by lines that each end in the questioner's proven defeat or
    /// in a repetition, never at the horizon: neither side can force the royal capture.
    Drawn,
}

/// What is known of a node without expanding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// Proven, within this many plies.
    Proven(u32),
    /// Refuted whatever the path (the opposite result holds).
    Refuted,
    /// Refuted on this path only: a repetition, the horizon, or a refutation built on one.
    RefutedHere,
}

/// A child of an expanded node.
pub(crate) struct Child {
    /// The move that leads to it.
    mv: Move,
    position: Position,
    key: u128,
    known: Option<Known>,
    /// Its numbers when it was last expanded from here, else those it started with.
    numbers: (u32, u32),
}

/// What an expansion ends with: the node's numbers, and for a proven node its bound, for a
/// refuted one whether the refutation is the path's own.
#[derive(Clone, Copy, Debug)]
struct Expanded {
    proof: u32,
    disproof: u32,
    bound: u32,
    here: bool,
}

impl Expanded {
    fn numbers(self) -> (u32, u32) {
        (self.proof, self.disproof)
    }

    fn of(known: Known) -> Expanded {
        match known {
            Known::Proven(bound) => Expanded { proof: 0, disproof: INFINITE, bound, here: false },
            Known::Refuted => Expanded { proof: INFINITE, disproof: 0, bound: 0, here: false },
            Known::RefutedHere => Expanded { proof: INFINITE, disproof: 0, bound: 0, here: true },
        }
    }
}

/// The positions on the current path, with a small counting filter in front of the list so
/// that most lookups (positions not on it) cost one memory read.
struct Path {
    keys: Vec<u128>,
    filter: Vec<u16>,
}

const FILTER_SLOTS: usize = 1 << 12;

impl Path {
    fn new() -> Path {
        Path { keys: Vec::with_capacity(MAX_PATH + 1), filter: vec![0; FILTER_SLOTS] }
    }

    fn slot(key: u128) -> usize {
        mix(key, 0) as usize & (FILTER_SLOTS - 1)
    }

    fn contains(&self, key: u128) -> bool {
        self.filter[Path::slot(key)] > 0 && self.keys.contains(&key)
    }

    fn push(&mut self, key: u128) {
        self.filter[Path::slot(key)] += 1;
        self.keys.push(key);
    }

    fn pop(&mut self) {
        if let Some(key) = self.keys.pop() {
            self.filter[Path::slot(key)] -= 1;
        }
    }
}

impl Prover<'_> {
    /// Whether the side to move wins or loses at any distance (with the proof's bound), both
    /// questions asked under one virtual OR root: each step goes on with the question whose
    /// proof looks cheaper (the smaller proof number), until its number passes the other's
    /// (with the same slack as every threshold), so that the effort goes where the proof is
    /// nearer instead of half to each. A draw when both are refuted and no line met the
    /// horizon; `Ok(None)` when both are refuted and one did.
    ///
    /// Other slacks between the two, at 2 M / 8 M nodes a position (careful play 137 / 155
    /// proven as a value with this one): twice the other's number, 134 / 152; one more than it,
    /// 135 / 154 (random playouts 162 / 172 and 161 / 172, against 163 / 172).
    pub(crate) fn prove_either(&mut self, position: &Position) -> Result<Option<Settled>, Aborted> {
        let key = key_of(position);
        self.met_horizon = false;
        let mut path = Path::new();
        // Each question's numbers as last seen; `None` once refuted.
        let mut open = [Some((1u32, 1u32)), Some((1, 1))];
        let questions = [Question::Win, Question::Loss];
        loop {
            for (i, &question) in questions.iter().enumerate() {
                if open[i].is_some() {
                    match self.value_known(position, key, question) {
                        Some(Known::Proven(bound)) => return Ok(Some(Settled::Won(question == Question::Win, bound))),
                        Some(_) => open[i] = None,
                        None => {
                            open[i] = Some(self.numbers.get(key, slot(question)).unwrap_or(open[i].unwrap_or((1, 1))))
                        }
                    }
                }
            }
            let (i, threshold) = match open {
                [None, None] => return Ok((!self.met_horizon).then_some(Settled::Drawn)),
                [Some(_), None] => (0, INFINITE),
                [None, Some(_)] => (1, INFINITE),
                [Some(win), Some(loss)] if win.0 <= loss.0 => (0, grow(loss.0)),
                [Some(win), Some(_)] => (1, grow(win.0)),
            };
            let result = self.expand_value(position, key, questions[i], threshold, INFINITE, &mut path)?;
            match (result.proof, result.disproof) {
                (0, _) => return Ok(Some(Settled::Won(questions[i] == Question::Win, result.bound))),
                (_, 0) => open[i] = None,
                numbers => open[i] = Some(numbers),
            }
        }
    }

    /// The answer when the rules or the table settle it.
    fn value_known(&self, position: &Position, key: u128, question: Question) -> Option<Known> {
        if position.can_capture_royal() {
            return Some(if question == Question::Win { Known::Proven(1) } else { Known::Refuted });
        }
        self.value_recorded(key, question)
    }

    /// The answer when the table settles it: for a child of a safe move, whose side to move
    /// cannot take the royal, the only way it is settled without search. A proven result of
    /// either kind settles both questions: a win, however far, excludes every loss.
    fn value_recorded(&self, key: u128, question: Question) -> Option<Known> {
        let known = self.table.get(key);
        let (yes, no) = match question {
            Question::Win => (known.win_within, known.loss_within),
            Question::Loss => (known.loss_within, known.win_within),
        };
        if yes != UNKNOWN {
            Some(Known::Proven(u32::from(yes)))
        } else if no != UNKNOWN {
            Some(Known::Refuted)
        } else {
            None
        }
    }

    /// Records a proof as a fact (a bound the table cannot hold stays unrecorded).
    fn record_value(&mut self, key: u128, question: Question, bound: u32) {
        if bound >= u32::from(UNKNOWN) {
            return;
        }
        let bound = bound as Depth;
        self.record(key, |b| match question {
            Question::Win => b.win_within = b.win_within.min(bound),
            Question::Loss => b.loss_within = b.loss_within.min(bound),
        });
    }

    /// Expands a value node until it is settled or its numbers reach the thresholds.
    fn expand_value(
        &mut self,
        position: &Position,
        key: u128,
        question: Question,
        proof_threshold: u32,
        disproof_threshold: u32,
        path: &mut Path,
    ) -> Result<Expanded, Aborted> {
        self.tick()?;
        if let Some(known) = self.value_known(position, key, question) {
            return Ok(Expanded::of(known));
        }
        // No shortcut by rules and loops here (unlike `dfpn.rs`): see the module doc.
        let child_question = question.next();
        let horizon = path.keys.len() >= MAX_PATH;
        self.met_horizon |= horizon;
        let spare = self.spare_value_children.pop().unwrap_or_default();
        let (mut children, has_unsafe_moves) = self.safe_children(
            position,
            key,
            slot(child_question),
            |mv, position, key| Child { mv, position, key, known: None, numbers: (1, 1) },
            spare,
        );
        for child in &mut children {
            child.known = if horizon || path.contains(child.key) {
                Some(Known::RefutedHere)
            } else {
                self.value_recorded(child.key, child_question)
            };
        }
        // A "loss?" node with a child whose win is refuted whatever the path is refuted the
        // same way, whatever the other children's numbers (and so are the answers).
        let decided_at_once =
            question == Question::Loss && children.iter().any(|child| child.known == Some(Known::Refuted));
        if !decided_at_once {
            // The children's movers' pieces and the guesses' common part, gathered once for all
            // of them (and not at all when one child decides the node).
            let mobility = position.opponent_mobility();
            let guesses = ChildGuesses::new(key);
            for child in children.iter_mut().filter(|child| child.known.is_none()) {
                if self.recorded_numbers(child, child_question) {
                    continue;
                }
                let counts = mobility.counts_in(&child.position);
                let loses = child_question == Question::Loss;
                if counts.legal == 0 || counts.safe == 0 {
                    // No move: lost in 0; no move that keeps the royal: lost in 2.
                    let bound = if counts.legal == 0 { 0 } else { 2 };
                    child.known = Some(if loses { Known::Proven(bound) } else { Known::Refuted });
                } else {
                    let lean = guesses.lean(child.mv, child.key);
                    child.numbers = starting_numbers(child_question, counts.safe as u32, lean, VALUE_UNIT);
                }
            }
        }
        self.nodes += children.len() as u64;
        path.push(key);
        let result = self.settle_value(
            key,
            question,
            &mut children,
            has_unsafe_moves,
            proof_threshold,
            disproof_threshold,
            path,
        );
        path.pop();
        self.spare_value_children.push(children);
        result
    }

    /// The loop of [`Prover::expand_value`] over its children.
    #[allow(clippy::too_many_arguments)]
    fn settle_value(
        &mut self,
        key: u128,
        question: Question,
        children: &mut [Child],
        has_unsafe_moves: bool,
        proof_threshold: u32,
        disproof_threshold: u32,
        path: &mut Path,
    ) -> Result<Expanded, Aborted> {
        let child_question = question.next();
        loop {
            let numbers = children.iter().map(|child| match child.known {
                Some(known) => (Expanded::of(known).numbers(), false),
                None => (child.numbers, true),
            });
            let Step { proof, disproof, next } = step(question, numbers, (proof_threshold, disproof_threshold));
            if proof == 0 {
                let bounds = children.iter().filter_map(|child| match child.known {
                    Some(Known::Proven(bound)) => Some(bound + 1),
                    _ => None,
                });
                let bound = match question {
                    // The quickest proven child.
                    Question::Win => bounds.min().expect("a proven OR node has a proven child"),
                    // The slowest child (every one is proven); a move that exposes the royal
                    // loses in 2, no move at all in 0.
                    Question::Loss => bounds.max().unwrap_or(0).max(if has_unsafe_moves { 2 } else { 0 }),
                };
                self.record_value(key, question, bound);
                return Ok(Expanded { proof: 0, disproof: INFINITE, bound, here: false });
            }
            if disproof == 0 {
                let refuted = |k: Known| matches!(k, Known::Refuted);
                let here = match question {
                    // Every child refuted: the path's own if any child's refutation is.
                    Question::Win => children.iter().any(|c| c.known == Some(Known::RefutedHere)),
                    // One child refuted suffices: the path's own unless one holds anywhere.
                    Question::Loss => !children.iter().any(|c| c.known.is_some_and(refuted)),
                };
                if !here {
                    self.numbers.put(key, slot(question), INFINITE, 0);
                }
                return Ok(Expanded { proof: INFINITE, disproof: 0, bound: 0, here });
            }
            let Some((best, (proof_limit, disproof_limit))) = next else {
                self.numbers.put(key, slot(question), proof, disproof);
                return Ok(Expanded { proof, disproof, bound: 0, here: false });
            };
            let (position, child_key) = (children[best].position, children[best].key);
            let result = self.expand_value(&position, child_key, child_question, proof_limit, disproof_limit, path)?;
            let child = &mut children[best];
            child.numbers = (result.proof, result.disproof);
            child.known = match (result.proof, result.disproof) {
                (0, _) => Some(Known::Proven(result.bound)),
                (_, 0) if result.here => Some(Known::RefutedHere),
                (_, 0) => Some(Known::Refuted),
                _ => None,
            };
        }
    }

    /// Takes `child`'s numbers for `question` from the number table; `false` when it has no
    /// entry. A stored refutation holds whatever the path: only such refutations are stored
    /// (proofs are facts, in the other table).
    fn recorded_numbers(&self, child: &mut Child, question: Question) -> bool {
        let Some(numbers) = self.numbers.get(child.key, slot(question)) else {
            return false;
        };
        child.numbers = numbers;
        if numbers.1 == 0 {
            child.known = Some(Known::Refuted);
        }
        true
    }
}
