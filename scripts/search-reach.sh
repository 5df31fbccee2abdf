#!/usr/bin/env bash
# How far proof search reaches into the real game: three seeded sets of real-game positions
# (random playouts, careful play, self-play), each position searched cold within 100 ms and
# within 1 s (or other budgets: milliseconds, or nodes as `8000000n`); prints per set the share
# proven exactly and as a value, the median bound width and the speed.
# Usage: scripts/search-reach.sh [POSITIONS] [BUDGET,...] [TABLE_MB] [SETS] [PLAN]
# (search/examples/reach.rs explains the sets and plans).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p shogi4-search --example reach -- "${1:-1000}" "${2:-100,1000}" "${3:-64}" "${4:-random,careful,selfplay}" "${5:-default}"
