#!/usr/bin/env bash
# Checks the monitoring that ships, offline, in seconds (run by deploy/test.sh):
#   - promtool check rules geochat-alerts.yaml (syntax, PromQL, templates);
#   - promtool test rules geochat-alerts.test.yaml (each alert fires on its
#     regression, with the labels and text an operator reads);
#   - lint.py: every alert has a unit test that fires it; every geochat_* metric
#     the rules and the dashboard name is one GeoChat exposes
#     (Shared/GeoChatMetrics/MetricNames.swift), with labels it has; every other
#     metric is one of the exporters' listed there; the dashboard is a Grafana
#     JSON model (unique panel ids, a datasource and a query per panel) whose
#     queries parse (promtool check rules on them, as recording rules);
#   - generate.py --check: deploy/kubernetes/prometheus-rules.yaml and
#     grafana-dashboard.yaml are generated from this folder's files.
# promtool comes from Debian's `prometheus` package, installed on the first run
# if missing (as root; otherwise install it yourself).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

if ! command -v promtool >/dev/null 2>&1; then
  echo "monitoring: installing promtool (Debian package prometheus)"
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1; }
  fi
  command -v promtool >/dev/null 2>&1 || { echo "monitoring: FAILED: no promtool (apt-get install prometheus)"; exit 1; }
fi

# PyYAML: the system's, or else the project's .venv with tools/requirements/validate.txt
# (lib.sh's venv_install; validate.sh installs the same).
PY=python3
if ! python3 -c 'import yaml' 2>/dev/null; then
  # shellcheck source=../lib.sh
  . "$ROOT/deploy/lib.sh"
  venv_install validate
  PY="$ROOT/.venv/bin/python"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
cd "$HERE"
promtool check rules geochat-alerts.yaml > "$work/check.out" 2>&1 || { cat "$work/check.out"; failed=1; }
echo "monitoring: promtool check rules: $(grep -o 'SUCCESS.*\|FAILED.*' "$work/check.out" | head -n 1)"
promtool test rules geochat-alerts.test.yaml > "$work/test.out" 2>&1 || { cat "$work/test.out"; failed=1; }
echo "monitoring: promtool test rules: $(grep -o 'SUCCESS\|FAILED' "$work/test.out" | head -n 1)"
"$PY" "$HERE/lint.py" "$ROOT" "$work" || failed=1
python3 "$HERE/generate.py" --check || failed=1

if [ "$failed" = 0 ]; then echo "monitoring: ok"; else echo "monitoring: FAILED"; fi
exit "$failed"
