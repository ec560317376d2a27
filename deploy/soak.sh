#!/usr/bin/env bash
# A long run against the default one-machine stack, never restarted (issue 25):
# says at a fixed rate for many minutes (30 by default; hours with --minutes), with
# the stack's idle CPU and a lone start + say measured before and after. Not in CI.
# Adds its figures to docs/benchmarks.md ("Soak").
#
#   deploy/soak.sh [--keep] [--gateways N] [--messaging N] [--env KEY=VALUE]… [geochat_bench.soak options: --minutes M --rate R --no-doc]
# (`--env` sets a service setting on the stack, as in deploy/bench-writes.sh: a setting tried against the default.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/soak"
ORIGINAL_ARGS="$*"
KEEP=0
STACK=()
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP=1; shift ;;
    --gateways|--messaging|--env) STACK+=("$1" "$2"); shift 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done

bash deploy/install.sh
mkdir -p "$ROOT/.data"
log "build: swift build -c release"
swift build -c release > "$ROOT/.data/soak-build.log" 2>&1 || { tail -n 30 "$ROOT/.data/soak-build.log"; die "build failed"; }
cleanup() { if [ "$KEEP" = 0 ]; then bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT
bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
bash deploy/stack.sh up --release --no-build --state-dir "$STATE" "${STACK[@]+"${STACK[@]}"}" \
  --env GEOCHAT_LOG_LEVEL=warning "${NO_RATE_LIMITS[@]}" >/dev/null
.venv/bin/python -m geochat_bench.soak --stack-env "$STATE/stack.env" \
  --command "bash deploy/soak.sh${ORIGINAL_ARGS:+ $ORIGINAL_ARGS}" "${ARGS[@]+"${ARGS[@]}"}"
