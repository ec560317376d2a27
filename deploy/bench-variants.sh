#!/usr/bin/env bash
# The say scenario alone, on a fresh release stack (2 gateways, 2 messaging) per
# variant: three 10 s rounds of `wrk -c64` one after the other (64 sessions, 256
# rooms), with the broker's CPU over each round. A variant is a list of --env
# settings; the first is the stack as it ships. Adds its table to
# docs/benchmarks.md ("Variants"; python -m geochat_bench.variants). Not in CI.
#
#   deploy/bench-variants.sh ['NAME KEY=VALUE …' …]
#   e.g. deploy/bench-variants.sh 'one-record-batches GEOCHAT_RDKAFKA_BATCH_NUM_MESSAGES=1' 'partitions-2 GEOCHAT_PARTITIONS=2'
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
STATE="$ROOT/.data/bench-variants"
bash deploy/install.sh
mkdir -p "$ROOT/.data"
swift build -c release > "$ROOT/.data/bench-variants-build.log" 2>&1 || { tail -n 30 "$ROOT/.data/bench-variants-build.log"; die "build failed"; }
trap 'bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true' EXIT
rows=()
for variant in "as-shipped" "$@"; do
  read -r name settings <<<"$variant"
  envs=()
  for kv in $settings; do envs+=(--env "$kv"); done
  bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
  bash deploy/stack.sh up --release --no-build --state-dir "$STATE" --gateways 2 --messaging 2 \
    --env GEOCHAT_LOG_LEVEL=warning "${NO_RATE_LIMITS[@]}" "${envs[@]+"${envs[@]}"}" >/dev/null
  rows+=("$(.venv/bin/python -m geochat_bench.variants --stack-env "$STATE/stack.env" --name "$name" --settings "${settings:-}")")
  log "${rows[-1]}"
  bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true
done
.venv/bin/python -m geochat_bench.variants --write-doc --command "bash deploy/bench-variants.sh $*" "${rows[@]}"
