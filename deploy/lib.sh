# Helpers shared by deploy/stack.sh and deploy/test.sh. Sourced, not run.
# Everything runs on loopback, under the project folder, as the current user,
# except PostgreSQL, which refuses to run as root and runs as `postgres`.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_BIN=/usr/lib/postgresql/15/bin

# stack.sh options that turn the gateways' rate limits off, for stacks that
# carry load tests (the limits themselves are tested on a gateway with defaults).
NO_RATE_LIMITS=(--env GEOCHAT_RATE_POST_PER_S=0 --env GEOCHAT_RATE_POST_ADDRESS_PER_S=0
  --env GEOCHAT_RATE_POST_MIN_INTERVAL_MS=0 --env GEOCHAT_RATE_CREATE_PER_S=0
  --env GEOCHAT_RATE_CREATE_ADDRESS_PER_S=0 --env GEOCHAT_RATE_START_ADDRESS_PER_S=0
  --env GEOCHAT_RATE_ROOMS_PER_HOUR=0 --env GEOCHAT_RATE_CHANGE_PER_S=0
  --env GEOCHAT_RATE_HISTORY_ADDRESS_PER_S=0 --env GEOCHAT_RATE_WIDE_REGION_ADDRESS_PER_S=0
  --env GEOCHAT_RATE_CHANGE_ADDRESS_PER_S=0 --env GEOCHAT_RATE_PARTICIPANTS_ADDRESS_PER_S=0
  --env GEOCHAT_RATE_SESSION_LOOKUP_ADDRESS_PER_S=0 --env GEOCHAT_PUSH_MAX_PER_ADDRESS=0)

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The project's Python environment, .venv (made here when missing). Each NAME is
# tools/requirements/NAME.txt, installed with `pip install -r` (exact pins of the
# whole closure), or `tools`: tools/ installed editable (geochat_support,
# geochat_bench; `pip install -e tools`). Each is installed again only when its file
# (the requirements file, tools/pyproject.toml) changes: a stamp in .venv holds the
# hash of what was installed last. Install a requirements file before `tools`.
venv_install() { # NAME…
  local venv="$ROOT/.venv" name file stamp hash
  if [ ! -x "$venv/bin/python" ]; then
    log "venv: python3 -m venv .venv"
    python3 -m venv "$venv" || die "venv: python3 -m venv .venv failed"
  fi
  for name in "$@"; do
    if [ "$name" = tools ]; then file="$ROOT/tools/pyproject.toml"; else file="$ROOT/tools/requirements/$name.txt"; fi
    [ -f "$file" ] || die "venv: no ${file#"$ROOT/"}"
    stamp="$venv/.geochat-installed/$name"
    hash=$(sha256sum "$file" | cut -d' ' -f1)
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && continue
    if [ "$name" = tools ]; then
      log "venv: pip install -e tools"
      "$venv/bin/pip" install -q --disable-pip-version-check -e "$ROOT/tools" || die "venv: pip install -e tools failed"
    else
      log "venv: pip install -r ${file#"$ROOT/"}"
      "$venv/bin/pip" install -q --disable-pip-version-check -r "$file" || die "venv: pip install -r ${file#"$ROOT/"} failed"
    fi
    mkdir -p "$(dirname "$stamp")"
    echo "$hash" > "$stamp"
  done
}

# The benchmarks' reference server, a bare Hummingbird hello world: a Swift package
# of its own, built (release) only by the benchmarks that run it (bench.sh, bench-push.sh),
# never by the project's `swift build`.
HELLO_PACKAGE="$ROOT/Tests/Benchmarks/HelloWorld"

hello_build() { # LOGFILE
  log "build: swift build -c release --package-path Tests/Benchmarks/HelloWorld"
  if ! swift build -c release --package-path "$HELLO_PACKAGE" > "$1" 2>&1; then
    grep -E "error" "$1" | head -n 40
    die "hello world build failed (full log: ${1#"$ROOT/"})"
  fi
}

# Starts the built hello world on PORT in the background (from its package's .build);
# HELLO_PID is its process id. Returns once it answers.
hello_start() { # PORT LOGFILE
  local bin
  bin=$(swift build -c release --package-path "$HELLO_PACKAGE" --show-bin-path)
  [ -x "$bin/HelloWorld" ] || die "hello world not built: $bin/HelloWorld (hello_build)"
  "$bin/HelloWorld" "$1" > "$2" 2>&1 &
  HELLO_PID=$!
  wait_http "http://127.0.0.1:$1/hello" 30 || die "hello world did not start (see ${2#"$ROOT/"})"
}

# A free TCP port on 127.0.0.1, chosen by the kernel.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # PORT SECONDS
  local deadline=$((SECONDS + $2))
  until port_open "$1"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

wait_http() { # URL SECONDS
  local deadline=$((SECONDS + $2))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1")" = 200 ]; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
}

as_postgres() { # run a command as the postgres user when we are root
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

# Lets the postgres user reach DIR (its parents may be root's, mode 700).
open_path_for_postgres() {
  local dir=$1
  while [ "$dir" != / ]; do
    chmod o+x "$dir" 2>/dev/null || true  # traverse only; nothing becomes readable
    dir=$(dirname "$dir")
  done
}

# The CA of the local PostgreSQL's TLS certificate, made by pg_tls; services
# check the server against it (GEOCHAT_PG_SSLMODE=verify-full).
pg_ca_file() { echo "$1.tls/ca.crt"; } # DATA_DIR

# A CA of our own and a server certificate it signs for 127.0.0.1 and
# localhost, made once per data directory (as an operator's PKI would).
pg_tls() { # DATA_DIR
  local data=$1 tls="$1.tls"
  [ -f "$tls/ca.crt" ] && [ -f "$data/server.crt" ] && return 0
  mkdir -p "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=GeoChat test CA" \
    -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 3650 \
    -extfile "$tls/server.ext" -out "$tls/server.crt" 2>/dev/null
  cp "$tls/server.crt" "$tls/server.key" "$data/"
  chmod 600 "$data/server.key"
  [ "$(id -u)" = 0 ] && chown postgres "$data/server.crt" "$data/server.key"
  chmod 644 "$tls/ca.crt"
  open_path_for_postgres "$tls"
}

# The local PostgreSQL's superuser password: made with its data folder, one
# line, readable by its owner only. Services read it from the file
# (GEOCHAT_PG_PASSWORD_FILE), psql through PGPASSWORD; a data folder made
# before passwords (trust) has none and needs none.
pg_password_file() { echo "$1.password"; }

# psql against the local PostgreSQL of DATA_DIR on PORT, with its password.
pg_psql() { # DATA_DIR PORT ARGS...
  local data=$1 port=$2; shift 2
  local file; file=$(pg_password_file "$data")
  if [ -s "$file" ]; then PGPASSWORD=$(cat "$file") psql -h 127.0.0.1 -p "$port" -U postgres "$@"
  else psql -h 127.0.0.1 -p "$port" -U postgres "$@"; fi
}

pg_start() { # DATA_DIR PORT
  local data=$1 port=$2
  mkdir -p "$data"
  open_path_for_postgres "$data"
  [ "$(id -u)" = 0 ] && chown postgres "$data" && chmod 700 "$data"
  if [ ! -f "$data/PG_VERSION" ]; then
    log "postgres: initdb $data (password authentication over TCP, peer on its own socket)"
    local password; password=$(pg_password_file "$data")
    (umask 077; openssl rand -hex 24 > "$password")
    # initdb reads the password as the postgres user (and wants an empty data folder): a copy
    # in a private folder of its own, gone after.
    local private; private=$(mktemp -d)
    (umask 077; cp "$password" "$private/password")
    [ "$(id -u)" = 0 ] && chown -R postgres "$private"
    as_postgres "$PG_BIN/initdb -D '$data' -A scram-sha-256 --auth-local=peer -U postgres --pwfile='$private/password' -E UTF8 --locale=C.UTF-8" >/dev/null
    rm -rf "$private"
  fi
  pg_tls "$data"
  if as_postgres "$PG_BIN/pg_ctl -D '$data' status" >/dev/null 2>&1; then
    log "postgres: already running on $port"
  else
    log "postgres: start on 127.0.0.1:$port (TLS on, CA $(pg_ca_file "$data"))"
    as_postgres "$PG_BIN/pg_ctl -D '$data' -l '$data/postgres.log' -w -t 60 -o \"-p $port -k '$data' -c listen_addresses=127.0.0.1 -c max_connections=300 -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key\" start" >/dev/null
  fi
  if ! pg_psql "$data" "$port" -Atc "SELECT 1 FROM pg_database WHERE datname = 'geochat'" | grep -q 1; then
    pg_psql "$data" "$port" -qc "CREATE DATABASE geochat" >/dev/null
  fi
}

pg_stop() { # DATA_DIR
  [ -f "$1/PG_VERSION" ] || return 0
  as_postgres "$PG_BIN/pg_ctl -D '$1' -m fast -w stop" >/dev/null 2>&1 || true
}

kafka_start() { # PORT LOGFILE PIDFILE
  local port=$1 logfile=$2 pidfile=$3
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    # A stopping Tansu holds its port for 6-7 s: wait for it to go.
    local old; old=$(cat "$pidfile")
    for _ in $(seq 1 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$old" 2>/dev/null && die "kafka: old broker $old still running"
  fi
  log "kafka: start Tansu on 127.0.0.1:$port"
  setsid "$ROOT/.runtime/bin/tansu" broker --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" >>"$logfile" 2>&1 < /dev/null &
  echo $! > "$pidfile"
  wait_port "$port" 20 || die "kafka: broker did not open port $port (see $logfile)"
}

kafka_stop() { # PIDFILE
  stop_pid "$1" 15
}

stop_pid() { # PIDFILE SECONDS: SIGTERM, wait, then SIGKILL
  local pidfile=$1 wait=${2:-10} pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((wait * 5))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

# Starts one instance in the background with the environment in ENVFILE.
service_start() { # NAME BINARY ENVFILE LOGFILE PIDFILE
  local name=$1 binary=$2 envfile=$3 logfile=$4 pidfile=$5
  (
    set -a
    # shellcheck disable=SC1090
    . "$envfile"
    set +a
    export LD_LIBRARY_PATH="$ROOT/.runtime/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    exec setsid "$binary" >>"$logfile" 2>&1 < /dev/null
  ) &
  echo $! > "$pidfile"
}

# A benchmark script's arguments (bench-push, bench-writes, bench-scale, bench-request-cpu):
# --keep (leave its stack running) sets KEEP=1, the rest go to its Python module in
# BENCH_ARGS; ORIGINAL_ARGS is the command line its doc block states.
bench_arguments() { # --keep and --env KEY=VALUE (for the stack) taken out; the rest for the Python
  ORIGINAL_ARGS="$*"
  KEEP=0
  BENCH_ARGS=()
  STACK_ENV=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --keep) KEEP=1; shift ;;
      --env) STACK_ENV+=(--env "$2"); shift 2 ;;
      *) BENCH_ARGS+=("$1"); shift ;;
    esac
  done
}
