#!/usr/bin/env bash
# The dev broker's own costs, measured: Tansu's CPU per Fetch request (by partitions asked, topics,
# wait, records stored), per Produce request and per topic made or deleted. No GeoChat service
# runs and nothing is built: for each step a private Tansu (memory storage) is started under
# .data/bench-broker on a free port of its own, the step's clients (python -m
# geochat_bench.broker_cost measure) talk to it alone, and it is stopped (and waited for) before
# the next, so one step's stored records and topics do not weigh on the next. Then the steps'
# figures are printed and written to docs/benchmarks.md between the broker-cost markers, with
# the cost model fitted from them. About 13 minutes; one Tansu and one Python client at a time.
#
#   deploy/bench-broker.sh [--no-doc] [--steps "partitions topics-vs-partitions stored produce topics"]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench-broker"
DOC=1
STEPS="partitions topics-vs-partitions stored produce topics"
COMMAND="bash deploy/bench-broker.sh${*:+ $*}"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-doc) DOC=0; shift ;;
    --steps) STEPS=$2; shift 2 ;;
    *) die "usage: deploy/bench-broker.sh [--no-doc] [--steps \"STEP…\"]" ;;
  esac
done

bash deploy/install.sh
mkdir -p "$STATE"
rm -f "$STATE"/*.json
PIDFILE="$STATE/tansu.pid"
trap 'kafka_stop "$PIDFILE"' EXIT
LOAD_START=$(uptime)
log "bench-broker: $LOAD_START"
for step in $STEPS; do
  port=$(free_port)
  kafka_start "$port" "$STATE/tansu.$step.log" "$PIDFILE"
  log "bench-broker: step $step (Tansu pid $(cat "$PIDFILE"), 127.0.0.1:$port)"
  .venv/bin/python -m geochat_bench.broker_cost measure --step "$step" --brokers "127.0.0.1:$port" \
    --broker-pid "$(cat "$PIDFILE")" --out "$STATE/$step.json" || log "bench-broker: step $step failed"
  kafka_stop "$PIDFILE"  # waits for the process to end (Tansu holds its port 6-7 s)
done
LOAD_END=$(uptime)
log "bench-broker: $LOAD_END"
args=(report --dir "$STATE" --command "$COMMAND" --load-start "$LOAD_START" --load-end "$LOAD_END")
[ "$DOC" = 1 ] && args+=(--doc "$ROOT/docs/benchmarks.md")
.venv/bin/python -m geochat_bench.broker_cost "${args[@]}"
