#!/usr/bin/env bash
# One broker hop's latency by fetch wait, on a private Tansu (python -m geochat_bench.hop_latency).
# Prints a table; about a minute.
#
#   deploy/bench-hop.sh [--waits 10,20,40,100]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
bash deploy/install.sh >/dev/null
STATE="$ROOT/.data/bench-hop"
mkdir -p "$STATE"
port=$(free_port)
trap 'kafka_stop "$STATE/tansu.pid"' EXIT
kafka_start "$port" "$STATE/tansu.log" "$STATE/tansu.pid"
.venv/bin/python -m geochat_bench.hop_latency --brokers "127.0.0.1:$port" "$@"
