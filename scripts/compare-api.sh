#!/usr/bin/env bash
# The API's bodies against another build's, on the same tables: builds REV (default: the last
# commit) in a worktree under target/compare/ (shared with compare-solvers.sh), starts both
# servers on TABLES, sends both the same requests and compares the JSON bodies and statuses.
# The requests: GET /probe and /mainline of sampled positions of every served game, positions
# no table holds (searched within a node budget, so that both builds search alike), a batch,
# /tables, /files, /health, and the error cases (bad and illegal positions, unknown paths).
# Search timings (`search.millis`) are left out of the comparison, and so are the fields named
# in IGNORE (comma-separated: what a change meant to add, to see that nothing else changed).
# Prints each difference by request and JSON path, or that every body is the same; exits 1 on
# a difference.
#
#   [IGNORE=field,...] scripts/compare-api.sh [REV] [TABLES] [POSITIONS_PER_GAME]
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:-HEAD}"
tables="${2:-tables}"
per_game="${3:-20}"
cargo build --quiet --release -p shogi4-server -p shogi4-engine --bins --example sample_positions
# shellcheck source=scripts/lib/other-build.sh
. scripts/lib/other-build.sh
build_other "$rev" shogi4-server
work="$(mktemp -d)"
old_server=""
new_server=""
trap 'kill $old_server $new_server 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
# Search by nodes alone (the time budget never binds), one worker, no store: the same answers.
flags=(--no-solve --tables "$tables" --proof-store none --rate-limit 0 --search-ms 600000
  --search-nodes 200000 --search-workers 1 --background-workers 0)
start_server "$work/new.log" "${flags[@]}"
new_server=$server
new=$address
# The other build, started the same way.
SERVER_BIN="$other_bin/shogi4-server" start_server "$work/old.log" "${flags[@]}"
old_server=$server
old=$address
wait_healthy "$new" 60 "$work/new.log"
wait_healthy "$old" 60 "$work/old.log"
# Sampled positions of every served game.
for file in "$tables"/*.s4tb; do
  game=$(basename "$file" .s4tb)
  target/release/examples/sample_positions "$game" "$per_game" >>"$work/positions"
done
python3 - "$old" "$new" "$work/positions" "$rev" "${IGNORE:-}" <<'PY'
import json, sys, urllib.error, urllib.parse, urllib.request
old, new, positions_file, rev, ignored = sys.argv[1:6]
ignored = {"millis"} | {field for field in ignored.split(",") if field}
positions = [line.strip() for line in open(positions_file) if line.strip()]
# Positions no table holds: the start, early openings, five-piece games beyond the set.
searched = ["trfk/3c/C3/KFRT b - 1", "trfk/3c/CF2/K1RT w - 1", "trfk/C2c/4/KFRT w - 1", "k3/4/4/KC2 b FRT 1"]
bad = ["", "xyz", "k3/4/4/K3 b C", "kk2/4/4/K3 b - 1", "K3/4/4/K3 b - 1", "k3/4/4/K3_b_C_1"]
requests = [("GET", f"/probe?pos={urllib.parse.quote(p)}", None) for p in positions + searched + bad]
requests += [("GET", f"/mainline?pos={urllib.parse.quote(p)}", None) for p in positions[::4] + searched[:1] + bad[:2]]
requests += [("POST", "/probe", json.dumps({"positions": positions[:20] + bad[:2]}).encode()),
             ("POST", "/probe", b"{not json"), ("GET", "/tables", None), ("GET", "/files", None),
             ("GET", "/health", None), ("GET", "/nowhere", None), ("DELETE", "/probe", None)]

def fetch(base, method, path, body):
    request = urllib.request.Request(f"http://{base}{path}", data=body, method=method,
                                     headers={"Content-Type": "application/json"} if body else {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text.decode(errors="replace")

def strip(value):
    # Search timings differ from run to run; everything else must not.
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value

def differences(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a:
                yield f"{path}.{key}: only in this build ({json.dumps(b[key])[:80]})"
            elif key not in b:
                yield f"{path}.{key}: only in {rev} ({json.dumps(a[key])[:80]})"
            else:
                yield from differences(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: {rev} {json.dumps(a)[:80]}, this build {json.dumps(b)[:80]}"

found = 0
for method, path, body in requests:
    (s1, b1), (s2, b2) = fetch(old, method, path, body), fetch(new, method, path, body)
    diffs = ([f"status: {rev} {s1}, this build {s2}"] if s1 != s2 else []) + list(differences(strip(b1), strip(b2)))
    for d in diffs[:5]:
        print(f"{method} {path[:70]}: {d}")
    found += bool(diffs)
print(f"{len(requests)} requests, {found} with differences between {rev} and this build"
      + (f" (ignoring {', '.join(sorted(ignored))})" if ignored else ""))
sys.exit(1 if found else 0)
PY
