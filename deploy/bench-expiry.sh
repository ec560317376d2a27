#!/usr/bin/env bash
# Expiry benchmark (a script, not a timed test): a release-build stack with 2
# gateways and 2 messaging instances, N idle rooms with messages inserted in
# bulk, pollers on live rooms; prints the run's duration and the poll latency
# p50/p99 before and during the run. Results go to docs/benchmarks.md by hand.
#
#   deploy/bench-expiry.sh [--rooms N] [--keep] [--no-build] [--debug] [--profile] [--env NAME=VALUE]… [-- driver options…]
#   (--profile: PostgreSQL logs every statement over 10 ms and the plans over 30 ms with their triggers
#    (python -m geochat_bench.pg_profile); prints where the database's time went. It slows what it logs:
#    the run's own figures are then not the benchmark's.)
#   (--env: passed to every service, e.g. --env GEOCHAT_EXPIRY_PARALLEL=1)
#   (--debug: the debug build, to try the script itself at a small N; figures from it mean nothing)
#   (driver options, python -m geochat_bench.expiry --help: --messages-per-room, --pollers, --live-rooms, --poll-interval, --baseline-s)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench-expiry"
KEEP=0; BUILD=1; DRIVER=(); CONFIG=release; EXTRA_ENV=(); PROFILE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rooms) DRIVER+=(--rooms "$2"); shift 2 ;;
    --keep) KEEP=1; shift ;;
    --no-build) BUILD=0; shift ;;
    --debug) CONFIG=debug; shift ;;
    --profile) PROFILE=1; shift ;;
    --env) EXTRA_ENV+=(--env "$2"); shift 2 ;;
    --state-dir) STATE=$2; shift 2 ;;
    --) shift; DRIVER+=("$@"); break ;;
    *) die "unknown option $1" ;;
  esac
done

bash deploy/install.sh
if [ "$BUILD" = 1 ]; then
  log "build: swift build -c $CONFIG (the first release build takes several minutes)"
  swift build -c "$CONFIG" > "$ROOT/.data/bench-build.log" 2>&1 || { tail -n 30 "$ROOT/.data/bench-build.log"; die "release build failed"; }
fi
cleanup() { [ "$KEEP" = 1 ] || bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true; }
trap cleanup EXIT
bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
# The schedule is pushed a day away: the run measured is the on-demand one.
RELEASE=(); [ "$CONFIG" = release ] && RELEASE=(--release)
bash deploy/stack.sh up --state-dir "$STATE" "${RELEASE[@]}" --no-build --gateways 2 --messaging 2 \
  --env GEOCHAT_EXPIRY_INTERVAL_S=86400 --env GEOCHAT_LOG_LEVEL=info "${NO_RATE_LIMITS[@]}" \
  "${EXTRA_ENV[@]+"${EXTRA_ENV[@]}"}"
export GEOCHAT_STACK_ENV="$STATE/stack.env"
PG_LOG="$STATE/pg/postgres.log"
if [ "$PROFILE" = 1 ]; then
  .venv/bin/python -m geochat_bench.pg_profile enable
  # The settings reach new connections: the batch's owners reconnect.
  for i in $(ls "$STATE/instances" | sed 's/\.env$//' | grep -E '^(rooms|messaging|expiry)-'); do
    bash deploy/stack.sh stop "$i" --state-dir "$STATE" >/dev/null
    bash deploy/stack.sh start "$i" --state-dir "$STATE" >/dev/null
    port=$(grep '^GEOCHAT_HTTP_PORT=' "$STATE/instances/$i.env" | cut -d= -f2)
    wait_http "http://127.0.0.1:$port/ready" 120 || die "$i did not become ready after its restart"
  done
  PG_LOG_FROM=$(stat -c %s "$PG_LOG")
fi
log "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
.venv/bin/python -m geochat_bench.expiry "${DRIVER[@]+"${DRIVER[@]}"}"
if [ "$PROFILE" = 1 ]; then
  echo
  .venv/bin/python -m geochat_bench.pg_profile report --log "$PG_LOG" --from "$PG_LOG_FROM" \
    --plan "INSERT INTO rooms.removed_rooms" --plan "INSERT INTO messaging.room_logs (room_id, removed_at)" \
    --plan "DELETE FROM messaging.messages WHERE room_id = ANY"
  .venv/bin/python -m geochat_bench.pg_profile disable
fi
log "load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -h "expiry job finished" "$STATE"/logs/expiry-1.log | tail -n 1 || true
