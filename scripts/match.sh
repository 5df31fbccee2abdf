#!/usr/bin/env bash
# A match between two builds of the engine over UCI: the working tree's against a commit's
# (default HEAD), each built in release mode, paired openings with colours swapped.
#
#   scripts/match.sh [BASE] [PAIRS] [LIMIT] [JOBS] [-- OPTIONS FOR THE NEW SIDE]
#
# BASE is a commit (default HEAD); PAIRS of games (default 100); LIMIT a move's budget,
# `200ms` or `40000n` (default 40000n: node budgets make the figures repeatable); JOBS games
# at once (default 1). It prints the new build's Elo against BASE with a 95% interval.
# Lines after `--` are UCI commands for the new side only, e.g.
#   scripts/match.sh HEAD 200 40000n 1 -- 'setoption name NullMove value true'
# which measures an option against the same build without it.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-HEAD}; pairs=${2:-100}; limit=${3:-40000n}; jobs=${4:-1}
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
options=""
for option in "$@"; do options="$options;;$option"; done

work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cargo build --quiet --release -p shogi4-cli -p shogi4-play --bins --example match
cp target/release/shogi4 "$work/new"
cp target/release/examples/match "$work/match"
if [ "$base" = "WORKTREE" ]; then
    cp target/release/shogi4 "$work/old"
else
    git worktree add --quiet --detach "$work/base" "$base"
    (cd "$work/base" && CARGO_TARGET_DIR="$PWD/../target-base" cargo build --quiet --release -p shogi4-cli)
    cp "$work/target-base/release/shogi4" "$work/old"
fi
echo "new: working tree$([ -n "$options" ] && echo " with${options//;;/ | }"); base: $base"
"$work/match" "$work/new uci --tables /nonexistent$options" "$work/old uci --tables /nonexistent" "$pairs" "$limit" "$jobs"
