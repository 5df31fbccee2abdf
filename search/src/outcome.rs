//! What a search establishes about a position: [`Outcome`], and how outcomes combine.

use shogi4_tablebase::Value;

/// What a search establishes about a position, for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A win or loss with its exact distance to win, or a draw (neither side can force the
    /// royal capture, at any distance).
    Proven(Value),
    /// A win or loss, proven, whose distance to win is only known to lie in a range: every
    /// distance below `at_least` was refuted, and a forced result within `at_most` was
    /// proven. Both bounds have the parity of the value (odd for a win, even for a loss), and
    /// `at_least < at_most` (equal bounds are an exact [`Outcome::Proven`]).
    Bounded {
        /// Whether the side to move wins (else it loses).
        win: bool,
        /// The distance is at least this.
        at_least: u32,
        /// The distance is at most this.
        at_most: u32,
    },
    /// Neither side can force the royal capture within this many plies (the distance is
    /// larger, or the position is a draw).
    Unknown {
        /// The depth searched to completion.
        no_result_within: u32,
    },
}

impl Outcome {
    /// A proven win (or loss) with its distance between the two bounds, rounded to the value's
    /// parity; exact when they meet.
    pub fn won(win: bool, at_least: u32, at_most: u32) -> Outcome {
        let at_least = distance_from(at_least, win);
        debug_assert_eq!(at_most % 2, u32::from(win), "an upper bound of the value's parity");
        if at_least >= at_most {
            Outcome::Proven(Value::from_dtw(at_most))
        } else {
            Outcome::Bounded { win, at_least, at_most }
        }
    }

    /// Whether the side to move is proven to win (`Some(true)`) or to lose (`Some(false)`),
    /// exactly or within bounds; `None` when nothing is proven, or a draw.
    pub fn proven_win(self) -> Option<bool> {
        match self {
            Outcome::Proven(Value::Win(_)) => Some(true),
            Outcome::Proven(Value::Loss(_)) => Some(false),
            Outcome::Bounded { win, .. } => Some(win),
            Outcome::Proven(Value::Draw) | Outcome::Unknown { .. } => None,
        }
    }

    /// Whether the value is proven: a win or a loss (exact or within bounds), or a draw.
    pub fn is_settled(self) -> bool {
        !matches!(self, Outcome::Unknown { .. })
    }

    /// The distance to win's range, `(at_least, at_most)`: equal for an exact value; `None`
    /// for draws and unknown results.
    pub fn distance_bounds(self) -> Option<(u32, u32)> {
        match self {
            Outcome::Proven(value) => value.dtw().map(|d| (d, d)),
            Outcome::Bounded { at_least, at_most, .. } => Some((at_least, at_most)),
            Outcome::Unknown { .. } => None,
        }
    }

    /// The outcome for the player who moves into a position with this outcome.
    pub fn for_mover(self) -> Outcome {
        match self {
            Outcome::Proven(value) => Outcome::Proven(value.for_mover()),
            Outcome::Bounded { win, at_least, at_most } => {
                Outcome::Bounded { win: !win, at_least: at_least + 1, at_most: at_most + 1 }
            }
            Outcome::Unknown { no_result_within } => Outcome::Unknown { no_result_within: no_result_within + 1 },
        }
    }

    /// The outcome of the position a move leads to, for its side to move, given the move's
    /// outcome for the mover: the inverse of [`Outcome::for_mover`].
    pub fn after_move(self) -> Outcome {
        match self {
            Outcome::Proven(Value::Win(n)) => Outcome::Proven(Value::Loss(n.saturating_sub(1))),
            Outcome::Proven(Value::Loss(n)) => Outcome::Proven(Value::Win(n.saturating_sub(1))),
            Outcome::Proven(Value::Draw) => Outcome::Proven(Value::Draw),
            Outcome::Bounded { win, at_least, at_most } => {
                Outcome::won(!win, at_least.saturating_sub(1), at_most.saturating_sub(1))
            }
            Outcome::Unknown { no_result_within } => {
                Outcome::Unknown { no_result_within: no_result_within.saturating_sub(1) }
            }
        }
    }

    /// What two true statements about one position say together: an exact value over
    /// anything else, two ranges intersected, a range raised by a deeper "no result within",
    /// the deeper of two unknowns.
    pub fn merge(self, other: Outcome) -> Outcome {
        match (self, other) {
            (Outcome::Proven(_), _) => self,
            (_, Outcome::Proven(_)) => other,
            (Outcome::Bounded { win, at_least: a, at_most: b }, Outcome::Bounded { at_least: c, at_most: d, .. }) => {
                Outcome::won(win, a.max(c), b.min(d))
            }
            (Outcome::Bounded { win, at_least, at_most }, Outcome::Unknown { no_result_within })
            | (Outcome::Unknown { no_result_within }, Outcome::Bounded { win, at_least, at_most }) => {
                Outcome::won(win, at_least.max(no_result_within + 1), at_most)
            }
            (Outcome::Unknown { no_result_within: a }, Outcome::Unknown { no_result_within: b }) => {
                Outcome::Unknown { no_result_within: a.max(b) }
            }
        }
    }

    /// Whether two statements about one position cannot both be true: two proven values that
    /// disagree (a win and a loss, a draw and either, two different exact distances), or
    /// distance ranges that do not meet, or a "no result within" that a proven distance falls
    /// inside. A true search never makes two such statements, so one of them is forged or
    /// corrupt: [`Outcome::merge`] must not be asked to combine them.
    pub fn conflicts(self, other: Outcome) -> bool {
        let value = |o: Outcome| match o {
            Outcome::Proven(Value::Draw) => Some(None),
            o => o.proven_win().map(Some),
        };
        match (value(self), value(other)) {
            (Some(a), Some(b)) if a != b => true,
            (Some(Some(_)), Some(Some(_))) => {
                let ((a, b), (c, d)) =
                    (self.distance_bounds().unwrap_or((0, 0)), other.distance_bounds().unwrap_or((0, 0)));
                a.max(c) > b.min(d)
            }
            (Some(Some(_)), None) | (None, Some(Some(_))) => {
                let (proven, unknown) = if value(self).is_some() { (self, other) } else { (other, self) };
                let Outcome::Unknown { no_result_within } = unknown else { return false };
                proven.distance_bounds().is_some_and(|(_, at_most)| at_most <= no_result_within)
            }
            _ => false,
        }
    }

    /// What the outcomes of every legal move (each for the player making it) prove about the
    /// position, without search: a win if some move wins, its distance between the quickest
    /// possible win (a winning move's lower bound, or one more than an unknown move's depth)
    /// and the quickest proven one; a loss if every move loses, its distance between the
    /// largest lower bound and the largest upper bound (the loser takes the longest way); a
    /// draw if every move is a draw or a loss, and one a draw; an unknown result as deep as the
    /// shallowest unknown move's otherwise. `None` without moves.
    pub fn from_moves(moves: impl IntoIterator<Item = Outcome>) -> Option<Outcome> {
        let (mut fastest_possible, mut fastest_proven) = (u32::MAX, None::<u32>);
        let (mut all_lose, mut loss_at_least, mut loss_at_most) = (true, 0, 0);
        let mut shallowest = u32::MAX;
        let mut any = false;
        for outcome in moves {
            any = true;
            match (outcome.proven_win(), outcome.distance_bounds(), outcome) {
                (Some(true), Some((at_least, at_most)), _) => {
                    all_lose = false;
                    fastest_possible = fastest_possible.min(at_least);
                    fastest_proven = Some(fastest_proven.map_or(at_most, |f| f.min(at_most)));
                }
                (Some(false), Some((at_least, at_most)), _) => {
                    loss_at_least = loss_at_least.max(at_least);
                    loss_at_most = loss_at_most.max(at_most);
                }
                (_, _, Outcome::Unknown { no_result_within }) => {
                    all_lose = false;
                    // A win through this move, if any, is slower than its depth.
                    fastest_possible = fastest_possible.min(no_result_within + 1);
                    shallowest = shallowest.min(no_result_within);
                }
                // A draw: neither side wins through it, nor loses.
                _ => all_lose = false,
            }
        }
        match fastest_proven {
            _ if !any => None,
            Some(at_most) => Some(Outcome::won(true, fastest_possible.min(at_most), at_most)),
            None if all_lose => Some(Outcome::won(false, loss_at_least, loss_at_most)),
            // Every move is a draw or a loss, and one is a draw: nothing wins, and that one
            // does not lose.
            None if shallowest == u32::MAX => Some(Outcome::Proven(Value::Draw)),
            // No move wins within the shallowest unknown move's depth, and through that move
            // the position does not lose within it either.
            None => Some(Outcome::Unknown { no_result_within: shallowest }),
        }
    }

    /// Sort key, better for the side in question first: exact wins (quickest first), bounded
    /// wins (smallest upper bound first), unknown (deeper first: a longer search that found
    /// nothing is the likelier draw), draws, bounded losses (largest upper bound first), exact
    /// losses (slowest first).
    pub(crate) fn rank(self) -> (u8, i64, i64) {
        match self {
            Outcome::Proven(Value::Win(n)) => (6, -i64::from(n), 0),
            Outcome::Bounded { win: true, at_least, at_most } => (5, -i64::from(at_most), -i64::from(at_least)),
            Outcome::Unknown { no_result_within } => (4, i64::from(no_result_within), 0),
            Outcome::Proven(Value::Draw) => (3, 0, 0),
            Outcome::Bounded { win: false, at_least, at_most } => (2, i64::from(at_most), i64::from(at_least)),
            Outcome::Proven(Value::Loss(n)) => (1, i64::from(n), 0),
        }
    }
}

/// The smallest distance of a win's (odd) or a loss's (even) parity that is at least `d`.
pub(crate) fn distance_from(d: u32, win: bool) -> u32 {
    if d % 2 == u32::from(win) {
        d
    } else {
        d + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_cannot_both_be_true_conflict() {
        let win = |at_least, at_most| Outcome::won(true, at_least, at_most);
        let loss4 = Outcome::Proven(Value::Loss(4));
        let draw = Outcome::Proven(Value::Draw);
        let unknown = |d| Outcome::Unknown { no_result_within: d };
        // The forged record of the round-4 review: a loss against a certified win within 21.
        assert!(win(1, 21).conflicts(loss4) && loss4.conflicts(win(1, 21)));
        assert!(draw.conflicts(loss4) && win(3, 9).conflicts(draw));
        assert!(win(3, 9).conflicts(win(11, 15)), "ranges that do not meet");
        assert!(Outcome::Proven(Value::Win(7)).conflicts(unknown(9)), "a win within a depth refuted");
        // Statements that narrow each other do not.
        assert!(!win(3, 21).conflicts(win(9, 15)));
        assert!(!win(3, 21).conflicts(Outcome::Proven(Value::Win(9))));
        assert!(!win(3, 21).conflicts(unknown(12)));
        assert!(!draw.conflicts(unknown(40)) && !unknown(3).conflicts(unknown(9)));
        assert!(!loss4.conflicts(loss4));
    }

    #[test]
    fn moves_settle_a_draw_only_when_nothing_else_is_possible() {
        let draw = Outcome::Proven(Value::Draw);
        let loss = Outcome::Proven(Value::Loss(4));
        let unknown = Outcome::Unknown { no_result_within: 9 };
        let win = Outcome::Bounded { win: true, at_least: 5, at_most: 11 };
        // Every move a draw or a loss, one a draw: a draw.
        assert_eq!(Outcome::from_moves([loss, draw, loss]), Some(draw));
        assert_eq!(Outcome::from_moves([draw]), Some(draw));
        // An unknown move may still win.
        assert_eq!(Outcome::from_moves([draw, unknown]), Some(unknown));
        // A winning move wins.
        assert_eq!(Outcome::from_moves([draw, win]), Some(win));
        // Every move lost: a loss, the longest.
        assert_eq!(Outcome::from_moves([loss]), Some(Outcome::Proven(Value::Loss(4))));
        assert_eq!(Outcome::from_moves([]), None);
        assert!(draw.is_settled() && loss.is_settled() && win.is_settled() && !unknown.is_settled());
        assert_eq!(draw.proven_win(), None);
    }
}
