#!/usr/bin/env bash
# Packs a folder of kept leaves (`certify --store --leaves DIR`, `scripts/certify-from-store.sh`)
# into one archive that a repository can hold: every certificate in DIR checked and rewritten
# in the compact form (`verify-proof --compact`: one byte a winner's position instead of 19),
# with DIR/open.txt, then xz. A later assembly resumes from it on another machine:
#   mkdir -p DIR && tar -xJf ARCHIVE -C DIR
# and the same `certify-from-store.sh POS STORE DIR OUT …` call (its passes read the compact
# form as they read the keyed one). Leaf stores (DIR/stores) are not packed.
# Usage: scripts/pack-leaves.sh DIR ARCHIVE
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1 archive=$2
shogi4=${SHOGI4:-target/release/shogi4}
[ -n "${SHOGI4:-}" ] || cargo build --quiet --release -p shogi4-cli
packed=$(mktemp -d)
trap 'rm -rf "$packed"' EXIT
for file in "$dir"/*.s4cert; do
  "$shogi4" verify-proof "$file" --compact "$packed/$(basename "$file")" >/dev/null
done
if [ -e "$dir/open.txt" ]; then cp "$dir/open.txt" "$packed/"; fi
tar -C "$packed" -cJf "$archive.tmp" .
mv "$archive.tmp" "$archive"
echo "$(find "$packed" -name '*.s4cert' | wc -l) certificates, $(du -sb "$packed" | cut -f1) bytes compact, $(stat -c %s "$archive") bytes packed in $archive"
