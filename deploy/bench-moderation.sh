#!/usr/bin/env bash
# Moderation benchmark (a script, not a timed test): a release-build stack with
# 2 gateways and 2 messaging instances. Part 1: one session's 10,000 messages
# removed while pollers follow rooms through both gateways (duration, poll
# p50/p99 before and during). Part 2: single-message removals under a say
# load, until gone from polls on both gateways and from push (p50/p99).
# Results go to docs/benchmarks.md by hand, as printed.
#
#   deploy/bench-moderation.sh [--keep] [--no-build] [--debug] [-- driver options…]
#   (--debug: the debug build, to try the script itself; figures from it mean nothing)
#   (driver options, python -m geochat_bench.moderation --help: --sender-messages, --say-rate, --trials, …)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench-moderation"
KEEP=0; BUILD=1; DRIVER=(); CONFIG=release
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP=1; shift ;;
    --no-build) BUILD=0; shift ;;
    --debug) CONFIG=debug; shift ;;
    --state-dir) STATE=$2; shift 2 ;;
    --) shift; DRIVER+=("$@"); break ;;
    *) die "unknown option $1" ;;
  esac
done

bash deploy/install.sh
if [ "$BUILD" = 1 ]; then
  log "build: swift build -c $CONFIG (the first release build takes several minutes)"
  swift build -c "$CONFIG" > "$ROOT/.data/bench-build.log" 2>&1 || { tail -n 30 "$ROOT/.data/bench-build.log"; die "build failed"; }
fi
cleanup() { [ "$KEEP" = 1 ] || bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true; }
trap cleanup EXIT
bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
RELEASE=(); [ "$CONFIG" = release ] && RELEASE=(--release)
bash deploy/stack.sh up --state-dir "$STATE" "${RELEASE[@]}" --no-build --gateways 2 --messaging 2 \
  --env GEOCHAT_LOG_LEVEL=info "${NO_RATE_LIMITS[@]}"
export GEOCHAT_STACK_ENV="$STATE/stack.env"
log "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
.venv/bin/python -m geochat_bench.moderation "${DRIVER[@]+"${DRIVER[@]}"}"
log "load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
