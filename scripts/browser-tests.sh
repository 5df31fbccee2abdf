#!/usr/bin/env bash
# The web explorer's tests in a real browser. Installs what they need when it is missing:
# Debian's chromium (apt-get) and playwright-core (npm ci, from tests/browser's lock file).
# Neither downloads a browser of its own. Then runs tests/browser against a debug server.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    echo "browser tests: installing Debian's chromium" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    install() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
    # Stale package lists on a fresh machine: refresh them once and try again.
    install || { $sudo apt-get update -qq && install; }
fi
if [ ! -d tests/browser/node_modules/playwright-core ]; then
    echo "browser tests: installing playwright-core (no browser download)" >&2
    (cd tests/browser && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
cargo build --quiet -p shogi4-server
mkdir -p target/browser/tables/certificates
# One published certificate, small, for the explorer's "proven by the certificate" test.
cp tables/certificates/a2a3.s4cert target/browser/tables/certificates/
export SHOGI4_SERVER_BIN=$PWD/target/debug/shogi4-server
export SHOGI4_TABLES=$PWD/target/browser/tables
export SHOGI4_ARTIFACTS=$PWD/target/browser
export CHROMIUM=$chromium
cd tests/browser
node --test --test-concurrency=1 --test-reporter=spec explorer.test.mjs
