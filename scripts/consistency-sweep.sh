#!/usr/bin/env bash
# The consistency sweep: every claim the API makes about a position must agree with every
# other claim about it. Starts a server on TABLES with a proof store of its own (into which it
# merges TABLES/opening.proofs and the certificates in TABLES/certificates, as any server
# does), probes positions breadth-first from seeds (the start and the lines of the opening's
# proofs, and positions sampled from every served table), following the moves each answer
# lists, and checks:
#   - each position's claims, from its own answers and from the moves that lead to it in its
#     parents' answers (a move's value for its mover, one ply longer, is its position's value
#     for the other side), against each other: a win against a loss or a draw, distances or
#     bounds that do not meet, a proven distance within an `unknown`'s `no_result_within`;
#   - each answer against its own moves: a loss with a winning move, a win whose every move
#     loses, an exact value that is not the best of its moves' exact values.
# Prints the counts and every conflict; exits 1 on any.
#
#   scripts/consistency-sweep.sh [SEARCHED] [TABLED] [PER_GAME] [TABLES]
#
# SEARCHED: positions no table holds to probe at most (each a search, 300 ms; default 300);
# TABLED: positions a table holds to probe at most (default 20000); PER_GAME: positions
# sampled from each served table as seeds (default 20); TABLES (default tables).
set -euo pipefail
cd "$(dirname "$0")/.."
searched="${1:-300}"
tabled="${2:-20000}"
per_game="${3:-20}"
tables="${4:-tables}"
cargo build --quiet --release -p shogi4-server -p shogi4-engine --bins --example sample_positions
work="$(mktemp -d)"
server=""
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
start_server "$work/server.log" --no-solve --tables "$tables" --proof-store "$work/proofs.redb" --rate-limit 0
wait_healthy "$address" 60 "$work/server.log"
# The store's start-up merges (the published export, the certificates) run in the background.
for _ in $(seq 600); do
  grep -q "certificates served" "$work/server.log" && break
  sleep 0.2
done
for file in "$tables"/*.s4tb; do
  [ -e "$file" ] || continue
  target/release/examples/sample_positions "$(basename "$file" .s4tb)" "$per_game" >>"$work/positions"
done
touch "$work/positions"
python3 - "$address" "$work/positions" "$searched" "$tabled" <<'PY'
import collections, json, sys, urllib.error, urllib.parse, urllib.request
address, positions_file = sys.argv[1], sys.argv[2]
searched_limit, tabled_limit = int(sys.argv[3]), int(sys.argv[4])
INF = 10**9
seeds = ["trfk/3c/C3/KFRT b - 1", "trfk/3c/CR2/KF1T w - 1", "tr1k/2fc/CR2/KF1T b - 1",
         "t1fk/2rc/CR2/KF1T b - 1", "trfk/C2c/4/KFRT w - 1"]
seeds += [line.strip() for line in open(positions_file) if line.strip()]

def probe(sfen):
    url = f"http://{address}/probe?pos={urllib.parse.quote(sfen)}"
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")

def claim(value, shift=0, flip=False):
    """(kind, lowest distance, highest distance) of an answer's or a move's value, seen from
    the position `shift` plies on, its side to move the other one if `flip`."""
    category = value["category"]
    if category == "unknown":
        within = value.get("no_result_within")
        return None if within is None else ("unknown", within - shift + 1, INF)
    if category == "draw":
        return ("draw", INF, INF)
    if flip:
        category = {"win": "loss", "loss": "win"}[category]
    if value.get("dtw") is not None:
        low = high = value["dtw"] - shift
    else:
        low, high = value["dtw_at_least"] - shift, value["dtw_at_most"] - shift
    return (category, low, high)

claims = collections.defaultdict(list)   # position -> [(claim, who said it)]
conflicts = []
answers = searched = tabled = 0
followed = {"table": 0, "search": 0}
limits = {"table": tabled_limit, "search": searched_limit}
seen, queue = set(seeds), collections.deque(seeds)
while queue:
    sfen = queue.popleft()
    status, body = probe(sfen)
    if status == 503 and body.get("type", "").endswith("search-busy"):
        queue.append(sfen)
        continue
    if status != 200:
        conflicts.append(f"{sfen}: status {status} {body.get('title')}")
        continue
    answers += 1
    source = body.get("source")
    if source != "table":
        searched += 1
    else:
        tabled += 1
    own = claim(body)
    if own:
        claims[sfen].append((own, f"its answer ({source})"))
    moves = body.get("moves", [])
    for move in moves:
        child = move.get("sfen")
        if child is None:
            continue
        said = claim(move, shift=1, flip=True)
        if said:
            claims[child].append((said, f"move {move['move']} of {sfen}"))
        # Within the limits (a table's children are a table's; a real game's cost a search each).
        kind = "table" if source == "table" else "search"
        if child not in seen and followed[kind] < limits[kind]:
            followed[kind] += 1
            seen.add(child)
            queue.append(child)
    # The answer against its own moves.
    kinds = [m["category"] for m in moves]
    exact = [m["dtw"] for m in moves if m.get("dtw") is not None]
    category = body["category"]
    if category == "loss" and any(k in ("win", "draw") for k in kinds):
        conflicts.append(f"{sfen}: a loss with a move that does not lose")
    if category == "draw" and "win" in kinds:
        conflicts.append(f"{sfen}: a draw with a winning move")
    if category == "win" and moves and all(k == "loss" for k in kinds):
        conflicts.append(f"{sfen}: a win whose every move loses")
    if body.get("dtw") is not None and len(exact) == len(moves) and moves:
        wins = [m["dtw"] for m in moves if m["category"] == "win"]
        best = min(wins) if wins else max(exact)
        if best != body["dtw"]:
            conflicts.append(f"{sfen}: dtw {body['dtw']}, its moves' best {best}")

checked = 0
for sfen, said in claims.items():
    proven = {c[0] for c, _ in said if c[0] != "unknown"}
    if len(proven) > 1:
        conflicts.append(f"{sfen}: " + "; ".join(f"{c[0]} ({who})" for c, who in said))
        continue
    low = max(c[1] for c, _ in said)
    high = min(c[2] for c, _ in said)
    if proven and low > high:
        conflicts.append(f"{sfen}: distances that do not meet: "
                         + "; ".join(f"{c} ({who})" for c, who in said))
    checked += len(said)
for line in conflicts[:50]:
    print("CONFLICT", line)
print(f"{answers} answers ({searched} not from a table), {checked} claims about {len(claims)} positions, "
      f"{len(conflicts)} conflicts")
sys.exit(1 if conflicts else 0)
PY
