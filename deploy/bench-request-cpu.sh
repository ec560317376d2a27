#!/usr/bin/env bash
# What one request costs the gateway's CPU (issue 28, item 5): a release stack under
# .data/bench-request-cpu, gateway 1's CPU time per idle poll and per `chats` over
# 10,000 rooms, and hello world's per request, in one run. With --old BINARY, gateway 1
# alternates between this build's binary and that one. Adds a block to docs/benchmarks.md.
#
#   deploy/bench-request-cpu.sh [--keep] [geochat_bench.request_cpu options: --old BINARY --pin --rounds N --label TEXT --no-doc]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench-request-cpu"
bench_arguments "$@"

bash deploy/install.sh
mkdir -p "$ROOT/.data"
log "build: swift build -c release, and hello world"
swift build -c release > "$ROOT/.data/bench-request-cpu-build.log" 2>&1 || { tail -n 30 "$ROOT/.data/bench-request-cpu-build.log"; die "build failed"; }
hello_build "$ROOT/.data/bench-hello-build.log"

cleanup() {
  if [ "$KEEP" = 0 ]; then bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
log "stack: 2 gateways, 2 messaging instances, in $STATE"
# The load comes from one address: the gateways' abuse limits are off (NO_RATE_LIMITS from lib.sh).
bash deploy/stack.sh up --release --no-build --state-dir "$STATE" --gateways 2 --messaging 2 \
  --env GEOCHAT_LOG_LEVEL=warning --env GEOCHAT_PG_POOL_SIZE=16 "${NO_RATE_LIMITS[@]}" >/dev/null

.venv/bin/python -m geochat_bench.request_cpu --stack-env "$STATE/stack.env" \
  --command "bash deploy/bench-request-cpu.sh${ORIGINAL_ARGS:+ $ORIGINAL_ARGS}" "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}"
