#!/usr/bin/env bash
# The benchmark suite, from a fresh clone: installs wrk, builds in release mode,
# starts a release stack (2 gateways, 2 messaging instances) under .data/bench and
# a bare Hummingbird hello world beside it (its own package, Tests/Benchmarks/HelloWorld,
# built here), runs every scenario for a bounded time on loopback
# (`python -m geochat_bench.suite`, tools/geochat_bench), prints a table and the
# headline `name: value` lines, writes them to docs/benchmarks.md, and tears the stack down.
#
#   deploy/bench.sh [--quick] [--keep] [--debug-services] [--only idle,cost,chats,say,memory,fanout] [suite options…]
#
# Issue 28's memory target (1,000,000 rooms indexed, 100,000 sessions):
#   deploy/bench.sh --only chats,memory --memory-rooms 1000000 --start-budget-s 600
#
# --quick: short runs and smaller data (a smoke test of the harness, not figures).
# --keep:  leave the stack running afterwards (deploy/stack.sh down --state-dir .data/bench).
# --debug-services: gateways and hello world in release, the session, rooms,
#          messaging and expiry services in debug. Their release build compiles
#          two copies of BoringSSL (PostgresNIO's TLS and crypto, ~800 C files),
#          which takes over an hour on a loaded 2-core machine; the gateway needs neither.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench"
ORIGINAL_ARGS="$*"
KEEP=0
DEBUG_SERVICES=0
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) BENCH_ARGS+=(--seconds 4 --rounds 1 --rooms 100000 --sessions 5000 --active-rooms 1000 --start-budget-s 60); shift ;;
    --keep) KEEP=1; shift ;;
    --debug-services) DEBUG_SERVICES=1; shift ;;
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

mkdir -p "$ROOT/.data"
build() { # ARGS… (output to .data/bench-build.log)
  if ! swift build "$@" > "$ROOT/.data/bench-build.log" 2>&1; then
    grep -E "error" "$ROOT/.data/bench-build.log" | head -n 40
    die "build failed: swift build $* (full log: .data/bench-build.log)"
  fi
}
if [ "$DEBUG_SERVICES" = 1 ]; then
  log "build: release gateway, debug services"
  build -c release --product geochat-gateway
  build
  SERVICE_CONFIG=()
else
  # Every product at once: `--product` given twice builds only the last one.
  log "build: swift build -c release (the first release build takes 7+ minutes, far more on a loaded machine)"
  build -c release
  SERVICE_CONFIG=(--release)
fi
BIN=$(swift build -c release --show-bin-path)
# Only the idle and chats scenarios compare with hello world: `--only` without
# them (say, `--only memory`) neither builds nor starts it (its release build is
# a package of its own, minutes on a loaded machine).
NEEDS_HELLO=1
for i in "${!BENCH_ARGS[@]}"; do
  if [ "${BENCH_ARGS[$i]}" = --only ]; then
    case ",${BENCH_ARGS[$((i + 1))]:-}," in *,idle,* | *,chats,*) ;; *) NEEDS_HELLO=0 ;; esac
  fi
done
[ "$NEEDS_HELLO" = 1 ] && hello_build "$ROOT/.data/bench-hello-build.log"

hello_pid=""
cleanup() {
  [ -n "$hello_pid" ] && kill "$hello_pid" 2>/dev/null || true
  if [ "$KEEP" = 0 ]; then bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# The load comes from one address and a few sessions: the gateways' abuse limits
# are turned off (NO_RATE_LIMITS from lib.sh) so the figures measure the server.
# A fresh database each run: the scenarios insert a million rooms.
bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
log "stack: 2 gateways, 2 messaging instances, in $STATE"
bash deploy/stack.sh up "${SERVICE_CONFIG[@]+"${SERVICE_CONFIG[@]}"}" --no-build --state-dir "$STATE" \
  --gateways 2 --messaging 2 --env GEOCHAT_LOG_LEVEL=warning --env GEOCHAT_PG_POOL_SIZE=16 \
  "${NO_RATE_LIMITS[@]}" >/dev/null
if [ "$DEBUG_SERVICES" = 1 ]; then
  for gw in gateway-1 gateway-2; do
    sed -i "s|^BINARY=.*|BINARY=$BIN/geochat-gateway|" "$STATE/instances/$gw.env"
    bash deploy/stack.sh stop "$gw" --state-dir "$STATE" >/dev/null
    bash deploy/stack.sh start "$gw" --state-dir "$STATE" >/dev/null
  done
  . "$STATE/stack.env"
  for url in $GATEWAY_URLS; do wait_http "$url/ready" 60 || die "$url did not become ready"; done
fi

hello_port=$(free_port)
if [ "$NEEDS_HELLO" = 1 ]; then
  hello_start "$hello_port" "$STATE/logs/hello.log"
  hello_pid=$HELLO_PID
fi

log "running the scenarios (about 11 minutes)"
configuration="release build"
[ "$DEBUG_SERVICES" = 1 ] && configuration="gateways and hello world release, session/rooms/messaging/expiry debug (--debug-services)"
.venv/bin/python -m geochat_bench.suite --stack-env "$STATE/stack.env" --hello-url "http://127.0.0.1:$hello_port" \
  --command "bash deploy/bench.sh${ORIGINAL_ARGS:+ $ORIGINAL_ARGS}" --build "$configuration" "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}"
