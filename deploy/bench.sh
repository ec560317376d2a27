#!/usr/bin/env bash
# The benchmark suite, from a fresh clone: installs wrk, builds in release mode,
# starts a release stack (2 gateways, 2 messaging instances) under .data/bench and
# a bare Hummingbird hello world beside it, runs every scenario for a bounded time
# on loopback, prints a table and the headline `name: value` lines, writes them to
# docs/benchmarks.md, and tears the stack down.
#
#   deploy/bench.sh [--quick] [--keep] [--only idle,fanout,say,chats,memory] [bench.py options…]
#
# --quick: short runs and smaller data (a smoke test of the harness, not figures).
# --keep:  leave the stack running afterwards (deploy/stack.sh down --state-dir .data/bench).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench"
KEEP=0
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) BENCH_ARGS+=(--seconds 4 --rounds 1 --rooms 100000 --sessions 5000 --active-rooms 1000 --start-budget-s 60); shift ;;
    --keep) KEEP=1; shift ;;
    *) BENCH_ARGS+=("$1"); shift ;;
  esac
done

bash deploy/install.sh
if ! command -v wrk >/dev/null; then
  log "install: apt package wrk"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi

log "build: swift build -c release (the first release build takes 7+ minutes)"
mkdir -p "$ROOT/.data"
if ! swift build -c release --product geochat-gateway --product geochat-session --product geochat-rooms \
    --product geochat-messaging --product geochat-expiry --product HelloWorld > "$ROOT/.data/bench-build.log" 2>&1; then
  grep -E "error" "$ROOT/.data/bench-build.log" | head -n 40
  die "release build failed (full log: .data/bench-build.log)"
fi
BIN=$(swift build -c release --show-bin-path)

hello_pid=""
cleanup() {
  [ -n "$hello_pid" ] && kill "$hello_pid" 2>/dev/null || true
  if [ "$KEEP" = 0 ]; then bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# A fresh database each run: the scenarios insert a million rooms.
bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
log "stack: release, 2 gateways, 2 messaging instances, in $STATE"
bash deploy/stack.sh up --release --no-build --state-dir "$STATE" --gateways 2 --messaging 2 \
  --env GEOCHAT_LOG_LEVEL=warning --env GEOCHAT_PG_POOL_SIZE=16 >/dev/null

hello_port=$(free_port)
"$BIN/HelloWorld" "$hello_port" > "$STATE/logs/hello.log" 2>&1 &
hello_pid=$!
wait_http "http://127.0.0.1:$hello_port/hello" 30 || die "hello world did not start"

log "running the scenarios (about 10 minutes)"
.venv/bin/python deploy/bench/bench.py --stack-env "$STATE/stack.env" \
  --hello-url "http://127.0.0.1:$hello_port" --command "bash deploy/bench.sh" "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}"
