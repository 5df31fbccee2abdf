#!/usr/bin/env bash
# Proves, one at a time, each leaf that a certificate pass left open (DIR/open.txt of every
# DIR given): the steered, certified prover over a store of its own, with STORE as its
# engine's hints, then `certify` from that store. A leaf's certificate goes into every DIR as
# alone-<sha256(leaf)[:16]>.s4cert (compact), the name the passes look for, so a leaf that
# two proofs share is proven once. Leaves that already have one are skipped.
# Usage: scripts/prove-open-leaves.sh STORE MINUTES DIR...
# Start it several times to prove several leaves at once: each takes a leaf under a lock
# (flock, so a killed worker leaves none behind). A leaf not proven in MINUTES keeps its
# store (FIRST_DIR/stores), and a later call goes on from it; a proven one's is removed.
# Prints one line a leaf: proven or open, seconds, the leaf, and the proof's size.
# SHOGI4=PATH runs that binary instead of target/release/shogi4.
set -euo pipefail
cd "$(dirname "$0")/.."
store=$1 minutes=$2
shift 2
dirs=("$@")
shogi4=${SHOGI4:-target/release/shogi4}
stores=${dirs[0]}/stores
mkdir -p "$stores"
for dir in "${dirs[@]}"; do
  cat "$dir/open.txt" 2>/dev/null || true
done | grep -v '^$' | sort -u | while read -r leaf; do
  name=$(echo "$leaf" | sha256sum | cut -c1-16)
  cert=alone-$name.s4cert
  have=
  for dir in "${dirs[@]}"; do [ -e "$dir/$cert" ] && have=$dir/$cert; done
  if [ -n "$have" ]; then
    for dir in "${dirs[@]}"; do [ -e "$dir/$cert" ] || cp "$have" "$dir/$cert"; done
    continue
  fi
  exec {lock}>"$stores/$name.lock"
  # Under the lock, look again: another worker may have proven it meanwhile.
  if ! flock -n "$lock" || [ -e "${dirs[0]}/$cert" ]; then
    exec {lock}>&-
    continue
  fi
  case $(echo "$leaf" | awk '{print $2}') in b) side=first ;; *) side=second ;; esac
  started=$(date +%s)
  "$shogi4" prove --steer "$side" --from "$leaf" --store "$stores/$name.redb" \
    --hints "$store" --certified --ms 1000 --table-mb 1024 --threads 1 --minutes "$minutes" \
    --positions 100000000 >/dev/null 2>&1 || true
  if "$shogi4" certify "$leaf" --store "$stores/$name.redb" --ms 0 --nodes 1 --compact \
    --out "$stores/$cert" >"$stores/$name.txt" 2>&1; then
    for dir in "${dirs[@]}"; do cp "$stores/$cert" "$dir/$cert.part" && mv "$dir/$cert.part" "$dir/$cert"; done
    rm -rf "$stores/$name.redb" "$stores/$cert"
    result=proven
  else
    result=open
  fi
  printf '%s\t%s\t%s\t%s\n' "$result" "$(($(date +%s) - started))" "$leaf" \
    "$(grep -o 'proof tree.*' "$stores/$name.txt" | head -1 || true)"
  rm -f "$stores/$name.txt"
  exec {lock}>&-
done
