#!/usr/bin/env bash
# The cost run over cluster sizes (issue 28): a release stack with 4 gateways under
# .data/bench-scale, the same idle phones through 1, 2 and 4 of them; what each
# gateway reads, writes and spends, and what a phone-second costs the cluster.
# Writes the "Cluster sizes" section of docs/capacity.md.
#
#   deploy/bench-scale.sh [--keep] [geochat_bench.scale options: --phones N --sizes 1,2,4 --no-doc …]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench-scale"
bench_arguments "$@"

bash deploy/install.sh
mkdir -p "$ROOT/.data"
log "build: swift build -c release"
swift build -c release > "$ROOT/.data/bench-scale-build.log" 2>&1 || { tail -n 30 "$ROOT/.data/bench-scale-build.log"; die "build failed"; }

cleanup() {
  if [ "$KEEP" = 0 ]; then bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
log "stack: 4 gateways, in $STATE"
# The load comes from one address: the gateways' abuse limits are off (NO_RATE_LIMITS from lib.sh).
bash deploy/stack.sh up --release --no-build --state-dir "$STATE" --gateways 4 \
  --env GEOCHAT_LOG_LEVEL=warning "${NO_RATE_LIMITS[@]}" >/dev/null

.venv/bin/python -m geochat_bench.scale --stack-env "$STATE/stack.env" \
  --command "bash deploy/bench-scale.sh${ORIGINAL_ARGS:+ $ORIGINAL_ARGS}" "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}"
