#!/usr/bin/env bash
# Writes SHA256SUMS and manifest.json beside a directory of tables, for publishing a table set
# to mirrors and replicas (check a copy with `sha256sum -c SHA256SUMS`): `shogi4 publish DIR`,
# the same bytes a server serving DIR sends as /files/SHA256SUMS and /files/manifest.json.
#
#   scripts/publish-tables.sh [DIR]   (default: tables)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release -q -p shogi4-cli --manifest-path "$root/Cargo.toml"
exec "$root/target/release/shogi4" publish "${1:-tables}"
