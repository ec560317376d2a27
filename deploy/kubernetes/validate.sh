#!/usr/bin/env bash
# Validates the Kubernetes manifests offline, in seconds:
#   - built-in kinds with kubernetes-validate (its bundled, strict schemas of
#     Kubernetes 1.30: unknown fields fail);
#   - the custom resources (Strimzi KafkaTopic and KafkaUser, CloudNativePG
#     Cluster) and kustomization.yaml with check-jsonschema against schemas/*.json;
#   - check_manifests.py: the files agree with each other and with the code (the
#     topics are Topics.shared, partitions and replication as the ConfigMap says,
#     every ConfigMap, Secret key and CA file a pod names exists, probes on each
#     service's HTTP port, instance ids from the pod name, …), and the deployment
#     is locked down: per-address limits on and trusted proxies set on the public
#     gateways, one Kafka account per workload with exactly its code's rights (the
#     internet-facing gateway writes no admin, expiry, settings, bans or event
#     topic), a default deny and a NetworkPolicy per workload (operators' and
#     metrics ports only from the monitoring namespace, egress only to Kafka,
#     PostgreSQL and DNS), PostgreSQL over TLS only, gateway memory limits that
#     hold the documented formula (README.md, "Validate");
#   - check_manifests.py --self-test: each of those checks catches the
#     regressions it exists for (the manifests broken in memory, ~31 ways).
# Neither tool fetches anything: the schemas are bundled or local. The first run
# installs the two tools from PyPI into the project's .venv (tools/requirements/validate.txt,
# lib.sh's venv_install; again only when that file changes).
#
#   deploy/kubernetes/validate.sh [MANIFEST_DIR]     (default: this folder; run by deploy/test.sh)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DIR=$(cd "${1:-$HERE}" && pwd)
KUBERNETES_VERSION=1.30.0
VENV="$ROOT/.venv"

# shellcheck source=../lib.sh
. "$ROOT/deploy/lib.sh"
venv_install validate

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

"$VENV/bin/python" "$HERE/check_manifests.py" "$DIR" "$ROOT" "$work" || failed=1
"$VENV/bin/python" "$HERE/check_manifests.py" --self-test "$DIR" "$ROOT" || failed=1

# Built-in kinds. A kind or apiVersion it has no schema for is only a warning
# there (exit 0); here it is a failure: a misspelt kind would pass otherwise.
if [ -s "$work/builtin.txt" ]; then
  mapfile -t files < "$work/builtin.txt"
  if ! "$VENV/bin/kubernetes-validate" --strict --quiet -k "$KUBERNETES_VERSION" "${files[@]}" > "$work/kv.out" 2>&1; then
    failed=1
  fi
  if grep -qE '^(WARN|ERROR|FATAL)' "$work/kv.out"; then failed=1; fi
  sed -e "s#$work/##" "$work/kv.out"
  echo "validate: kubernetes-validate --strict -k $KUBERNETES_VERSION: ${#files[@]} built-in objects"
fi

# Custom resources, one schema each.
for list in "$work"/schema-*.txt; do
  [ -e "$list" ] || continue
  schema=$(basename "$list" .txt); schema=${schema#schema-}
  mapfile -t files < "$list"
  if ! out=$("$VENV/bin/check-jsonschema" --schemafile "$DIR/schemas/$schema.json" "${files[@]}" 2>&1); then
    failed=1
  fi
  echo "${out//$work\//}" | sed -e "s/^ok -- validation done/validate: check-jsonschema schemas\/$schema.json: ${#files[@]} object(s) ok/"
done

if [ "$failed" = 0 ]; then echo "validate: ok ($DIR)"; else echo "validate: FAILED ($DIR)"; fi
exit "$failed"
