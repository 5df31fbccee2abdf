//! The engine as the steered prover's guide ([`shogi4_search::steered::Guide`]): it ranks a
//! position's moves by a multi-line search on a node budget, and turns each line's score into
//! the expected score the prover leans its proof numbers on. Its search keeps the switches
//! it was measured with ([`Pruning::GUIDE`](crate::Pruning::GUIDE)).

use shogi4_engine::{Move, Position};
use shogi4_search::steered::Guide;
use shogi4_search::Cancel;

use crate::score::expected_score;
use crate::{Engine, Limits, Oracle, Pruning};

/// An engine that ranks moves for the prover, on `nodes` nodes a position, knowing what
/// `oracle` proves.
pub struct EngineGuide<'o> {
    engine: Engine,
    nodes: u64,
    oracle: &'o dyn Oracle,
    /// Positions ranked.
    pub ranked: u64,
    /// Nodes the rankings' searches took.
    pub nodes_searched: u64,
}

impl<'o> EngineGuide<'o> {
    /// A guide with a table of `table_mb` MiB, searching `nodes` nodes for each ranking.
    pub fn new(table_mb: usize, nodes: u64, oracle: &'o dyn Oracle) -> EngineGuide<'o> {
        EngineGuide { engine: Engine::new(table_mb), nodes, oracle, ranked: 0, nodes_searched: 0 }
    }
}

impl Guide for EngineGuide<'_> {
    fn rank(&mut self, position: &Position, path: &[u128]) -> Vec<(Move, f32)> {
        let moves = position.legal_moves().len();
        let limits =
            Limits { nodes: Some(self.nodes), lines: moves.max(1), pruning: Pruning::GUIDE, ..Limits::default() };
        let analysis = self.engine.search(position, path, &limits, self.oracle, &Cancel::default(), |_| {});
        self.ranked += 1;
        self.nodes_searched += analysis.nodes;
        analysis
            .lines
            .iter()
            .filter_map(|line| Some((*line.moves.first()?, expected_score(line.score) as f32)))
            .collect()
    }
}
