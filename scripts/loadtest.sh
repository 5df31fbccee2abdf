#!/usr/bin/env bash
# Load benchmark: /probe against the server's trivial /health (the HTTP ceiling), in the same
# run, at 64 connections on loopback. Installs wrk (Debian) if missing. Needs the default
# table set in tables/ (the quick start builds it).
#
#   scripts/loadtest.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q -p shogi4-server
port=18088
target/release/shogi4-server --bind "127.0.0.1:$port" --no-solve --tables tables >/dev/null 2>/tmp/shogi4-loadtest.log &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
# A KKCF position with a dozen moves: a typical probe.
probe="/probe?pos=1k2/C3/2f1/K3_b_-_1"
curl -sf "http://127.0.0.1:$port$probe" >/dev/null
for path in /health "$probe"; do
  echo "== GET $path"
  wrk -t2 -c64 -d"${duration}s" --latency "http://127.0.0.1:$port$path" | grep -E "Requests/sec|Latency|50%|99%"
done
