#!/usr/bin/env bash
# Idle cost of the one-machine stack: starts it (one instance of each service,
# Tansu, PostgreSQL) under .data/idle, waits until every instance is ready and
# a further 20 s for start-up work to settle, then reads the CPU time every
# process of the stack used over 60 s with no traffic at all (utime + stime
# from /proc, PostgreSQL's and Tansu's children included). Twice, side by
# side: the services with the `tansu` broker profile (as the stack runs them),
# then restarted with the `kafka` profile (the long-poll fetch waits a Kafka
# cluster gets; Tansu answers those only when the wait ends, so that run has
# the services' own idle cost with production settings, not usable latency).
# Prints cores per process and in all (python -m geochat_bench.idle_cpu), writes them to docs/benchmarks.md
# between the idle-cost markers, and tears the stack down.
#
#   deploy/idle.sh [--release] [--seconds N] [--no-doc] [--env KEY=VALUE]…
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/idle"
SECONDS_MEASURED=60
DOC=1
STACK_ARGS=()
CONFIG=debug
while [ $# -gt 0 ]; do
  case "$1" in
    --release) STACK_ARGS+=(--release); CONFIG=release; shift ;;
    --seconds) SECONDS_MEASURED=$2; shift 2 ;;
    --no-doc) DOC=0; shift ;;
    --env) STACK_ARGS+=(--env "$2"); shift 2 ;;
    *) die "usage: deploy/idle.sh [--release] [--seconds N] [--no-doc] [--env KEY=VALUE]…" ;;
  esac
done

bash deploy/install.sh
log "build: swift build -c $CONFIG"
swift build -c "$CONFIG" > "$ROOT/.data/idle-build.log" 2>&1 || die "build failed (.data/idle-build.log)"
bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
trap 'bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true' EXIT
measure() { # PROFILE
  bash deploy/stack.sh up --state-dir "$STATE" --no-build --kafka-profile "$1" --kafka-waits production \
    "${STACK_ARGS[@]+"${STACK_ARGS[@]}"}"
  log "profile $1: settling 20 s, then measuring ${SECONDS_MEASURED} s with no traffic"
  sleep 20
  .venv/bin/python -m geochat_bench.idle_cpu measure --state-dir "$STATE" --seconds "$SECONDS_MEASURED" \
    --out "$STATE.$1.json"
  bash deploy/stack.sh down --state-dir "$STATE" >/dev/null
}
measure tansu
measure kafka
args=(report --seconds "$SECONDS_MEASURED" --build "$CONFIG" --run tansu "$STATE.tansu.json" --run kafka "$STATE.kafka.json")
[ "$DOC" = 1 ] && args+=(--doc "$ROOT/docs/benchmarks.md")
.venv/bin/python -m geochat_bench.idle_cpu "${args[@]}"
