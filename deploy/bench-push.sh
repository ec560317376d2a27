#!/usr/bin/env bash
# Issue 15's benchmarks, from a fresh clone: builds in release mode, starts a
# release stack (2 gateways, 2 messaging instances) under .data/bench-push and a
# bare Hummingbird hello world beside it (its own package, Tests/Benchmarks/HelloWorld,
# built here), then measures (`python -m geochat_bench.push`, tools/geochat_bench/push.py):
# nearby search over 1,000,000 rooms next to hello world, say → push latency
# across gateways at 200 posts/s, and as many push subscribers on one gateway as
# the file limit allows (memory each, idle CPU, fan-out). Writes the table to
# docs/benchmarks.md between the push-bench markers and tears the stack down.
#
#   deploy/bench-push.sh [--keep] [geochat_bench.push options…, e.g. --only nearby --rooms 100000]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench-push"
bench_arguments "$@"

bash deploy/install.sh
mkdir -p "$ROOT/.data"
log "build: swift build -c release (the first release build takes 7+ minutes, far more on a loaded machine)"
swift build -c release > "$ROOT/.data/bench-push-build.log" 2>&1 || die "build failed (.data/bench-push-build.log)"
hello_build "$ROOT/.data/bench-push-hello-build.log"

hello_pid=""
cleanup() {
  [ -n "$hello_pid" ] && kill "$hello_pid" 2>/dev/null || true
  if [ "$KEEP" = 0 ]; then bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
log "stack: 2 gateways, 2 messaging instances (release), in $STATE"
bash deploy/stack.sh up --release --no-build --state-dir "$STATE" --gateways 2 --messaging 2 \
  --env GEOCHAT_LOG_LEVEL=warning --env GEOCHAT_PG_POOL_SIZE=16 "${NO_RATE_LIMITS[@]}" >/dev/null

hello_port=$(free_port)
hello_start "$hello_port" "$STATE/logs/hello.log"
hello_pid=$HELLO_PID

.venv/bin/python -m geochat_bench.push --stack-env "$STATE/stack.env" --hello-url "http://127.0.0.1:$hello_port" --hello-pid "$hello_pid" \
  --command "bash deploy/bench-push.sh${ORIGINAL_ARGS:+ $ORIGINAL_ARGS}" "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}"
