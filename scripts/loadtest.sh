#!/usr/bin/env bash
# Load benchmark: GET /probe against the server's trivial GET /health (the HTTP ceiling) in
# the same run, 64 connections on loopback, alternating rounds so that both see the same
# machine noise; prints each round and the medians. Installs wrk (Debian) if missing.
#
#   scripts/loadtest.sh [SECONDS_PER_ROUND] [ROUNDS]
#       one KKCF position, over the default table set in tables/ (the quick start builds it)
#   scripts/loadtest.sh [SECONDS_PER_ROUND] [ROUNDS] DIR GAME
#       random positions of GAME (e.g. KKCFRT, solved into DIR), a new one every request
#   scripts/loadtest.sh [SECONDS_PER_ROUND] [ROUNDS] DIR GAME COMPRESSED_DIR
#       the same, and in each round the same positions from a second server on the
#       compressed tables of COMPRESSED_DIR (`shogi4 compress DIR --out COMPRESSED_DIR`)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5}"
rounds="${2:-5}"
tables="${3:-tables}"
game="${4:-}"
compressed="${5:-}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q -p shogi4-server
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
scratch=$(mktemp -d)
server=""
second=""
trap 'kill $server $second 2>/dev/null; rm -rf "$scratch"' EXIT
# Rate limiting stays on, with a budget no benchmark exhausts: its cost is measured too.
start_server /tmp/shogi4-loadtest.log --no-solve --tables "$tables" --proof-store none \
  --rate-limit 10000000 --rate-burst 100000000
first=$server
main=$address
wait_healthy "$main" 60 /tmp/shogi4-loadtest.log
other=$main
if [ -n "$compressed" ]; then
  start_server /tmp/shogi4-loadtest-compressed.log --no-solve --tables "$compressed" --proof-store none \
    --rate-limit 10000000 --rate-burst 100000000
  second=$server
  other=$address
  wait_healthy "$other" 60 /tmp/shogi4-loadtest-compressed.log
fi
server=$first
if [ -n "$game" ]; then
  cargo run --release -q -p shogi4-engine --example sample_positions -- "$game" 100000 >"$scratch/positions"
  probe="/probe (random $game positions)"
  probe_args=(-s scripts/random-probes.lua)
  probe_path=/probe
  export POSITIONS="$scratch/positions"
else
  # A KKCF position: a typical probe with a dozen moves.
  probe="/probe?pos=1k2/C3/2f1/K3_b_-_1"
  probe_args=()
  probe_path="$probe"
fi
curl -sf "http://$main/probe?pos=1k2/C3/2f1/K3_b_-_1" >/dev/null || true
results="$scratch/results"
kinds=(health probe)
[ -z "$compressed" ] || kinds+=(compressed)
for round in $(seq "$rounds"); do
  for which in "${kinds[@]}"; do
    if [ "$which" = health ]; then
      out=$(wrk -t2 -c64 -d"${duration}s" --latency "http://$main/health")
      label=/health
    elif [ "$which" = compressed ]; then
      out=$(wrk -t2 -c64 -d"${duration}s" --latency "${probe_args[@]}" "http://$other$probe_path")
      label="$probe, compressed"
    else
      out=$(wrk -t2 -c64 -d"${duration}s" --latency "${probe_args[@]}" "http://$main$probe_path")
      label="$probe"
    fi
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
    echo "round $round  $label  $rps req/s  p50 $p50  p99 $p99${non2xx:+  non-2xx $non2xx}"
    # wrk prints 950.00us, 4.20ms or 1.02s: kept in milliseconds for the median.
    p99_ms=$(awk -v t="$p99" 'BEGIN { v = t + 0; if (t ~ /us$/) v /= 1000; else if (t ~ /[^m]s$/) v *= 1000; printf "%.3f", v }')
    echo "$which $rps $p99_ms" >>"$results"
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ceiling=$(awk '$1 == "health" {print $2}' "$results" | median)
probed=$(awk '$1 == "probe" {print $2}' "$results" | median)
p99=$(awk '$1 == "probe" {print $3}' "$results" | median)
echo "median /health $ceiling req/s, $probe $probed req/s, ratio $(awk -v a="$probed" -v b="$ceiling" 'BEGIN {printf "%.2f", a / b}'), probe p99 ${p99}ms"
if [ -n "$compressed" ]; then
  packed=$(awk '$1 == "compressed" {print $2}' "$results" | median)
  packed_p99=$(awk '$1 == "compressed" {print $3}' "$results" | median)
  echo "median compressed $packed req/s, $(awk -v a="$packed" -v b="$probed" 'BEGIN {printf "%.2f", a / b}') × the plain tables', probe p99 ${packed_p99}ms"
fi
