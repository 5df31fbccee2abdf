#!/usr/bin/env bash
# Fuzzes the running API from its own OpenAPI document with schemathesis (every check),
# against a release server on a small table set (the one-piece games, solved at start).
# Installs schemathesis into target/schemathesis-venv when missing. Exits non-zero on any
# failure schemathesis reports.
#
#   scripts/api-fuzz.sh [MAX_EXAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
examples="${1:-100}"
venv=target/schemathesis-venv
if [ ! -x "$venv/bin/schemathesis" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check schemathesis
fi
cargo build --release -q -p shogi4-server
tables=$(mktemp -d)
port=18091
target/release/shogi4-server --bind "127.0.0.1:$port" --tables "$tables" --solve-missing 1 \
  --proof-store none --rate-limit 0 --search-ms 100 >/dev/null 2>"$tables/server.log" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tables"' EXIT
for _ in $(seq 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] && break
  sleep 0.2
done
"$venv/bin/schemathesis" --config-file scripts/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
  --checks all --max-examples "$examples" --generation-deterministic
