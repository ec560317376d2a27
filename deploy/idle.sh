#!/usr/bin/env bash
# Idle cost of the one-machine stack: starts it (one instance of each service,
# Tansu, PostgreSQL) under .data/idle, waits until every instance is ready and
# a further 20 s for start-up work to settle, then reads the CPU time every
# process of the stack used over 60 s with no traffic at all (utime + stime
# from /proc, PostgreSQL's and Tansu's children included). Three stacks, one
# after the other: the services with the `tansu` broker profile (as the stack
# runs them); the `kafka` profile with its own long-poll fetch waits (Tansu
# answers those up to half the wait late, so that run has the services' own
# idle cost with production settings, not usable latency); and the local
# cluster (2 gateways, 2 messaging instances) on `tansu`. On the `tansu` runs a
# session joins a room and says before the quiet, and the first say after it
# is timed (`--first-say`): what the rested readers and idle waits cost a user.
# Prints cores per process and in all (python -m geochat_bench.idle_cpu), writes them to docs/benchmarks.md
# between the idle-cost markers, and tears the stack down.
#
# `--only tansu` measures the first stack alone and writes no doc (a setting tried
# with --env, against the same command without it).
#
#   deploy/idle.sh [--release] [--seconds N] [--no-doc] [--only tansu] [--env KEY=VALUE]…
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/idle"
SECONDS_MEASURED=60
DOC=1
STACK_ARGS=()
CONFIG=debug
ONLY=
while [ $# -gt 0 ]; do
  case "$1" in
    --release) STACK_ARGS+=(--release); CONFIG=release; shift ;;
    --seconds) SECONDS_MEASURED=$2; shift 2 ;;
    --no-doc) DOC=0; shift ;;
    --only) [ "$2" = tansu ] || die "--only: tansu"; ONLY=$2; DOC=0; shift 2 ;;
    --env) STACK_ARGS+=(--env "$2"); shift 2 ;;
    *) die "usage: deploy/idle.sh [--release] [--seconds N] [--no-doc] [--only tansu] [--env KEY=VALUE]…" ;;
  esac
done

bash deploy/install.sh
log "build: swift build -c $CONFIG"
swift build -c "$CONFIG" > "$ROOT/.data/idle-build.log" 2>&1 || die "build failed (.data/idle-build.log)"
bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
trap 'bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true' EXIT
measure() { # NAME ARGS…: a stack as `deploy/stack.sh up ARGS…` starts it, measured idle
  local name=$1; shift
  bash deploy/stack.sh up --state-dir "$STATE" --no-build "$@" "${STACK_ARGS[@]+"${STACK_ARGS[@]}"}"
  log "$name: settling 20 s, then measuring ${SECONDS_MEASURED} s with no traffic"
  sleep 20
  .venv/bin/python -m geochat_bench.idle_cpu measure --state-dir "$STATE" --seconds "$SECONDS_MEASURED" \
    --out "$STATE.$name.json" "${FIRST_SAY[@]+"${FIRST_SAY[@]}"}"
  bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null
}
FIRST_SAY=(--first-say)
measure tansu --kafka-profile tansu
if [ -n "$ONLY" ]; then
  .venv/bin/python -m geochat_bench.idle_cpu report --seconds "$SECONDS_MEASURED" --build "$CONFIG" \
    --run '`tansu` profile' "$STATE.tansu.json"
  exit 0
fi
FIRST_SAY=()  # the kafka profile's long waits on Tansu: idle cost only, no usable latency
measure kafka --kafka-profile kafka --kafka-waits production
FIRST_SAY=(--first-say)
measure cluster --kafka-profile tansu --gateways 2 --messaging 2
args=(report --seconds "$SECONDS_MEASURED" --build "$CONFIG" --run '`tansu` profile' "$STATE.tansu.json"
  --run '`kafka` profile (its own fetch waits)' "$STATE.kafka.json"
  --run '`tansu`, 2 gateways + 2 messaging' "$STATE.cluster.json")
[ "$DOC" = 1 ] && args+=(--doc "$ROOT/docs/benchmarks.md")
.venv/bin/python -m geochat_bench.idle_cpu "${args[@]}"
