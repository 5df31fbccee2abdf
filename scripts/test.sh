#!/usr/bin/env bash
# Every test: the workspace's (`cargo test --workspace`, extra arguments go to it) and then
# the web explorer's in a real browser (scripts/browser-tests.sh, which installs Chromium and
# playwright-core when they are missing). This is the README's test command; CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace "$@"
scripts/browser-tests.sh
