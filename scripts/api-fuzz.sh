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
# The version the suite was last run with; a newer one may bring checks of its own.
SCHEMATHESIS_VERSION=4.32.5
if ! "$venv/bin/pip" show schemathesis 2>/dev/null | grep -qx "Version: $SCHEMATHESIS_VERSION"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
cargo build --release -q -p shogi4-server
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
tables=$(mktemp -d)
server=""
trap 'kill $server 2>/dev/null; rm -rf "$tables"' EXIT
start_server "$tables/server.log" --tables "$tables" --solve-missing 1 --proof-store none --rate-limit 0 --search-ms 100
wait_healthy "$address" 120 "$tables/server.log"
"$venv/bin/schemathesis" --config-file scripts/schemathesis.toml run "http://$address/openapi.json" \
  --checks all --max-examples "$examples" --generation-deterministic
