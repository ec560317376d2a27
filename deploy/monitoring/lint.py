"""What promtool does not check in deploy/monitoring/ (run by check.sh):

    python3 lint.py REPO_ROOT WORK_DIR

- every alert of geochat-alerts.yaml has a unit test in geochat-alerts.test.yaml
  that expects it to fire;
- every geochat_* metric named by the rules or the dashboard is one GeoChat
  exposes (Shared/GeoChatMetrics/MetricNames.swift), and the labels matched or
  aggregated by are ones it has (docs/operations.md, "Metrics", its table; plus
  job, instance, and le on histograms); other metrics are the exporters' below;
- geochat-dashboard.json is a Grafana dashboard model: unique panel ids, each
  panel with a datasource and queries, and each query parses (written to
  WORK_DIR as recording rules for `promtool check rules`).
"""

import json
import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
# Metrics of the exporters the dependency alerts read: Strimzi's Kafka JMX
# exporter, CloudNativePG, kube-state-metrics, the kubelet.
EXTERNAL = {
    "kafka_server_replicamanager_underminisrpartitioncount",
    "kafka_server_replicamanager_underreplicatedpartitions",
    "kafka_controller_kafkacontroller_offlinepartitionscount",
    "kafka_controller_kafkacontroller_activecontrollercount",
    "cnpg_pg_replication_lag",
    "cnpg_backends_total",
    "kube_pod_status_ready",
    "kubelet_volume_stats_available_bytes",
    "kubelet_volume_stats_capacity_bytes",
}
ALWAYS = {"job", "instance"}
METRIC = re.compile(r"\b((?:geochat|kafka|cnpg|kube|kubelet)_[a-z0-9_]+)\b")
SELECTOR = re.compile(r"\b(geochat_[a-z0-9_]+)\s*\{([^}]*)\}")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
GROUPING = re.compile(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)")

problems = []


def known_metrics(root):
    """name -> set of labels, from MetricNames.swift and the docs' metrics table."""
    with open(os.path.join(root, "Shared/GeoChatMetrics/MetricNames.swift")) as f:
        names = set(re.findall(r'"(geochat_[a-z0-9_]+)"', f.read()))
    labels = {}
    with open(os.path.join(root, "docs/operations.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.split("|")]
            if len(cells) < 5 or not cells[1].startswith("`geochat_"):
                continue
            first = re.match(r"`(geochat_[a-z0-9_]+)`", cells[1]).group(1)
            family = [first] + [first.rsplit("_", 1)[0] + s for s in re.findall(r"/ `(_[a-z]+)`", cells[1])]
            for name in family:
                labels[name] = set(re.findall(r"`([a-z_]+)`", cells[3])) if cells[2] else set()
            if cells[2] == "histogram":
                labels[first] |= {"le"}
    for name in sorted(names - set(labels)):
        problems.append(f"docs/operations.md: the metrics table has no row for {name}")
    return {n: labels.get(n, set()) for n in names}


def base_name(name, known):
    if name in known or name in EXTERNAL:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name[: -len(suffix)] in known:
            return name[: -len(suffix)]
    return None


def lint_expr(where, expr, known):
    names = set()
    for name in METRIC.findall(expr):
        base = base_name(name, known)
        if base is None:
            problems.append(f"{where}: {name} is neither a GeoChat metric (MetricNames.swift) nor a listed exporter's")
        else:
            names.add(base)
    for name, matchers in SELECTOR.findall(expr):
        base = base_name(name, known)
        if base in known:
            for label in MATCHER.findall(matchers):
                if label not in known[base] | ALWAYS:
                    problems.append(f"{where}: {name} has no label {label!r}")
    geochat = [n for n in names if n in known]
    if geochat and not any(n in EXTERNAL for n in names):
        have = set().union(*(known[n] for n in geochat)) | ALWAYS
        for group in GROUPING.findall(expr):
            for label in (l.strip() for l in group.split(",")):
                if label and label not in have:
                    problems.append(f"{where}: groups by {label!r}, which none of {sorted(geochat)} has")


def main():
    root, work = sys.argv[1:3]
    known = known_metrics(root)

    with open(os.path.join(HERE, "geochat-alerts.yaml")) as f:
        groups = yaml.safe_load(f)["groups"]
    alerts = [r for g in groups for r in g["rules"] if "alert" in r]
    for r in alerts:
        lint_expr(f"geochat-alerts.yaml {r['alert']}", str(r["expr"]), known)
    with open(os.path.join(HERE, "geochat-alerts.test.yaml")) as f:
        tests = yaml.safe_load(f)["tests"]
    fired = {t["alertname"] for test in tests for t in test.get("alert_rule_test", []) if t.get("exp_alerts")}
    for r in alerts:
        if r["alert"] not in fired:
            problems.append(f"geochat-alerts.test.yaml: no test expects {r['alert']} to fire")

    with open(os.path.join(HERE, "geochat-dashboard.json")) as f:
        dash = json.load(f)
    for key in ("title", "uid", "panels", "schemaVersion", "templating"):
        if key not in dash:
            problems.append(f"geochat-dashboard.json: no {key}")
    ids, rules = set(), []
    queries = 0
    for p in dash.get("panels", []):
        where = f"geochat-dashboard.json panel {p.get('id')} {p.get('title')!r}"
        if p.get("id") in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(p.get("id"))
        if "gridPos" not in p:
            problems.append(f"{where}: no gridPos")
        if p.get("type") == "row":
            continue
        if not p.get("datasource") or not p.get("targets"):
            problems.append(f"{where}: no datasource or no queries")
        for t in p.get("targets", []):
            expr = t.get("expr", "")
            if not expr or not t.get("refId"):
                problems.append(f"{where}: a query without expr or refId")
                continue
            queries += 1
            lint_expr(where, expr, known)
            concrete = expr.replace("$__rate_interval", "5m").replace("$job", ".*")
            rules.append({"record": f"dashboard:panel{p['id']}:{t['refId']}", "expr": concrete})
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("definition") or ""
        for name in METRIC.findall(q):
            if base_name(name, known) is None:
                problems.append(f"geochat-dashboard.json variable {v.get('name')}: unknown metric {name}")
    path = os.path.join(work, "dashboard-queries.yaml")
    with open(path, "w") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
    out = subprocess.run(["promtool", "check", "rules", path], capture_output=True, text=True)
    if out.returncode != 0:
        problems.append("geochat-dashboard.json: a query does not parse:\n" + (out.stdout + out.stderr).replace(work + "/", ""))

    for p in problems:
        print(f"monitoring: {p}")
    print(f"monitoring: lint: {len(alerts)} alerts (each tested), {queries} dashboard queries in "
          f"{len(ids)} panels, metrics known: {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
