#!/usr/bin/env bash
# The fault-injection harness: starts a local cluster (2 gateways, 2 messaging,
# one of each other service) under its own state folder, drives a steady load
# of posts and pollers, kills and restarts every kind of service and stops and
# restarts PostgreSQL and the Kafka broker meanwhile, then checks that nothing
# acknowledged was lost or duplicated and no poller missed a message. Then it
# replays the hostile-input corpus against the same cluster. Writes the figures
# to docs/reliability.md (and .data/faults/*.json). Loopback only.
#
#   deploy/faults.sh [--short] [--release] [--rate N] [--kafka-profile tansu|kafka] [--keep] [--no-doc]
#     --short   a few faults (one per kind) and a smaller corpus: CI, < 5 min
#     --release the release build of the services (built if missing), as operators run them
#     --rate N  target posts per second (default 500)
#     --kafka-profile  the services' broker profile (default tansu, as the one-machine stack); kafka:
#               the production settings on the local Tansu, every fault but the broker's restart
#               (Tansu forgets its topics then; a Kafka cluster does not)
#     --keep    leave the cluster running afterwards (stop: deploy/stack.sh destroy --state-dir .data/faults/stack)
#     --no-doc  do not rewrite docs/reliability.md
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

SHORT=""; RATE=500; KEEP=0; DOC=1; CONFIG=debug; PROFILE=tansu
while [ $# -gt 0 ]; do
  case "$1" in
    --short) SHORT=--short; shift ;;
    --release) CONFIG=release; shift ;;
    --rate) RATE=$2; shift 2 ;;
    --kafka-profile) PROFILE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --no-doc) DOC=0; shift ;;
    *) die "usage: deploy/faults.sh [--short] [--release] [--rate N] [--kafka-profile tansu|kafka] [--keep] [--no-doc]" ;;
  esac
done

OUT="$ROOT/.data/faults"
STACK="$OUT/stack"
mkdir -p "$OUT"
bash deploy/install.sh >/dev/null
began=$SECONDS

# Rate limits off for the load (the 429 path is tested on a gateway with
# default limits, Tests/Integration/test_limits.py).
# A dead group member's partitions move after about the session timeout: 4 s
# here (6 s is the one-machine default; see docs/reliability.md).
LOAD_ENV=("${NO_RATE_LIMITS[@]}" --env GEOCHAT_LOG_LEVEL=notice --env GEOCHAT_KAFKA_SESSION_TIMEOUT_MS=4000)

cleanup() {
  if [ "${status:-0}" != 0 ] && [ -d "$STACK/logs" ]; then
    # The stack is destroyed below: show what its processes said last (a crash's trap message).
    for f in "$STACK"/logs/*.log; do
      echo "===== last lines of $f"; grep -v "Connection refused" "$f" | tail -n 25
    done
  fi
  if [ "$KEEP" = 0 ]; then bash deploy/stack.sh destroy --state-dir "$STACK" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

bash deploy/stack.sh destroy --state-dir "$STACK" >/dev/null 2>&1 || true
if [ ! -x "$(swift build -c "$CONFIG" --show-bin-path)/geochat-gateway" ]; then
  log "faults: building ($CONFIG)"
  swift build -c "$CONFIG" > "$OUT/build.log" 2>&1 || die "build failed (see $OUT/build.log)"
fi
RELEASE=(); [ "$CONFIG" = release ] && RELEASE=(--release)
log "faults: starting the cluster ($CONFIG build, $PROFILE profile)"
bash deploy/stack.sh up --state-dir "$STACK" "${RELEASE[@]+"${RELEASE[@]}"}" --gateways 2 --messaging 2 --no-build \
  --kafka-profile "$PROFILE" "${LOAD_ENV[@]}" >/dev/null

status=0
log "faults: load and faults"
.venv/bin/python Tests/Reliability/faults.py --stack-env "$STACK/stack.env" $SHORT --rate "$RATE" \
  --out "$OUT/faults.json" || status=1
log "faults: hostile-input corpus"
.venv/bin/python Tests/Reliability/fuzz_corpus.py --stack-env "$STACK/stack.env" $SHORT \
  --out "$OUT/fuzz.json" || status=1
if [ "$DOC" = 1 ]; then
  .venv/bin/python Tests/Reliability/report.py --faults "$OUT/faults.json" --fuzz "$OUT/fuzz.json" \
    --seconds $((SECONDS - began)) --build "$CONFIG" $SHORT > docs/reliability.md
  log "faults: figures written to docs/reliability.md"
fi
log "faults: done in $((SECONDS - began)) s"
exit "$status"
