#!/usr/bin/env bash
# How far proof search reaches into the real game: 1,000 seeded real-game positions, each
# searched cold within 100 ms and within 1 s; prints the share proven, the proven distances
# and the speed. Usage: scripts/search-reach.sh [POSITIONS] [MS,MS,...] [TABLE_MB]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p shogi4-search --example reach -- "${1:-1000}" "${2:-100,1000}" "${3:-64}"
