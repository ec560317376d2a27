#!/usr/bin/env bash
# The GeoChat stack on one machine: a private PostgreSQL cluster, a local Tansu
# broker and the five services, all under the state folder, on loopback ports.
#
#   deploy/stack.sh up [--state-dir DIR] [--gateways N] [--session N] [--rooms N]
#                      [--messaging N] [--expiry N] [--partitions N] [--kafka-profile tansu|kafka]
#                      [--kafka-brokers HOST:PORT] [--kafka-waits dev|production]
#                      [--release] [--no-build] [--env KEY=VAL]...
#   deploy/stack.sh down|status|destroy [--state-dir DIR]
#   deploy/stack.sh stop-kafka|start-kafka|stop-postgres|start-postgres [--state-dir DIR]
#   deploy/stack.sh stop|start|kill INSTANCE [--state-dir DIR]     (INSTANCE: gateway-1, messaging-2, …)
#
# The state folder (default .data/stack) keeps data, logs, pids and ports, so
# `up` after `down` comes back on the same ports with the same data.
#
# Partitions of the shared topics: as many as the most instances of one service
# that reads commands (session, rooms, messaging): 1 on the default stack, 2 for
# `--messaging 2`. Each partition adds to every fetch of the dev broker
# (docs/benchmarks.md, "The dev broker's costs"); the cluster manifests keep 16.
# `--kafka-profile kafka` runs the production settings on the local Tansu (the
# test suite's second pass); `--kafka-brokers HOST:PORT` starts no broker and
# points every service at an existing Kafka cluster with the `kafka` profile.
# `--kafka-waits production` keeps the kafka profile's long fetch waits on the
# local Tansu (idle cost only: Tansu answers a fetch up to half its wait late).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SERVICES=(session rooms messaging expiry gateway)   # start order: gateways last
declare -A COUNT=([session]=1 [rooms]=1 [messaging]=1 [expiry]=1 [gateway]=1)
STATE="$ROOT/.data/stack"
CONFIG=debug
BUILD=1
EXTRA_ENV=()
PARTITIONS=""
KAFKA_PROFILE=""
KAFKA_EXTERNAL=""
KAFKA_WAITS=dev

command=${1:-help}; shift || true
target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --state-dir) STATE=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    --gateways) COUNT[gateway]=$2; shift 2 ;;
    --session|--rooms|--messaging|--expiry) COUNT[${1#--}]=$2; shift 2 ;;
    --partitions) PARTITIONS=$2; shift 2 ;;
    --kafka-profile) KAFKA_PROFILE=$2; shift 2 ;;
    --kafka-brokers) KAFKA_EXTERNAL=$2; shift 2 ;;
    --kafka-waits) KAFKA_WAITS=$2; shift 2 ;;
    --release) CONFIG=release; shift ;;
    --no-build) BUILD=0; shift ;;
    --env) EXTRA_ENV+=("$2"); shift 2 ;;
    -*) die "unknown option $1" ;;
    *) target=$1; shift ;;
  esac
done

PORTS="$STATE/ports.env"
mkdir -p "$STATE/logs" "$STATE/pids" "$STATE/instances" "$STATE/snapshots"

# The broker settings of a state folder are kept with it (`up` again keeps them).
BROKER_FILE="$STATE/broker.env"
if [ "$command" = up ]; then
  saved() { grep "^$1=" "$BROKER_FILE" 2>/dev/null | tail -n1 | cut -d= -f2- || true; }
  [ -n "$KAFKA_EXTERNAL" ] || KAFKA_EXTERNAL=$(saved KAFKA_EXTERNAL)
  [ -n "$KAFKA_PROFILE" ] || KAFKA_PROFILE=$(saved KAFKA_PROFILE)
  [ -n "$KAFKA_PROFILE" ] || { [ -n "$KAFKA_EXTERNAL" ] && KAFKA_PROFILE=kafka || KAFKA_PROFILE=tansu; }
  case "$KAFKA_PROFILE" in tansu|kafka) ;; *) die "--kafka-profile: tansu or kafka, not '$KAFKA_PROFILE'" ;; esac
  [ -z "$KAFKA_EXTERNAL" ] || [ "$KAFKA_PROFILE" = kafka ] || die "--kafka-brokers: an existing cluster runs the kafka profile"
  [ -z "$KAFKA_EXTERNAL" ] || [[ "$KAFKA_EXTERNAL" =~ ^[^,:[:space:]]+:[0-9]+(,[^,:[:space:]]+:[0-9]+)*$ ]] \
    || die "--kafka-brokers: HOST:PORT[,HOST:PORT…], not '$KAFKA_EXTERNAL'"
  if [ -z "$PARTITIONS" ]; then
    PARTITIONS=1
    for s in session rooms messaging; do
      if [ "${COUNT[$s]}" -gt "$PARTITIONS" ]; then PARTITIONS=${COUNT[$s]}; fi
    done
  fi
  [[ "$PARTITIONS" =~ ^[1-9][0-9]*$ ]] || die "--partitions: a positive number, not '$PARTITIONS'"
  printf 'KAFKA_PROFILE=%s\nKAFKA_EXTERNAL=%s\nPARTITIONS=%s\n' "$KAFKA_PROFILE" "$KAFKA_EXTERNAL" "$PARTITIONS" > "$BROKER_FILE"
else
  KAFKA_EXTERNAL=$(grep "^KAFKA_EXTERNAL=" "$BROKER_FILE" 2>/dev/null | cut -d= -f2- || true)
fi
kafka_brokers() { if [ -n "$KAFKA_EXTERNAL" ]; then echo "$KAFKA_EXTERNAL"; else echo "127.0.0.1:$(port_of kafka)"; fi; }

save_port() { grep -q "^$1=" "$PORTS" 2>/dev/null || echo "$1=$2" >> "$PORTS"; }
port_of() { grep "^$1=" "$PORTS" 2>/dev/null | tail -n1 | cut -d= -f2; }

bin_dir() { (cd "$ROOT" && swift build -c "$CONFIG" --show-bin-path); }

build() {
  # Every product at once: SwiftPM builds only the last of several `--product` flags.
  log "build: swift build -c $CONFIG (the first build takes several minutes)"
  mkdir -p "$ROOT/.data"
  if ! (cd "$ROOT" && swift build -c "$CONFIG" > "$ROOT/.data/stack-build.log" 2>&1); then
    grep -E "error" "$ROOT/.data/stack-build.log" | head -n 40
    die "build failed (full log: .data/stack-build.log)"
  fi
  for s in "${SERVICES[@]}"; do [ -x "$(bin_dir)/geochat-$s" ] || die "build: geochat-$s is missing"; done
}

pick_ports() {
  [ -n "$(port_of postgres)" ] || save_port postgres "$(free_port)"
  [ -n "$(port_of kafka)" ] || save_port kafka "$(free_port)"
  local s i
  for s in "${SERVICES[@]}"; do
    for i in $(seq 1 "${COUNT[$s]}"); do
      if [ -z "$(port_of "$s-$i")" ]; then
        if [ "$s-$i" = gateway-1 ] && ! port_open 8080; then save_port "$s-$i" 8080; else save_port "$s-$i" "$(free_port)"; fi
      fi
      # A gateway's operators' listener (admin API, /status, /metrics) has a port of its own.
      if [ "$s" = gateway ] && [ -z "$(port_of "$s-$i-admin")" ]; then save_port "$s-$i-admin" "$(free_port)"; fi
    done
  done
}

# The stack's keys: 32 random bytes each, made once per state directory, readable by its owner only.
stack_key() { # NAME
  local file="$STATE/$1.key"
  if [ ! -s "$file" ]; then (umask 077; openssl rand -base64 32 > "$file"); fi
  echo "$file"
}

write_instance_env() { # NAME INSTANCE
  local file="$STATE/instances/$2.env"
  {
    echo "GEOCHAT_INSTANCE_ID=$2"
    echo "GEOCHAT_KAFKA_BROKERS=$(kafka_brokers)"
    # tansu: the dev broker's workarounds (docs/architecture.md, "Kafka settings"); kafka: a cluster's.
    echo "GEOCHAT_KAFKA_PROFILE=$KAFKA_PROFILE"
    echo "GEOCHAT_PARTITIONS=$PARTITIONS"
    if [ "$KAFKA_PROFILE" = kafka ] && [ -z "$KAFKA_EXTERNAL" ] && [ "$KAFKA_WAITS" = dev ]; then
      # The production settings on the local Tansu, with the dev broker's fetch waits: Tansu answers
      # a fetch up to half its wait late, so the kafka profile's long polls would make every hop
      # seconds (`--kafka-waits production` keeps them: deploy/idle.sh's second column).
      echo "GEOCHAT_KAFKA_FETCH_WAIT_MAX_MS=10"
      echo "GEOCHAT_KAFKA_BACKGROUND_FETCH_WAIT_MAX_MS=100"
      echo "GEOCHAT_KAFKA_GROUPLESS_FETCH_WAIT_MAX_MS=10"
    fi
    echo "GEOCHAT_PG_HOST=127.0.0.1"
    echo "GEOCHAT_PG_PORT=$(port_of postgres)"
    echo "GEOCHAT_PG_USER=postgres"
    echo "GEOCHAT_PG_DATABASE=geochat"
    [ -s "$(pg_password_file "$STATE/pg")" ] && echo "GEOCHAT_PG_PASSWORD_FILE=$(pg_password_file "$STATE/pg")"
    # TLS as in production: the local PostgreSQL's certificate is checked against the CA pg_tls made.
    echo "GEOCHAT_PG_SSLMODE=verify-full"
    echo "GEOCHAT_PG_SSLROOTCERT=$(pg_ca_file "$STATE/pg")"
    echo "GEOCHAT_HTTP_HOST=127.0.0.1"
    echo "GEOCHAT_HTTP_PORT=$(port_of "$2")"
    if [ "$1" = gateway ]; then
      echo "GEOCHAT_ADMIN_HOST=127.0.0.1"; echo "GEOCHAT_ADMIN_PORT=$(port_of "$2-admin")"
      # The web map's files (web/), and Debian's Leaflet beside them (libjs-leaflet).
      echo "GEOCHAT_WEB_DIR=$ROOT/web"
      # The region index kept between runs: a restart reads it and asks only for what changed.
      echo "GEOCHAT_ROOM_SNAPSHOT_FILE=$STATE/snapshots/$2.rooms"
    fi
    # Admin passwords cross Kafka sealed with one key, operators' removals with another
    # (docs/security.md, "Secrets and the bus").
    case "$1" in gateway|session) echo "GEOCHAT_LOGIN_SEAL_KEY_FILE=$(stack_key login-seal)" ;; esac
    case "$1" in gateway|rooms|messaging|expiry) echo "GEOCHAT_OPERATOR_KEY_FILE=$(stack_key operator)" ;; esac
    [ -f "$STATE/extra.env" ] && grep -E '^[A-Z_][A-Z0-9_]*=' "$STATE/extra.env" || true
    # Quoted for the shell that reads the file (service_start): a value may hold spaces or quotes.
    for kv in "${EXTRA_ENV[@]+"${EXTRA_ENV[@]}"}"; do printf '%s=%q\n' "${kv%%=*}" "${kv#*=}"; done
    echo "BINARY=$(bin_dir)/geochat-$1"
  } > "$file"
}

start_instance() { # INSTANCE
  local file="$STATE/instances/$1.env" binary
  [ -f "$file" ] || die "no instance $1 in $STATE"
  binary=$(grep '^BINARY=' "$file" | cut -d= -f2-)
  if [ -f "$STATE/pids/$1.pid" ] && kill -0 "$(cat "$STATE/pids/$1.pid")" 2>/dev/null; then
    log "$1: already running"
    return
  fi
  service_start "$1" "$binary" "$file" "$STATE/logs/$1.log" "$STATE/pids/$1.pid"
}

instances() { ls "$STATE/instances" 2>/dev/null | sed 's/\.env$//'; }

admin_urls() { # the gateways' operators' listeners, in the order of urls_of gateway
  local i out=""
  for i in $(instances | grep "^gateway-" | sort -t- -k2 -n); do out+="http://127.0.0.1:$(port_of "$i-admin") "; done
  echo "${out% }"
}

urls_of() { # SERVICE
  local i out=""
  for i in $(instances | grep "^$1-" | sort -t- -k2 -n); do out+="http://127.0.0.1:$(port_of "$i") "; done
  echo "${out% }"
}

write_stack_env() {
  cat > "$STATE/stack.env" <<EOT
ROOT=$ROOT
STATE_DIR=$STATE
GATEWAY_URLS="$(urls_of gateway)"
GATEWAY_ADMIN_URLS="$(admin_urls)"
SESSION_URLS="$(urls_of session)"
ROOMS_URLS="$(urls_of rooms)"
MESSAGING_URLS="$(urls_of messaging)"
EXPIRY_URLS="$(urls_of expiry)"
PG_HOST=127.0.0.1
PG_PORT=$(port_of postgres)
PG_USER=postgres
PG_DATABASE=geochat
PG_PASSWORD_FILE=$(pg_password_file "$STATE/pg")
KAFKA_BROKERS=$(kafka_brokers)
KAFKA_PROFILE=$KAFKA_PROFILE
PARTITIONS=$PARTITIONS
BIN_DIR=$(bin_dir)
EOT
}

up() {
  bash "$ROOT/deploy/install.sh"
  [ "$BUILD" = 1 ] && build
  pick_ports
  # Forget instances of an earlier, differently sized run that are not running.
  local f
  for f in "$STATE"/instances/*.env; do
    [ -e "$f" ] || continue
    local n; n=$(basename "$f" .env)
    [ -f "$STATE/pids/$n.pid" ] && kill -0 "$(cat "$STATE/pids/$n.pid")" 2>/dev/null || rm -f "$f"
  done
  pg_start "$STATE/pg" "$(port_of postgres)"
  if [ -z "$KAFKA_EXTERNAL" ] && ! port_open "$(port_of kafka)"; then kafka_start "$(port_of kafka)" "$STATE/logs/kafka.log" "$STATE/pids/kafka.pid"; fi
  local s i
  for s in "${SERVICES[@]}"; do
    for i in $(seq 1 "${COUNT[$s]}"); do
      write_instance_env "$s" "$s-$i"
      start_instance "$s-$i"
    done
  done
  write_stack_env
  log "waiting for every instance to be ready"
  for i in $(instances); do
    if ! wait_http "http://127.0.0.1:$(port_of "$i")/ready" 120; then
      log "$i did not become ready; the end of its log:"
      tail -n 40 "$STATE/logs/$i.log" >&2 || true
      exit 1
    fi
  done
  local gw; gw=$(urls_of gateway | cut -d' ' -f1)
  echo
  echo "GeoChat is up. Gateways: $(urls_of gateway)"
  echo "Operators' listeners (admin API, /status, /metrics; loopback only): $(admin_urls)"
  echo "Web map: $gw/   JSON API: $gw/api/v1/openapi.json"
  echo "Admin page: $(admin_urls | cut -d' ' -f1)/admin/ui/   (an admin account first: docs/operations.md, \"The first admin\")"
  echo "Try: curl '$gw/chat.php?v=5&cmd=start&nick=Lydia'"
  echo "State, logs and ports: $STATE   (stop: deploy/stack.sh down${STATE:+ --state-dir $STATE})"
}

down() {
  local i
  for i in $(instances | grep '^gateway-'); do stop_pid "$STATE/pids/$i.pid" 10; done
  for i in $(instances | grep -v '^gateway-'); do stop_pid "$STATE/pids/$i.pid" 10; done
  kafka_stop "$STATE/pids/kafka.pid"
  pg_stop "$STATE/pg"
  log "stack in $STATE stopped"
}

status() {
  local i pid
  for i in $(instances); do
    pid=$(cat "$STATE/pids/$i.pid" 2>/dev/null || echo -)
    printf '%-14s pid %-8s port %-6s ready %s\n' "$i" "$pid" "$(port_of "$i")" \
      "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$(port_of "$i")/ready")"
  done
  if [ -n "$KAFKA_EXTERNAL" ]; then printf '%-14s %s (not started by this script)\n' kafka "$KAFKA_EXTERNAL"
  else printf '%-14s port %s %s\n' kafka "$(port_of kafka)" "$(port_open "$(port_of kafka)" && echo up || echo down)"; fi
  printf '%-14s port %s %s\n' postgres "$(port_of postgres)" "$(port_open "$(port_of postgres)" && echo up || echo down)"
}

case "$command" in
  up) up ;;
  down) down ;;
  status) status ;;
  destroy) down; rm -rf "$STATE"; log "removed $STATE" ;;
  stop-kafka) kafka_stop "$STATE/pids/kafka.pid" ;;
  start-kafka) [ -z "$KAFKA_EXTERNAL" ] || die "this stack uses an existing Kafka ($KAFKA_EXTERNAL)"; kafka_start "$(port_of kafka)" "$STATE/logs/kafka.log" "$STATE/pids/kafka.pid" ;;
  stop-postgres) pg_stop "$STATE/pg" ;;
  start-postgres) pg_start "$STATE/pg" "$(port_of postgres)" ;;
  stop) [ -n "$target" ] || die "stop which instance?"; stop_pid "$STATE/pids/$target.pid" 10 ;;
  kill) [ -n "$target" ] || die "kill which instance?"; kill -KILL "$(cat "$STATE/pids/$target.pid")" 2>/dev/null || true; rm -f "$STATE/pids/$target.pid" ;;
  start) [ -n "$target" ] || die "start which instance?"; start_instance "$target" ;;
  *) sed -n '2,13p' "$0"; exit 2 ;;
esac
