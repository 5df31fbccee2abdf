#!/usr/bin/env bash
# Distributed-solve scaling on this machine: one game solved in memory and on clusters of
# 1, 2 and 4 processes and 1 to 16 workers, each checked byte for byte against the in-memory
# table. Prints seconds, edges per second, bytes exchanged per edge (between workers and
# between processes) and process 0's peak memory.
# Usage: scripts/cluster-scaling.sh [GAME]   (default KKCFR)
set -euo pipefail
cd "$(dirname "$0")/.."
game="${1:-KKCFR}"
cargo build --quiet --release -p shogi4-cli
shogi4="$PWD/target/release/shogi4"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$shogi4" solve "$game" --out "$work/reference" --json > "$work/reference.json"
"$shogi4" solve "$game" --out "$work/one" --threads 1 --json > "$work/one.json"
python3 - "$work/reference.json" "$work/one.json" <<'PY'
import json, sys
print(f"{'solver':<28}{'seconds':>9}{'M edges/s':>11}{'B/edge xchg':>13}{'B/edge net':>12}{'peak MiB':>10}")
for label, path in [("in memory, 2 threads", sys.argv[1]), ("in memory, 1 thread", sys.argv[2])]:
    d = json.load(open(path))
    print(f"{label:<28}{d['seconds']:>9.2f}{d['edges'] / d['seconds'] / 1e6:>11.1f}{'-':>13}{'-':>12}{d['peak_rss_bytes'] / 2**20:>10.0f}")
PY
for shape in "1 1" "1 2" "1 4" "1 8" "1 16" "2 1" "2 2" "4 1"; do
    set -- $shape
    rm -rf "$work/cluster"
    "$shogi4" solve "$game" --out "$work/cluster" --cluster "local:$1" --workers "$2" --json 2>/dev/null > "$work/cluster.json"
    cmp -s "$work/cluster/$game.s4tb" "$work/reference/$game.s4tb" || { echo "local:$1 --workers $2: TABLE DIFFERS"; exit 1; }
    python3 - "$work/cluster.json" "local:$1 --workers $2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<28}{d['seconds']:>9.2f}{d['edges_per_second'] / 1e6:>11.1f}{d['exchanged_bytes_per_edge']:>13.2f}{d['network_bytes_per_edge']:>12.2f}{d['peak_rss_bytes'] / 2**20:>10.0f}")
PY
done
echo "every cluster table is byte-identical to the in-memory one"
