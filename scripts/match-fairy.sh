#!/usr/bin/env bash
# Our engine against Fairy-Stockfish over UCI, at equal time: the working tree's `shogi4 uci`
# (no tables, no proof store: the engine alone) against a Fairy-Stockfish binary that plays
# Shogi4, paired openings with colours swapped, refereed by our rules (an illegal move forfeits).
#
#   scripts/match-fairy.sh FAIRY_STOCKFISH [PAIRS] [LIMIT] [JOBS] [LEVEL]
#
# FAIRY_STOCKFISH must know the friendly jump (upstream Fairy-Stockfish does not: it needs the
# seed author's small patch, which adds a `friendlyJump` variant option; see
# docs/measurements.md, "Against Fairy-Stockfish"). The variant's configuration is written
# here. PAIRS (default 100), LIMIT a move's budget as `100ms` (default; node budgets are not
# comparable between the two engines), JOBS games at once (default 1), LEVEL: only openings
# our engine scores within ±LEVEL centipawns (default: every opening; see
# play/examples/match.rs). Both sides get one thread and 64 MiB of hash. Prints our engine's
# Elo against it with a 95% interval.
set -euo pipefail
cd "$(dirname "$0")/.."
fairy=${1:?usage: scripts/match-fairy.sh FAIRY_STOCKFISH [PAIRS] [LIMIT] [JOBS] [LEVEL]}
pairs=${2:-100}; limit=${3:-100ms}; jobs=${4:-1}; level=${5:-}
fairy=$(realpath "$fairy")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Shogi4 in Fairy-Stockfish's variant language: the first player is white and moves up the
# board; the carp is `p`, the Royal a commoner whose capture ends the game.
cat > "$work/shogi4.ini" <<'INI'
[shogi4]
maxRank = 4
maxFile = 4
commoner = k
customPiece1 = p:fW
customPiece2 = t:fWfF
customPiece3 = r:F
customPiece4 = f:W
silver = s
gold = g
startFen = trfk/3p/P3/KFRT[-] w 0 1
friendlyJump = true
promotionRegionWhite = *4
promotionRegionBlack = *1
mandatoryPiecePromotion = true
promotedPieceType = p:s t:s r:s f:g
pieceDrops = true
capturesToHand = true
dropRegionWhite = *1 *2 *3
dropRegionBlack = *2 *3 *4
extinctionValue = loss
extinctionPieceTypes = k
extinctionPseudoRoyal = false
stalemateValue = loss
castling = false
doubleStep = false
INI
# The patched engine must play our rules: the start position's move counts to depth 3
# (Fairy-Stockfish counts no moves after a Royal is taken; we count that capture as a leaf,
# and two such captures happen by ply 2).
perft=$(printf 'uci\nsetoption name VariantPath value %s\nsetoption name UCI_Variant value shogi4\nposition startpos\ngo perft 3\nquit\n' \
    "$work/shogi4.ini" | "$fairy" | sed -n 's/^Nodes searched: //p')
if [ "$perft" != 624 ]; then
    echo "$fairy does not play Shogi4 (perft 3: ${perft:-none}, expected 624); is it patched with the friendly jump?" >&2
    exit 1
fi
cargo build --quiet --release -p shogi4-cli -p shogi4-play --bins --example match
cp target/release/shogi4 "$work/ours"
echo "A: shogi4 uci (working tree, the engine alone); B: $fairy"
target/release/examples/match "$work/ours uci --tables /nonexistent" \
    "$fairy;;setoption name VariantPath value $work/shogi4.ini;;setoption name UCI_Variant value shogi4;;setoption name Hash value 64" \
    "$pairs" "$limit" "$jobs" ${level:+"$level"}
