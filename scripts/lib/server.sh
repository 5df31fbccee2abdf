# Shared by the scripts that run a server of their own (sourced, not run): a free port for
# each server, and readiness checks that fail loudly instead of falling through.

# start_server LOG FLAGS...: starts $SERVER_BIN (default target/release/shogi4-server) on a
# port the system picks,
# then sets $server (its pid) and $address (host:port) once it prints that it listens. Fails,
# showing LOG, if it exits first or has not listened within 60 s.
start_server() {
  local log=$1
  shift
  local out
  out=$(mktemp)
  "${SERVER_BIN:-target/release/shogi4-server}" --bind 127.0.0.1:0 "$@" >"$out" 2>"$log" &
  server=$!
  address=""
  for _ in $(seq 300); do
    address=$(sed -n 's|^listening on http://||p' "$out")
    if [ -n "$address" ]; then
      rm -f "$out"
      return 0
    fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  rm -f "$out"
  echo "the server did not start listening; its log:" >&2
  cat "$log" >&2
  return 1
}

# wait_healthy ADDRESS SECONDS LOG: waits for /health to answer 200 (tables solved and
# loaded). Fails, showing LOG, if it does not within SECONDS.
wait_healthy() {
  local address=$1 seconds=$2 log=$3
  for _ in $(seq $((seconds * 5))); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$address/health")" = 200 ] && return 0
    sleep 0.2
  done
  echo "http://$address/health did not answer 200 within $seconds s; the server's log:" >&2
  cat "$log" >&2
  return 1
}
