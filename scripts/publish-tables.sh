#!/usr/bin/env bash
# Writes SHA256SUMS and manifest.json beside a directory of tables, for publishing a table set
# to mirrors and replicas (check a copy with `sha256sum -c SHA256SUMS`). The manifest lists,
# per table, what `shogi4 info --json` says (closed game, counts, size, the header's XXH3
# checksum) plus the file's SHA-256.
#
#   scripts/publish-tables.sh [DIR]   (default: tables)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-tables}"
cargo build --release -q -p shogi4-cli --manifest-path "$root/Cargo.toml"
shogi4="$root/target/release/shogi4"
cd "$dir"
shopt -s nullglob
tables=(*.s4tb)
[ ${#tables[@]} -gt 0 ] || { echo "no tables in $dir" >&2; exit 1; }
sha256sum "${tables[@]}" > SHA256SUMS
{
  echo '{"tables": ['
  for i in "${!tables[@]}"; do
    table="${tables[$i]}"
    sha=$(awk -v f="$table" '$2 == f {print $1}' SHA256SUMS)
    info=$("$shogi4" info "$table" --json)
    separator=$([ "$i" -lt $((${#tables[@]} - 1)) ] && echo "," || true)
    echo "  ${info%\}},\"file\":\"$table\",\"sha256\":\"$sha\"}$separator"
  done
  echo ']}'
} > manifest.json
echo "wrote $dir/SHA256SUMS and $dir/manifest.json (${#tables[@]} tables)"
