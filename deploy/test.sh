#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, builds,
# runs the Swift unit tests and the Kafka transport tests against a private
# broker, then brings up a local cluster (2 gateways, 2 messaging instances)
# and runs the HTTP integration tests against it. Tears everything down.
#
# Then the short fault-injection harness and the hostile-input corpus
# (deploy/faults.sh --short, on a cluster of its own, ~4 min). Then the same
# with the production broker profile (`kafka`) on the dev broker: the
# integration tests that cross the bus and the short fault harness.
#
#   deploy/test.sh [--unit-only | --integration-only]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

RUN_UNIT=1; RUN_INTEGRATION=1
case "${1:-}" in
  --unit-only) RUN_INTEGRATION=0 ;;
  --integration-only) RUN_UNIT=0 ;;
  "") ;;
  *) die "usage: deploy/test.sh [--unit-only|--integration-only]" ;;
esac

bash deploy/install.sh
# pytest, the reference Prometheus text parser (the metrics test), schemathesis (the
# JSON API against its OpenAPI document): tools/requirements/test.txt.
venv_install test
# The web map's browser test: Debian's chromium and chromedriver, selenium.
bash deploy/install-browser.sh

log "build: swift build --build-tests (the first build takes several minutes)"
mkdir -p "$ROOT/.data"
if ! swift build --build-tests > "$ROOT/.data/build.log" 2>&1; then
  grep -E "error" "$ROOT/.data/build.log" | head -n 40
  die "build failed (full log: .data/build.log)"
fi

failed=0
# The Swift code follows .swift-format (the toolchain's swift-format); `swift format
# format -i -r Services Shared Tests Package.swift` fixes what this finds.
if swift format lint --strict -r --parallel Services Shared Tests Package.swift; then
  log "format: ok (swift format lint --strict)"
else
  log "format: FAILED (run: swift format format -i -r Services Shared Tests Package.swift)"; failed=1
fi
bash deploy/check-sql.sh || failed=1
bash deploy/kubernetes/validate.sh || failed=1
bash deploy/monitoring/check.sh || failed=1
KAFKA_STATE="$ROOT/.data/test-kafka"
PG_STATE="$ROOT/.data/test-pg"
TEST_STACK="$ROOT/.data/test-stack"

cleanup() {
  kafka_stop "$KAFKA_STATE/kafka.pid" 2>/dev/null || true
  pg_stop "$PG_STATE" 2>/dev/null || true
  if [ -d "$TEST_STACK" ]; then bash deploy/stack.sh destroy --state-dir "$TEST_STACK" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

if [ "$RUN_UNIT" = 1 ]; then
  mkdir -p "$KAFKA_STATE"
  kport=$(free_port)
  kafka_start "$kport" "$KAFKA_STATE/kafka.log" "$KAFKA_STATE/kafka.pid"
  # Store and handler tests make a scratch database each on this PostgreSQL.
  rm -rf "$PG_STATE"
  pgport=$(free_port)
  pg_start "$PG_STATE" "$pgport"
  log "unit, store and broker tests: swift test"
  # pipefail: the pipeline fails when swift test does.
  if ! GEOCHAT_TEST_KAFKA_BROKERS="127.0.0.1:$kport" GEOCHAT_TEST_PG_PORT="$pgport" \
      GEOCHAT_TEST_PG_PASSWORD_FILE="$(pg_password_file "$PG_STATE")" \
      GEOCHAT_TEST_PG_CA="$(pg_ca_file "$PG_STATE")" LD_LIBRARY_PATH="$ROOT/.runtime/lib" \
      swift test 2>&1 \
      | grep -vE "^\[[0-9]+/[0-9]+\]|^Test Case .* started"; then
    failed=1
  fi
  kafka_stop "$KAFKA_STATE/kafka.pid"
  pg_stop "$PG_STATE"
fi

# The integration tests that prove what crosses the bus (commands and replies, events and read
# models, the outbox, idempotency, read-your-writes, expiry's jobs, outages): the kafka profile's pass.
KAFKA_PROFILE_TESTS=(Tests/Integration/test_commands.py Tests/Integration/test_idempotency.py
  Tests/Integration/test_outbox.py Tests/Integration/test_read_your_writes.py Tests/Integration/test_platform.py
  Tests/Integration/test_conformance_messages.py Tests/Integration/test_conformance_lobby.py
  Tests/Integration/test_conformance_rooms.py Tests/Integration/test_conformance_sessions.py
  Tests/Integration/test_expiry_jobs.py Tests/Integration/test_dependency_outages.py)

integration() { # PROFILE [PYTEST ARGS…]: a local cluster with that broker profile, the HTTP integration tests against it
  local profile=$1 ok=1; shift
  bash deploy/stack.sh destroy --state-dir "$TEST_STACK" >/dev/null 2>&1 || true
  log "integration ($profile profile): a local cluster with 2 gateways and 2 messaging instances"
  if bash deploy/stack.sh up --state-dir "$TEST_STACK" --gateways 2 --messaging 2 --no-build --kafka-profile "$profile" \
      "${NO_RATE_LIMITS[@]}" \
      --env GEOCHAT_EXPIRY_INTERVAL_S=2 --env GEOCHAT_PRESENCE_TIMEOUT_S=4 --env GEOCHAT_LOG_LEVEL=info \
      --env GEOCHAT_EXPIRY_BATCH_SIZE=100 \
      --env GEOCHAT_ADMIN_BCRYPT_COST=8; then  # cheap admin password hashes: the debug build on 2 busy cores
    if ! GEOCHAT_STACK_ENV="$TEST_STACK/stack.env" .venv/bin/python -m pytest -v -p no:cacheprovider "$@"; then
      ok=0
    fi
  else
    ok=0
  fi
  if [ "$ok" = 0 ] && [ -d "$TEST_STACK/logs" ]; then
    for f in "$TEST_STACK"/logs/*.log; do
      echo "===== last lines of $f"; tail -n 60 "$f" | grep -v "Connection refused" | tail -n 30
    done
  fi
  bash deploy/stack.sh destroy --state-dir "$TEST_STACK" >/dev/null 2>&1 || true
  [ "$ok" = 1 ]
}

if [ "$RUN_INTEGRATION" = 1 ]; then
  integration tansu Tests/Integration || failed=1
  log "reliability: short fault-injection harness and hostile-input corpus"
  if ! bash deploy/faults.sh --short --no-doc; then failed=1; fi
  # The production settings (the kafka profile: idempotent producer, plain topics, no re-created topics
  # followed) on the dev broker: the tests that cross the bus, and the fault harness without broker restarts.
  integration kafka "${KAFKA_PROFILE_TESTS[@]}" || failed=1
  log "reliability (kafka profile): short fault-injection harness"
  if ! bash deploy/faults.sh --short --no-doc --kafka-profile kafka; then failed=1; fi
fi

if [ "$failed" = 0 ]; then log "all tests passed"; else log "tests FAILED"; fi
exit "$failed"
