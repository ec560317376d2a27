#!/usr/bin/env bash
# The write path's benchmark (issue 25): a release stack (2 gateways, 2 messaging
# instances) under .data/bench-writes and the PHP server of the same protocol
# (../shared/peers/php) beside it, measured in one run, alternating; the broker is
# never restarted. Adds its figures to docs/benchmarks.md ("Writes").
#
#   deploy/bench-writes.sh [--keep] [--env KEY=VALUE]… [geochat_bench.writes options: --only create,say,budget,push --label TEXT …]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STATE="$ROOT/.data/bench-writes"
PHP="$ROOT/../shared/peers/php"
bench_arguments "$@"
[ -x "$PHP/up" ] || die "the PHP reference server is not at $PHP"

bash deploy/install.sh
if ! command -v wrk >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi
mkdir -p "$ROOT/.data"
log "build: swift build -c release"
swift build -c release > "$ROOT/.data/bench-writes-build.log" 2>&1 || { tail -n 30 "$ROOT/.data/bench-writes-build.log"; die "build failed"; }

cleanup() {
  "$PHP/down" >/dev/null 2>&1 || true
  if [ "$KEEP" = 0 ]; then bash deploy/stack.sh down --state-dir "$STATE" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

bash deploy/stack.sh destroy --state-dir "$STATE" >/dev/null 2>&1 || true
log "stack: 2 gateways, 2 messaging instances, in $STATE"
bash deploy/stack.sh up --release --no-build --state-dir "$STATE" --gateways 2 --messaging 2 \
  --env GEOCHAT_LOG_LEVEL=warning "${NO_RATE_LIMITS[@]}" "${STACK_ENV[@]+"${STACK_ENV[@]}"}" >/dev/null
php_port=$(free_port)
"$PHP/down" >/dev/null 2>&1 || true
"$PHP/up" "$php_port" >/dev/null
wait_http "http://127.0.0.1:$php_port/chat.php?v=5&cmd=start&nick=probe" 60 || die "the PHP server did not start"

.venv/bin/python -m geochat_bench.writes --stack-env "$STATE/stack.env" --php-url "http://127.0.0.1:$php_port" \
  --command "bash deploy/bench-writes.sh${ORIGINAL_ARGS:+ $ORIGINAL_ARGS}" "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}"
