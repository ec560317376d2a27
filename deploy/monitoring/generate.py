"""Writes the two Kubernetes manifests made from deploy/monitoring/, so that the
alerting rules and the dashboard each have one source:

  deploy/kubernetes/prometheus-rules.yaml  the PrometheusRule (Prometheus Operator,
      monitoring.coreos.com/v1): the `groups:` text of geochat-alerts.yaml under `spec:`;
  deploy/kubernetes/grafana-dashboard.yaml a ConfigMap holding geochat-dashboard.json,
      labelled grafana_dashboard: "1" for Grafana's dashboard sidecar.

    python3 deploy/monitoring/generate.py           (rewrite both)
    python3 deploy/monitoring/generate.py --check   (exit 1 if either is stale; check.sh)
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KUBERNETES = os.path.join(HERE, "..", "kubernetes")

RULES_HEADER = """\
# GENERATED from deploy/monitoring/geochat-alerts.yaml by deploy/monitoring/generate.py:
# edit that file and run the script (deploy/monitoring/check.sh fails when this one
# is stale; validate.sh checks that the rules are the same). The alerting rules for
# the Prometheus Operator; docs/operations.md, "What to alert on", explains each.
# If your Prometheus selects rules by label (ruleSelector; kube-prometheus-stack:
# release: <its release name>), add that label with a kustomize patch.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: geochat
  namespace: geochat
  labels:
    app.kubernetes.io/name: geochat
    app.kubernetes.io/part-of: geochat
spec:
"""

DASHBOARD_HEADER = """\
# GENERATED from deploy/monitoring/geochat-dashboard.json by
# deploy/monitoring/generate.py: edit that file and run the script. The GeoChat
# dashboard for Grafana's dashboard sidecar (kube-prometheus-stack: it loads
# ConfigMaps labelled grafana_dashboard: "1"; let it search namespace geochat, or
# all). Without the sidecar, import the JSON file in Grafana (docs/operations.md,
# "What to alert on").
apiVersion: v1
kind: ConfigMap
metadata:
  name: geochat-dashboard
  namespace: geochat
  labels:
    app.kubernetes.io/part-of: geochat
    grafana_dashboard: "1"
data:
  geochat.json: |
"""


def indent(lines, by):
    return "\n".join(by + line if line.strip() else "" for line in lines) + "\n"


def rules():
    with open(os.path.join(HERE, "geochat-alerts.yaml")) as f:
        lines = f.read().splitlines()
    return RULES_HEADER + indent(lines[lines.index("groups:"):], "  ")


def dashboard():
    with open(os.path.join(HERE, "geochat-dashboard.json")) as f:
        return DASHBOARD_HEADER + indent(f.read().splitlines(), "    ")


TARGETS = {"prometheus-rules.yaml": rules, "grafana-dashboard.yaml": dashboard}


def main():
    check = sys.argv[1:] == ["--check"]
    stale = []
    for name, make in TARGETS.items():
        path = os.path.join(KUBERNETES, name)
        text = make()
        if check:
            try:
                with open(path) as f:
                    if f.read() == text:
                        continue
            except OSError:
                pass
            stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
            print(f"monitoring: wrote deploy/kubernetes/{name}")
    if stale:
        print(f"monitoring: deploy/kubernetes/{', '.join(stale)} not generated from deploy/monitoring/: "
              "run python3 deploy/monitoring/generate.py")
        sys.exit(1)
    if check:
        print("monitoring: deploy/kubernetes/prometheus-rules.yaml and grafana-dashboard.yaml are up to date")


if __name__ == "__main__":
    main()
