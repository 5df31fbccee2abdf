#!/usr/bin/env bash
# Load benchmark: GET /probe against the server's trivial GET /health (the HTTP ceiling) in
# the same run, 64 connections on loopback, alternating rounds so that both see the same
# machine noise; prints each round and the medians. Installs wrk (Debian) if missing. Needs
# the default table set in tables/ (the quick start builds it).
#
#   scripts/loadtest.sh [SECONDS_PER_ROUND] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5}"
rounds="${2:-5}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q -p shogi4-server
port=18088
# Rate limiting stays on, with a budget no benchmark exhausts: its cost is measured too.
target/release/shogi4-server --bind "127.0.0.1:$port" --no-solve --tables tables \
  --rate-limit 100000000 --rate-burst 100000000 >/dev/null 2>/tmp/shogi4-loadtest.log &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
# A KKCF position: a typical probe with a dozen moves.
probe="/probe?pos=1k2/C3/2f1/K3_b_-_1"
curl -sf "http://127.0.0.1:$port$probe" >/dev/null
results=$(mktemp)
for round in $(seq "$rounds"); do
  for path in /health "$probe"; do
    out=$(wrk -t2 -c64 -d"${duration}s" --latency "http://127.0.0.1:$port$path")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    echo "round $round  $path  $rps req/s  p50 $p50  p99 $p99"
    echo "$path $rps $p99" >>"$results"
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ceiling=$(awk '$1 == "/health" {print $2}' "$results" | median)
probed=$(awk -v p="$probe" '$1 == p {print $2}' "$results" | median)
echo "median /health $ceiling req/s, /probe $probed req/s, ratio $(awk -v a="$probed" -v b="$ceiling" 'BEGIN {printf "%.2f", a / b}')"
rm -f "$results"
