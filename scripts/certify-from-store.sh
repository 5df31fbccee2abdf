#!/usr/bin/env bash
# The certificate of a position a proof store proves (a proof assembled over hours), written
# in passes that resume: each pass walks the store (`shogi4 certify --store --leaves DIR`),
# keeping every leaf's certificate in DIR; each leaf no search certified (DIR/open.txt) is then
# proven on its own (`scripts/prove-open-leaves.sh`: the steered, certified prover over a store
# of its own, the first store as its engine's hints) and certified into DIR; then the next pass.
# Usage: scripts/certify-from-store.sh POS STORE DIR OUT [LEAF_MS] [LEAF_MINUTES] [PASSES] [TABLE_MB] [JOBS]
# Stops when OUT is written (checked by `verify-proof`'s checker), or after PASSES passes.
# JOBS open leaves are proven at a time (default 1; each prover has one thread).
# What it wrote stays in DIR (the stores of leaves not yet proven under DIR/stores), so a
# later call resumes.
# SHOGI4=PATH runs that binary instead of building target/release/shogi4 (a copy, so that a
# build during the hours of a run does not change the program under it).
set -euo pipefail
cd "$(dirname "$0")/.."
pos=$1 store=$2 dir=$3 out=$4
leaf_ms=${5:-2000} leaf_minutes=${6:-40} passes=${7:-10} table_mb=${8:-2048} jobs=${9:-1}
if [ -z "${SHOGI4:-}" ]; then
  cargo build --quiet --release -p shogi4-cli
fi
shogi4=${SHOGI4:-target/release/shogi4}
for pass in $(seq 1 "$passes"); do
  echo "pass $pass: walking the store"
  if "$shogi4" certify "$pos" --store "$store" --leaves "$dir" --ms "$leaf_ms" --table-mb "$table_mb" --out "$out"; then
    exit 0
  fi
  for _ in $(seq 1 "$jobs"); do
    SHOGI4=$shogi4 scripts/prove-open-leaves.sh "$store" "$leaf_minutes" "$dir" &
  done
  wait
done
echo "no certificate after $passes passes; the leaves still open are in $dir/open.txt" >&2
exit 1
