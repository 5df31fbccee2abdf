#!/usr/bin/env bash
# Mirrors the table set a Shogi4 server serves into DIR, verifying every file.
#
#   scripts/mirror-tables.sh URL DIR      (URL: the server, e.g. https://tables.example.org)
#
# Reads the server's SHA256SUMS, then for each table: keeps a copy whose SHA-256 already
# matches, else downloads it into DIR/.NAME.part, resuming a part left by an interrupted run
# with a byte range. The range is asked with `If-Range` set to the file's SHA-256 (the
# server's ETag), so a part of an older version of the file is never continued with bytes of
# a newer one: the server then sends the whole file and the part starts over. A file moves to
# its name only once its SHA-256 matches. Safe to run again at any point; a run that finishes
# leaves DIR with the tables, SHA256SUMS and manifest.json, and `sha256sum -c SHA256SUMS`
# passing.
set -euo pipefail
url="${1:?usage: scripts/mirror-tables.sh URL DIR}"
dir="${2:?usage: scripts/mirror-tables.sh URL DIR}"
url="${url%/}"
mkdir -p "$dir"
cd "$dir"

fetch() { curl --fail --silent --show-error --retry 5 --retry-delay 2 "$@"; }
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

fetch -o .SHA256SUMS.new "$url/files/SHA256SUMS"
while read -r sha name; do
  case "$name" in
    *.s4tb) ;;
    *) echo "refusing $name from $url: not a table name" >&2; exit 1 ;;
  esac
  case "$name" in
    */* | .*) echo "refusing $name from $url: not a plain file name" >&2; exit 1 ;;
  esac
  if [ -f "$name" ] && [ "$(sha_of "$name")" = "$sha" ]; then
    echo "$name: up to date"
    continue
  fi
  part=".$name.part"
  for _ in 1 2 3; do
    if [ -s "$part" ] && [ "$(sha_of "$part")" = "$sha" ]; then
      :
    elif [ -s "$part" ]; then
      echo "$name: resuming at byte $(stat -c %s "$part")"
      # curl exits 33 when the server answers a range with the whole file (If-Range failed):
      # the part was of another version, and starts over.
      code=0
      fetch -C - -H "If-Range: \"$sha\"" -o "$part" "$url/files/$name" || code=$?
      [ "$code" != 33 ] || rm -f "$part"
      [ "$code" = 0 ] || continue
    else
      echo "$name: downloading"
      fetch -o "$part" "$url/files/$name" || continue
    fi
    if [ "$(sha_of "$part")" = "$sha" ]; then
      mv "$part" "$name"
      echo "$name: verified"
      break
    fi
    echo "$name: SHA-256 mismatch; starting over" >&2
    rm -f "$part"
  done
  [ -f "$name" ] && [ "$(sha_of "$name")" = "$sha" ] || { echo "$name: could not be fetched intact" >&2; exit 1; }
done < .SHA256SUMS.new
fetch -o .manifest.json.new "$url/files/manifest.json"
mv .manifest.json.new manifest.json
mv .SHA256SUMS.new SHA256SUMS
sha256sum --check --quiet SHA256SUMS
echo "mirrored $(wc -l < SHA256SUMS) tables from $url into $dir, every SHA-256 verified"
