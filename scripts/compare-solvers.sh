#!/usr/bin/env bash
# The in-memory solver against another build of it, in one run on the same machine: builds
# REV (default: the last commit) in a worktree under target/compare/, then solves each game
# with both builds in alternation, ROUNDS times, and prints wall time, ns per edge and peak
# memory (VmHWM) per run and the ratios of the medians; every pair of tables must be
# byte-identical. Usage: scripts/compare-solvers.sh [REV] [ROUNDS] GAME...
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:-HEAD}"; rounds="${2:-3}"; shift 2 || true
games=("${@:-KKCFR}")
root="$PWD"
cargo build --quiet --release -p shogi4-cli
# shellcheck source=scripts/lib/other-build.sh
. scripts/lib/other-build.sh
build_other "$rev" shogi4-cli
new="$root/target/release/shogi4"
old="$other_bin/shogi4"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for game in "${games[@]}"; do
    for round in $(seq "$rounds"); do
        for build in old new; do
            rm -rf "$work/$build"
            "${!build}" solve "$game" --out "$work/$build" --json > "$work/$build-$round.json"
        done
        cmp -s "$work/old/$game.s4tb" "$work/new/$game.s4tb" || { echo "$game: TABLES DIFFER"; exit 1; }
    done
    python3 - "$work" "$game" "$rounds" "$rev" <<'PY'
import json, statistics, sys
work, game, rounds, rev = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
runs = {b: [json.load(open(f"{work}/{b}-{r}.json")) for r in range(1, rounds + 1)] for b in ("old", "new")}
for b, label in (("old", rev), ("new", "this build")):
    for d in runs[b]:
        print(f"{game:<10}{label:<14}{d['seconds']:>9.2f} s{d['ns_per_edge']:>8.1f} ns/edge{d['peak_rss_bytes'] / 2**20:>9.0f} MiB  {d['peak_rss_bytes'] / d['slots']:.3f} B/slot")
m = {b: statistics.median(d['seconds'] for d in runs[b]) for b in runs}
p = {b: statistics.median(d['peak_rss_bytes'] for d in runs[b]) for b in runs}
print(f"{game}: this build / {rev}: time {m['new'] / m['old']:.2f}, peak memory {p['new'] / p['old']:.2f}; tables byte-identical")
PY
done
