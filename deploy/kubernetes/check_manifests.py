"""Splits GeoChat's Kubernetes manifests for the validators and checks what no
schema can: that the files agree with each other and with the code, and that the
deployment is locked down as shipped.

    python check_manifests.py MANIFEST_DIR REPO_ROOT WORK_DIR
    python check_manifests.py --self-test MANIFEST_DIR REPO_ROOT

Writes one JSON file per document under WORK_DIR and the lists validate.sh
hands to the validators: WORK_DIR/builtin.txt (for kubernetes-validate) and
WORK_DIR/schema-<name>.txt (for check-jsonschema with schemas/<name>.json).
Prints every problem found, each tagged with the check that found it
([consistency], [rate-limits], [admin-api], [trusted-proxies], [kafka-accounts], [kafka-acls],
[network-default-deny], [network-ingress], [network-egress], [postgres-tls],
[gateway-memory], [monitoring]; docs/security.md lists the attack each one covers), and exits
1 if there was one.

--self-test breaks the manifests in memory in the ways each lock-down check
exists to catch (a per-address limit at 0, the gateway writing the admin topic,
the metrics port open to all, sslmode disable, a memory limit too small, …) and
fails unless every one of them is caught by the check named for it. Both are run
by validate.sh.
"""

import copy
import ipaddress
import json
import os
import re
import sys

import yaml

# Custom resources and the schema (schemas/<name>.json) each is checked against.
CUSTOM = {
    ("kafka.strimzi.io/v1beta2", "KafkaTopic"): "kafkatopic",
    ("kafka.strimzi.io/v1beta2", "KafkaUser"): "kafkauser",
    ("postgresql.cnpg.io/v1", "Cluster"): "cnpg-cluster",
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"): "kustomization",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "prometheusrule",
    ("monitoring.coreos.com/v1", "PodMonitor"): "podmonitor",
}
CUSTOM_GROUPS = {"kafka.strimzi.io", "postgresql.cnpg.io", "kustomize.config.k8s.io", "monitoring.coreos.com"}
# The alerting rules' one source; prometheus-rules.yaml is generated from it.
ALERT_RULES = "deploy/monitoring/geochat-alerts.yaml"
CLUSTER_SCOPED = {"Namespace", "Kustomization"}
WORKLOADS = {"StatefulSet", "Deployment", "Job"}

problems = []


def problem(where, text, check="consistency"):
    problems.append(f"[{check}] {where}: {text}")


def load(manifest_dir):
    """Every document of every *.yaml in the folder, as (file, index, document)."""
    docs = []
    for name in sorted(os.listdir(manifest_dir)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(manifest_dir, name)) as f:
            try:
                parsed = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as error:
                problem(name, f"not YAML: {error}")
                continue
        for index, doc in enumerate(parsed):
            if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or "apiVersion" not in doc:
                problem(f"{name}#{index}", "not a Kubernetes object (apiVersion and kind)")
                continue
            docs.append((name, index, doc))
    return docs


def shared_topics(root):
    """Topics.shared from Shared/GeoChatDomain/Wire/Topics.swift: the names every service needs."""
    path = os.path.join(root, "Shared/GeoChatDomain/Wire/Topics.swift")
    source = open(path).read()
    # Only `enum Topics` (ConsumerGroups, after it, reuses the constant names).
    block = re.search(r"enum Topics \{(.*?)\n\}", source, re.S)
    if not block:
        problem(path, "no `enum Topics { ... }` found")
        return set()
    source = block.group(1)
    names = dict(re.findall(r'static let (\w+) = "([^"]+)"', source))
    listed = re.search(r"static let shared = \[(.*?)\]", source, re.S)
    if not listed:
        problem(path, "no `static let shared = [...]` found")
        return set()
    return {names[i] for i in re.findall(r"\w+", listed.group(1)) if i in names}


def containers(pod_spec):
    return pod_spec.get("initContainers", []) + pod_spec.get("containers", [])


def pod_spec(doc):
    if doc["kind"] in WORKLOADS:
        return doc.get("spec", {}).get("template", {}).get("spec", {})
    return None


def check(manifest_dir, root, docs):
    where = {id(d): f"{f}#{i} {d['kind']}/{d.get('metadata', {}).get('name')}" for f, i, d in docs}
    by_kind = {}
    for _, _, d in docs:
        by_kind.setdefault(d["kind"], []).append(d)

    # kustomization.yaml lists every manifest (examples excepted), and only existing files.
    kustomizations = by_kind.get("Kustomization", [])
    namespace = None
    image_names = set()
    if len(kustomizations) != 1:
        problem(manifest_dir, "expected exactly one kustomization.yaml")
    else:
        k = kustomizations[0]
        namespace = k.get("namespace")
        image_names = {i.get("name") for i in k.get("images", [])}
        listed = set(k.get("resources", []))
        files = {f for f in os.listdir(manifest_dir) if f.endswith(".yaml")}
        for missing in sorted(listed - files):
            problem("kustomization.yaml", f"lists {missing}, which does not exist")
        for unlisted in sorted(files - listed - {"kustomization.yaml"}):
            if not unlisted.endswith(".example.yaml"):
                problem("kustomization.yaml", f"does not list {unlisted}")

    # One namespace for everything namespaced.
    for f, i, d in docs:
        meta = d.get("metadata", {})
        if d["kind"] == "Namespace":
            if namespace and meta.get("name") != namespace:
                problem(where[id(d)], f"is not the kustomization's namespace {namespace}")
        elif d["kind"] not in CLUSTER_SCOPED and namespace and meta.get("namespace") != namespace:
            problem(where[id(d)], f"metadata.namespace is {meta.get('namespace')!r}, not {namespace!r}")

    # What the pods may refer to: the ConfigMaps and Secrets defined here (examples
    # included), plus the CA Secrets the operators make for the clusters defined here.
    config_maps = {d["metadata"]["name"]: d.get("data", {}) for d in by_kind.get("ConfigMap", [])}
    secrets = {
        d["metadata"]["name"]: set(d.get("stringData", {})) | set(d.get("data", {})) for d in by_kind.get("Secret", [])
    }
    strimzi_clusters = {
        d["metadata"].get("labels", {}).get("strimzi.io/cluster")
        for kind in ("KafkaTopic", "KafkaUser")
        for d in by_kind.get(kind, [])
    }
    for cluster in filter(None, strimzi_clusters):
        secrets[f"{cluster}-cluster-ca-cert"] = {"ca.crt", "ca.p12", "ca.password"}
    for d in by_kind.get("Cluster", []):
        secrets[f"{d['metadata']['name']}-ca"] = {"ca.crt", "ca.key"}

    kafka_settings = config_maps.get("geochat-kafka", {})

    # The shared topics: exactly the code's, each as GEOCHAT_PARTITIONS, replication and min ISR say.
    topics = by_kind.get("KafkaTopic", [])
    declared = {t.get("spec", {}).get("topicName") or t["metadata"]["name"] for t in topics}
    expected = shared_topics(root)
    for name in sorted(expected - declared):
        problem("kafka-topics.yaml", f"no KafkaTopic for {name} (Topics.shared)")
    for name in sorted(declared - expected):
        problem("kafka-topics.yaml", f"KafkaTopic {name} is not in Topics.shared")
    want = {
        "partitions": kafka_settings.get("GEOCHAT_PARTITIONS"),
        "replicas": kafka_settings.get("GEOCHAT_KAFKA_REPLICATION_FACTOR"),
    }
    for t in topics:
        spec = t.get("spec", {})
        for field, value in want.items():
            if value is not None and str(spec.get(field)) != str(value):
                problem(where[id(t)], f"spec.{field} is {spec.get(field)}, the ConfigMap says {value}")
        isr = spec.get("config", {}).get("min.insync.replicas")
        if str(isr) != str(kafka_settings.get("GEOCHAT_KAFKA_MIN_INSYNC_REPLICAS", isr)):
            problem(where[id(t)], "min.insync.replicas differs from GEOCHAT_KAFKA_MIN_INSYNC_REPLICAS")
        if isinstance(isr, int) and isinstance(spec.get("replicas"), int) and isr >= spec["replicas"]:
            problem(where[id(t)], "min.insync.replicas must be below replicas, or one broker down stops every write")

    # Pods: their references resolve, the CA files they are told about are mounted.
    services = by_kind.get("Service", [])
    budgets = by_kind.get("PodDisruptionBudget", [])
    for d in docs:
        d = d[2]
        spec = pod_spec(d)
        if spec is None:
            continue
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for v in volumes.values():
            if "secret" in v:
                name = v["secret"].get("secretName")
                if name not in secrets:
                    problem(where[id(d)], f"volume {v['name']}: no Secret {name}")
                for item in v["secret"].get("items", []):
                    if name in secrets and item["key"] not in secrets[name]:
                        problem(where[id(d)], f"volume {v['name']}: Secret {name} has no key {item['key']}")
        for c in containers(spec):
            if c.get("image") not in image_names:
                problem(where[id(d)], f"container {c['name']}: image {c.get('image')} is not in kustomization images")
            env = {}
            for source in c.get("envFrom", []):
                ref = source.get("configMapRef", {}).get("name")
                if ref not in config_maps:
                    problem(where[id(d)], f"container {c['name']}: no ConfigMap {ref}")
                env.update(config_maps.get(ref, {}))
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref and ref["key"] not in secrets.get(ref["name"], set()):
                    problem(where[id(d)], f"env {e['name']}: no key {ref['key']} in Secret {ref['name']}")
                env[e["name"]] = e.get("value", e.get("valueFrom"))
            mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
            for key, value in env.items():
                if isinstance(value, str) and value.startswith("/etc/geochat/"):
                    folder, file = os.path.split(value)
                    volume = volumes.get(mounts.get(folder))
                    if volume is None:
                        problem(where[id(d)], f"{key}={value}: nothing is mounted at {folder}")
                    elif "items" in volume.get("secret", {}) and file not in [i["path"] for i in volume["secret"]["items"]]:
                        problem(where[id(d)], f"{key}={value}: the volume at {folder} has no {file}")
            if d["kind"] != "StatefulSet":
                continue
            # A service pod: its instance id is its pod name, and its probes are on its own HTTP port.
            instance = env.get("GEOCHAT_INSTANCE_ID")
            if not (isinstance(instance, dict) and instance.get("fieldRef", {}).get("fieldPath") == "metadata.name"):
                problem(where[id(d)], "GEOCHAT_INSTANCE_ID must come from the pod name (fieldRef metadata.name)")
            if env.get("GEOCHAT_HTTP_HOST") != "0.0.0.0":
                problem(where[id(d)], "GEOCHAT_HTTP_HOST must be 0.0.0.0 in a pod")
            http = [p for p in c.get("ports", []) if p.get("name") == "http"]
            if not http or str(http[0]["containerPort"]) != str(env.get("GEOCHAT_HTTP_PORT")):
                problem(where[id(d)], "the container port named http must be GEOCHAT_HTTP_PORT")
            for probe, path in (("livenessProbe", "/health"), ("readinessProbe", "/ready")):
                get = c.get(probe, {}).get("httpGet", {})
                if get.get("path") != path or get.get("port") != "http":
                    problem(where[id(d)], f"{probe} must be GET {path} on port http")
        if d["kind"] == "StatefulSet":
            labels = d["spec"]["template"]["metadata"].get("labels", {})

            def selects(obj):
                selector = obj["spec"].get("selector", {})
                selector = selector.get("matchLabels", selector)
                return bool(selector) and all(labels.get(k) == v for k, v in selector.items())

            governing = [s for s in services if s["metadata"]["name"] == d["spec"].get("serviceName")]
            if not governing or governing[0]["spec"].get("clusterIP") != "None" or not selects(governing[0]):
                problem(where[id(d)], "spec.serviceName must name a headless Service selecting its pods")
            if not any(selects(b) for b in budgets):
                problem(where[id(d)], "no PodDisruptionBudget selects its pods")

    for h in by_kind.get("HorizontalPodAutoscaler", []):
        target = h["spec"]["scaleTargetRef"]
        if not any(w["metadata"]["name"] == target["name"] for w in by_kind.get(target["kind"], [])):
            problem(where[id(h)], f"scales {target['kind']}/{target['name']}, which is not defined here")

    check_lockdown(root, [d for _, _, d in docs], by_kind, where)


# ---------------------------------------------------------------------------
# The lock-down checks (issue 26): per-address limits, trusted proxies, one Kafka
# account per workload with exactly its code's rights, network policies,
# PostgreSQL TLS, and the gateway's memory against the documented formula.

# What each Kafka-using workload reads and writes on the shared topics, by role
# (the constant names of `enum Topics` in Shared/GeoChatDomain/Wire/Topics.swift).
# Derived from the code: the commands each executable sends (`WireCommand.topic`
# of the commands in Services/<Service>/, ChatActions, Admin/, ExpiryRun,
# MessagingCommandHandlers), the events it publishes (`WireEvent.topic`, outbox
# relays, StateBroadcaster) and the topics its consumers follow (each main,
# EventFeed, SessionMembershipFeed, SettingsAndBansFeed). docs/operations.md ("Kafka
# accounts and ACLs") is the same table in prose. The consumer groups and reply
# topics are not listed here: they are read from the code below.
KAFKA_ROLES = {
    # The internet-facing gateway: the phones' commands, presence (written, never read), the feeds.
    "gateway": {
        "write": {"sessionCommands", "roomsCommands", "messagingCommands", "presence"},
        "read": {"sessionEvents", "roomEvents", "messageEvents", "settings", "bans"},
    },
    # The gateway executable serving only the admin API (not behind the public Service).
    "admin-gateway": {
        "write": {"adminCommands", "expiryCommands", "roomsCommands", "messagingCommands"},
        "read": {"sessionEvents", "roomEvents", "messageEvents", "settings", "bans"},
    },
    "session": {
        "write": {"sessionEvents", "settings", "bans"},
        "read": {"sessionCommands", "adminCommands", "presence"},
    },
    "rooms": {"write": {"roomEvents"}, "read": {"roomsCommands", "sessionEvents", "presence"}},
    "messaging": {"write": {"messageEvents", "roomsCommands"}, "read": {"messagingCommands", "roomEvents"}},
    "expiry": {"write": {"roomsCommands", "messagingCommands"}, "read": {"expiryCommands", "settings", "bans"}},
}
# Topics whose records are trusted as an admin's or an owner's word: whoever can
# write them can forge bans, settings, admin commands, expiry runs or any event.
# The internet-facing gateway must write none of them.
GATEWAY_MUST_NOT_WRITE = {
    "adminCommands": "every admin command (bans, settings, logins, audit)",
    "expiryCommands": "expiry runs (mass room removal)",
    "settings": "live settings",
    "bans": "bans",
    "sessionEvents": "session events",
    "roomEvents": "room events (removals)",
    "messageEvents": "stored messages",
}
IMPLIES_DESCRIBE = {"Read", "Write", "Delete", "Alter"}
ALL_OPERATIONS = {"Read", "Write", "Create", "Delete", "Alter", "Describe", "ClusterAction",
                  "AlterConfigs", "DescribeConfigs", "IdempotentWrite"}

# Address ranges a trusted proxy may be in: none of them is an internet client's.
NON_PUBLIC = [ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "fc00::/7", "fe80::/10", "::1/128")]
PG_SSLMODES_OK = {"require", "verify-full"}
PG_SSLMODES_REFUSED = {"disable", "allow", "prefer"}

# The gateway's memory, from measured figures (docs/operations.md, "Gateway memory
# and push places"; docs/capacity.md, docs/benchmarks.md):
GATEWAY_START_BYTES = 45_000_000    # RSS after start: 42.7-45.0 MB measured
ROOM_BYTES = 120                    # region index: (161.1 - 46.6) MiB over 1,000,001 rooms after a full load (2026-11-26)
SESSION_BYTES = 100 + 150           # presence table ~100 B + session directory ~150 B per live session
MESSAGE_BYTES = 185                 # read model: (463.3 - 366.2) MB less 20,000 sessions, over 10,002 rooms x 50 messages
# A push stream or long poll at worst (PushSettings.bytesPerPlace when the code has
# it): connection and task (~19 KB) and a stalled write in NIO's buffer, 128 KiB,
# plus the kernel's send buffer at its default (GEOCHAT_PUSH_SEND_BUFFER_BYTES,
# 64 KiB), which the pod's memory cgroup is charged for.
PLACE_BYTES_DEFAULT = 192 * 1024
SEND_BUFFER_DEFAULT = 65_536
HEADROOM = 1.1
SIZING = ("geochat/size-for-rooms", "geochat/size-for-sessions", "geochat/size-for-messages-held")


def read_code(root, relative):
    """A source file the manifests are checked against; one that moved fails the check loudly."""
    path = os.path.join(root, relative)
    if not os.path.exists(path):
        raise SystemExit(f"check_manifests: {relative} is not there; point the check at the file's new place")
    return open(path).read()


def service_sources(root, binary):
    """All Swift source of the executable `geochat-<name>` (Services/<Name>/)."""
    folder = os.path.join(root, "Services", binary.split("-", 1)[1].capitalize())
    text = []
    for base, _, files in os.walk(folder):
        text += [open(os.path.join(base, f)).read() for f in sorted(files) if f.endswith(".swift")]
    return "\n".join(text)


class Code:
    """What the checks need from the Swift sources."""

    def __init__(self, root):
        source = read_code(root, "Shared/GeoChatDomain/Wire/Topics.swift")
        topics = re.search(r"enum Topics \{(.*?)\n\}", source, re.S)
        self.topics = dict(re.findall(r'static let (\w+) = "([^"]+)"', topics.group(1))) if topics else {}
        self.replies_prefix = (re.findall(r'static let repliesPrefix = "([^"]+)"', source) or ["geochat.replies."])[0]
        groups = re.search(r"enum ConsumerGroups \{(.*?)\n\}", source, re.S)
        self.groups = dict(re.findall(r'static let (\w+) = "([^"]+)"', groups.group(1))) if groups else {}
        self.shared = shared_topics(root)
        if not self.topics or not self.groups:
            problem("Topics.swift", "enum Topics or enum ConsumerGroups not found", "kafka-acls")
        # The defaults (GatewayCore) and the configuration keys that set them (the gateway's settings).
        rates = read_code(root, "Services/GatewayCore/Limits/RateLimitSettings.swift") + read_code(
            root, "Services/Gateway/Settings/RateLimitSettings+Configuration.swift")
        defaults = dict((f, (float(a.replace("_", "")), float(b.replace("_", "")))) for f, a, b in re.findall(
            r"(\w+): \.init\(perSecond: ([\d._]+), capacity: ([\d._]+)", rates))
        # Every per-address token bucket: its configuration key and its default.
        self.address_rules = {key: defaults.get(field) for key, field in re.findall(
            r'= try rule\("([\w.]+\.address)", d\.(\w+)\)', rates)}
        if not self.address_rules:
            problem("RateLimitSettings.swift", "no per-address rules found (rule(\"<name>.address\", ...))", "rate-limits")
        gateway = read_code(root, "Services/Gateway/Settings/GatewaySettings.swift")
        place = re.search(r"bytesPerPlace = ([\d_ *]+)", gateway)
        self.place_bytes = eval(place.group(1).replace("_", "")) if place else PLACE_BYTES_DEFAULT
        buffer = re.search(r'"push\.send\.buffer\.bytes", default: ([\d_]+)', gateway)
        self.send_buffer = int(buffer.group(1).replace("_", "")) if buffer else SEND_BUFFER_DEFAULT
        self.push_per_address = '"push.max.per.address"' in gateway
        self.address_header = '"client.address.header"' in read_code(root, "Services/Gateway/HTTP/ClientAddresses.swift")

    def topic(self, constant):
        return self.topics.get(constant, constant)

    def uses(self, root, binary):
        """Consumer groups, whether it reads without a group, whether it sends commands."""
        source = service_sources(root, binary)
        groups = {self.groups[g] for g in re.findall(r"ConsumerGroups\.(\w+)", source) if g in self.groups}
        requester = re.search(r"commandBus\([^)]*\)", source) is not None
        groupless = requester or re.search(r"\.(tail|replay)\b", source) is not None
        return groups, groupless, requester


def quantity(text):
    """A Kubernetes quantity in bytes (memory: Ki Mi Gi Ti, k M G T, plain)."""
    m = re.fullmatch(r"([\d.]+)([KMGT]i?|k)?", str(text))
    if not m:
        return None
    scale = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "K": 10**3,
             "M": 10**6, "G": 10**9, "T": 10**12}.get(m.group(2), 1)
    return float(m.group(1)) * scale


def label_selects(selector, labels):
    """A LabelSelector (matchLabels, matchExpressions) against a pod's labels; {} selects all."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values", [])
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def exact_namespace(peer):
    """The one namespace a peer names by kubernetes.io/metadata.name, else None."""
    selector = peer.get("namespaceSelector")
    if not selector or selector.get("matchExpressions") or list((selector.get("matchLabels") or {})) != ["kubernetes.io/metadata.name"]:
        return None
    return selector["matchLabels"]["kubernetes.io/metadata.name"]


class Workload:
    def __init__(self, doc, where, config_maps):
        self.doc = doc
        self.where = where
        self.name = doc["metadata"]["name"]
        self.kind = doc["kind"]
        spec = pod_spec(doc)
        self.labels = doc["spec"]["template"].get("metadata", {}).get("labels", {})
        self.annotations = doc["spec"]["template"].get("metadata", {}).get("annotations", {})
        self.container = (spec.get("containers") or [{}])[0]
        self.env = {}
        for source in self.container.get("envFrom", []):
            self.env.update(config_maps.get(source.get("configMapRef", {}).get("name"), {}))
        for e in self.container.get("env", []):
            self.env[e["name"]] = e.get("value", e.get("valueFrom"))
        self.ports = {p.get("name"): p["containerPort"] for p in self.container.get("ports", [])}
        command = " ".join(self.container.get("command", []) + self.container.get("args", []))
        found = re.search(r"/(geochat-[a-z]+)\b", command)
        self.binary = found.group(1) if found else None
        self.kafka = "GEOCHAT_KAFKA_BROKERS" in self.env
        self.postgres = "GEOCHAT_PG_HOST" in self.env
        self.public = False  # set once the Services are known
        self.role = None

    def port_number(self, port):
        if isinstance(port, int):
            return port if port in self.ports.values() else None
        if str(port).isdigit():
            return self.port_number(int(port))
        return self.ports.get(port)


def check_lockdown(root, docs, by_kind, where):
    code = Code(root)
    config_maps = {d["metadata"]["name"]: d.get("data", {}) for d in by_kind.get("ConfigMap", [])}
    workloads = [Workload(d, where[id(d)], config_maps) for d in docs if d["kind"] in WORKLOADS]
    services = by_kind.get("Service", [])
    for w in workloads:
        for s in services:
            if s["spec"].get("clusterIP") != "None" and label_selects({"matchLabels": s["spec"].get("selector", {})}, w.labels):
                w.public = True
        if w.binary == "geochat-gateway":
            w.role = "gateway" if w.public else "admin-gateway"
        elif w.binary:
            w.role = w.binary.split("-", 1)[1]
    check_gateway_settings(code, workloads, services)
    check_kafka(root, code, workloads, by_kind.get("KafkaUser", []))
    check_network(workloads, by_kind, config_maps)
    check_postgres_tls(workloads, by_kind, config_maps)
    check_gateway_memory(code, workloads)
    check_monitoring(root, workloads, by_kind)


def check_monitoring(root, workloads, by_kind):
    """Every pod annotated prometheus.io/scrape is scraped by exactly one PodMonitor,
    on the container port and path of its annotations; the PrometheusRule holds
    exactly the rules of deploy/monitoring/geochat-alerts.yaml."""
    monitors = by_kind.get("PodMonitor", [])
    for w in workloads:
        if w.annotations.get("prometheus.io/scrape") != "true":
            continue
        chosen = [m for m in monitors if label_selects(m["spec"].get("selector"), w.labels)]
        if len(chosen) != 1:
            problem(w.where, f"selected by {len(chosen)} PodMonitors, not 1", "monitoring")
            continue
        want_port = str(w.annotations.get("prometheus.io/port"))
        want_path = w.annotations.get("prometheus.io/path", "/metrics")
        endpoints = chosen[0]["spec"].get("podMetricsEndpoints", [])
        if not any(str(w.port_number(e.get("port", e.get("portNumber")))) == want_port
                   and e.get("path", "/metrics") == want_path for e in endpoints):
            problem(w.where, f"PodMonitor {chosen[0]['metadata']['name']} does not scrape port {want_port} "
                    f"path {want_path} (its prometheus.io annotations)", "monitoring")
    try:
        with open(os.path.join(root, ALERT_RULES)) as f:
            source = yaml.safe_load(f)["groups"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as error:
        problem(ALERT_RULES, f"cannot read the alerting rules: {error}", "monitoring")
        return
    rules = by_kind.get("PrometheusRule", [])
    if len(rules) != 1 or rules[0].get("spec", {}).get("groups") != source:
        problem("prometheus-rules.yaml", f"not one PrometheusRule with exactly the groups of {ALERT_RULES} "
                "(run python3 deploy/monitoring/generate.py)", "monitoring")


def check_gateway_settings(code, workloads, services):
    gateways = [w for w in workloads if w.binary == "geochat-gateway"]
    if not any(w.public for w in gateways):
        problem("gateway", "no gateway is behind a (non-headless) Service: where do the phones go?", "rate-limits")
    for w in gateways:
        # The admin API must never be behind a public Service.
        admin_port = w.port_number(w.env.get("GEOCHAT_ADMIN_PORT", "operators")) or w.ports.get("operators")
        for s in services:
            if s["spec"].get("clusterIP") == "None" or not label_selects({"matchLabels": s["spec"].get("selector", {})}, w.labels):
                continue
            for p in s["spec"].get("ports", []):
                if w.port_number(p.get("targetPort", p.get("port"))) == admin_port:
                    problem(w.where, f"Service {s['metadata']['name']} exposes the operators' listener (port {admin_port}, the admin API, /metrics)", "network-ingress")
        if not w.public:
            continue
        # An internet-facing gateway serves no admin API and holds no admin secret.
        if str(w.env.get("GEOCHAT_ADMIN_API", "on")).strip().lower() != "off":
            problem(w.where, "GEOCHAT_ADMIN_API is not \"off\" on a public gateway: its admin API belongs on the admin gateway", "admin-api")
        for secret in ("GEOCHAT_LOGIN_SEAL_KEY", "GEOCHAT_LOGIN_SEAL_KEY_FILE", "GEOCHAT_OPERATOR_KEY", "GEOCHAT_OPERATOR_KEY_FILE"):
            if secret in w.env:
                problem(w.where, f"{secret} is set on a public gateway: admin keys belong to the admin gateway and the services that check them", "admin-api")
        # Per-address limits: every one the code has must be on (rate and burst above 0).
        for key, default in sorted(code.address_rules.items()):
            base = "GEOCHAT_RATE_" + key.upper().replace(".", "_")
            for suffix, index in (("_PER_S", 0), ("_BURST", 1)):
                value = w.env.get(base + suffix)
                if value is None:
                    value = default[index] if default else None
                try:
                    on = value is not None and float(value) > 0
                except (TypeError, ValueError):
                    on = False
                if not on:
                    problem(w.where, f"{base}{suffix} is {value!r}: the per-address limit rate.{key} must be on (above 0) on a public gateway", "rate-limits")
        if code.push_per_address and str(w.env.get("GEOCHAT_PUSH_MAX_PER_ADDRESS", "1")).strip() in ("0", ""):
            problem(w.where, "GEOCHAT_PUSH_MAX_PER_ADDRESS is 0: one client could hold every push place", "rate-limits")
        # Trusted proxies: set, well-formed, and nothing an internet client can be in.
        if code.address_header and not w.env.get("GEOCHAT_CLIENT_ADDRESS_HEADER"):
            problem(w.where, "GEOCHAT_CLIENT_ADDRESS_HEADER is not set: name the one header the ingress writes (others are a client's own)", "trusted-proxies")
        raw = w.env.get("GEOCHAT_TRUSTED_PROXIES")
        if not isinstance(raw, str) or not raw.strip():
            problem(w.where, "GEOCHAT_TRUSTED_PROXIES is not set: behind the ingress every phone would share the ingress pods' per-address buckets", "trusted-proxies")
            continue
        for item in raw.split(","):
            try:
                network = ipaddress.ip_network(item.strip(), strict=False)
            except ValueError:
                problem(w.where, f"GEOCHAT_TRUSTED_PROXIES: {item.strip()!r} is not an address or CIDR", "trusted-proxies")
                continue
            if not any(network.version == n.version and network.subnet_of(n) for n in NON_PUBLIC):
                problem(w.where, f"GEOCHAT_TRUSTED_PROXIES trusts {network}, which holds public addresses: a client there could choose its own address (and bucket)", "trusted-proxies")


def acl_rights(user, kind, name):
    """The operations a KafkaUser's simple ACLs allow on one resource (deny wins)."""
    allowed, denied = set(), set()
    for acl in user.get("spec", {}).get("authorization", {}).get("acls", []):
        resource = acl.get("resource", {})
        if resource.get("type") != kind:
            continue
        if kind != "cluster":
            pattern, literal = resource.get("name", ""), resource.get("patternType", "literal") == "literal"
            if not ((literal and pattern in (name, "*")) or (not literal and name.startswith(pattern))):
                continue
        ops = set(acl.get("operations", []))
        if "All" in ops:
            ops = set(ALL_OPERATIONS)
        if ops & IMPLIES_DESCRIBE:
            ops.add("Describe")
        if "AlterConfigs" in ops:
            ops.add("DescribeConfigs")
        (denied if acl.get("type", "allow") == "deny" else allowed).update(ops)
    return allowed - denied


def check_kafka(root, code, workloads, users):
    users_by_name = {u["metadata"]["name"]: u for u in users}
    kafka_workloads = [w for w in workloads if w.kafka]
    seen_users, seen_keys = {}, {}
    for w in kafka_workloads:
        name = w.env.get("GEOCHAT_RDKAFKA_SASL_USERNAME")
        user = users_by_name.get(name) if isinstance(name, str) else None
        if user is None:
            problem(w.where, f"GEOCHAT_RDKAFKA_SASL_USERNAME is {name!r}, not one of the KafkaUsers here: each workload logs in as its own", "kafka-accounts")
            continue
        if name in seen_users:
            problem(w.where, f"shares the Kafka account {name} with {seen_users[name]}: one account per workload", "kafka-accounts")
        seen_users[name] = w.name
        ref = (w.env.get("GEOCHAT_RDKAFKA_SASL_PASSWORD") or {})
        ref = ref.get("secretKeyRef", {}) if isinstance(ref, dict) else {}
        want = user["spec"].get("authentication", {}).get("password", {}).get("valueFrom", {}).get("secretKeyRef", {})
        if not ref or (ref.get("name"), ref.get("key")) != (want.get("name"), want.get("key")):
            problem(w.where, f"GEOCHAT_RDKAFKA_SASL_PASSWORD must come from {want.get('name')}/{want.get('key')}, the password of KafkaUser {name}", "kafka-accounts")
        w.user = user
    for u in users:
        key = u["spec"].get("authentication", {}).get("password", {}).get("valueFrom", {}).get("secretKeyRef", {})
        pair = (key.get("name"), key.get("key"))
        if pair in seen_keys:
            problem(f"KafkaUser/{u['metadata']['name']}", f"shares its password ({pair[0]}/{pair[1]}) with KafkaUser/{seen_keys[pair]}", "kafka-accounts")
        seen_keys[pair] = u["metadata"]["name"]
        if u["metadata"]["name"] not in seen_users:
            problem(f"KafkaUser/{u['metadata']['name']}", "no workload logs in with it: remove it (an unused account is a spare key)", "kafka-accounts")

    # The rights each account has, against the table and the code.
    accounts = [w for w in kafka_workloads if getattr(w, "user", None) is not None]
    expected = {}
    for w in accounts:
        if w.role not in KAFKA_ROLES:
            problem(w.where, f"no Kafka rights are defined for {w.binary} (KAFKA_ROLES in check_manifests.py)", "kafka-acls")
            continue
        table = KAFKA_ROLES[w.role]
        for constant in table["write"] | table["read"]:
            if constant not in code.topics:
                problem("check_manifests.py", f"KAFKA_ROLES names Topics.{constant}, which Topics.swift does not have", "kafka-acls")
        groups, groupless, requester = code.uses(root, w.binary)
        expected[w.name] = {
            "write": {code.topic(t) for t in table["write"]},
            "read": {code.topic(t) for t in table["read"]},
            "groups": groups, "groupless": groupless, "requester": requester,
        }
    for topic in code.shared:
        if not any(topic in e["write"] for e in expected.values()) or not any(topic in e["read"] for e in expected.values()):
            problem("check_manifests.py", f"KAFKA_ROLES: nobody both writes and reads {topic}", "kafka-acls")
    instances = {w.name: f"{code.replies_prefix}{w.name}-0" for w in accounts}
    # A responder answers on the reply topic of every workload that writes a command topic it reads.
    for w in accounts:
        if w.name not in expected:
            continue
        e = expected[w.name]
        e["replies"] = {instances[o.name] for o in accounts if o.name in expected and o.name != w.name
                        and any(t.endswith(".commands") and t in expected[o.name]["write"] for t in e["read"])}
        user, who = w.user, f"KafkaUser/{w.user['metadata']['name']}"

        def compare(kind, name, want, what):
            have = acl_rights(user, kind, name)
            if have != want:
                extra, missing = sorted(have - want), sorted(want - have)
                text = f"{kind} {name}: " + "; ".join(
                    ([f"has {', '.join(extra)} it must not"] if extra else []) + ([f"lacks {', '.join(missing)}"] if missing else []))
                problem(who, f"{text} ({what})", "kafka-acls")

        for topic in sorted(code.shared):
            want = {"Describe"} | ({"Write"} if topic in e["write"] else set()) | ({"Read"} if topic in e["read"] else set())
            compare("topic", topic, want, f"{w.role}: docs/operations.md, Kafka ACLs")
        for other, reply in sorted(instances.items()):
            if other == w.name:
                want = {"Create", "Read", "Write", "Describe"} if e["requester"] else set()
                compare("topic", reply, want, "its own reply topic" if e["requester"] else "it sends no commands")
            else:
                want = {"Write", "Describe"} if reply in e["replies"] else set()
                compare("topic", reply, want, f"replies to {other}" if want else f"{other}'s reply topic is not its business")
        for stray in ("geochat.replies.someone-else-0", "geochat.unknown", "other.topic"):
            compare("topic", stray, set(), "no wildcard or broad prefix")
        for group in sorted(set(code.groups.values())):
            compare("group", group, {"Read", "Describe"} if group in e["groups"] else set(),
                    "its consumer groups, from ConsumerGroups.* in its code")
        for other in sorted(instances):
            tail = f"tail-geochat-{other}-0"
            have = acl_rights(user, "group", tail)
            if other == w.name and e["groupless"]:
                if "Describe" not in have or have - {"Read", "Describe"}:
                    problem(who, f"group {tail}: needs Describe (Read at most) for its group-less consumers, has {sorted(have)}", "kafka-acls")
            elif have:
                problem(who, f"group {tail}: has {sorted(have)}, not its own", "kafka-acls")
        compare("group", "some-other-group", set(), "no wildcard or broad prefix")
        cluster = acl_rights(user, "cluster", "")
        if cluster - {"IdempotentWrite"}:
            problem(who, f"cluster: has {sorted(cluster - {'IdempotentWrite'})}; only IdempotentWrite is needed", "kafka-acls")
        if acl_rights(user, "transactionalId", "any"):
            problem(who, "transactionalId rights: the services use no transactions", "kafka-acls")
        if w.public:
            for constant, what in GATEWAY_MUST_NOT_WRITE.items():
                if "Write" in acl_rights(user, "topic", code.topic(constant)):
                    problem(who, f"the internet-facing gateway can write {code.topic(constant)}: a compromised gateway could forge {what}", "kafka-acls")


def check_network(workloads, by_kind, config_maps):
    policies = by_kind.get("NetworkPolicy", [])

    def types(p):
        spec = p["spec"]
        return set(spec.get("policyTypes") or (["Ingress"] + (["Egress"] if "egress" in spec else [])))

    deny = [p for p in policies if p["spec"].get("podSelector") in ({}, {"matchLabels": {}})
            and "Ingress" in types(p) and not p["spec"].get("ingress")]
    if not deny:
        problem("network-policy.yaml", "no default-deny ingress policy (podSelector {}, policyTypes [Ingress], no rules) for the namespace", "network-default-deny")
    kafka_cluster = {u["metadata"].get("labels", {}).get("strimzi.io/cluster") for u in by_kind.get("KafkaUser", [])} - {None}
    pg_clusters = {c["metadata"]["name"] for c in by_kind.get("Cluster", [])}
    roles = {"public": set(), "restricted": set()}
    for w in workloads:
        selecting = [p for p in policies if p not in deny and label_selects(p["spec"].get("podSelector"), w.labels)]
        if not selecting:
            problem(w.where, "no NetworkPolicy of its own selects its pods", "network-ingress")
        public_ports = set()
        for s in by_kind.get("Service", []):
            if s["spec"].get("clusterIP") != "None" and label_selects({"matchLabels": s["spec"].get("selector", {})}, w.labels):
                public_ports |= {w.port_number(p.get("targetPort", p.get("port"))) for p in s["spec"].get("ports", [])}
        reachable = {}  # port -> namespaces
        for p in selecting:
            if "Ingress" not in types(p):
                continue
            for rule in p["spec"].get("ingress") or []:
                ports = rule.get("ports")
                peers = rule.get("from")
                if not ports:
                    problem(w.where, f"NetworkPolicy {p['metadata']['name']}: an ingress rule without ports opens every port", "network-ingress")
                    continue
                if not peers:
                    problem(w.where, f"NetworkPolicy {p['metadata']['name']}: an ingress rule without `from` admits every source", "network-ingress")
                    continue
                for port in ports:
                    number = w.port_number(port.get("port"))
                    if number is None:
                        problem(w.where, f"NetworkPolicy {p['metadata']['name']}: port {port.get('port')} is none of the pod's", "network-ingress")
                        continue
                    for peer in peers:
                        namespace = exact_namespace(peer)
                        if namespace is None:
                            problem(w.where, f"NetworkPolicy {p['metadata']['name']}: port {number} admits {json.dumps(peer)}; name one namespace (kubernetes.io/metadata.name) instead", "network-ingress")
                            continue
                        reachable.setdefault(number, set()).add(namespace)
                        roles["public" if number in public_ports else "restricted"].add(namespace)
        for number in public_ports:
            if number is not None and not reachable.get(number):
                problem(w.where, f"its public port {number} is reachable from no namespace: the ingress cannot reach it", "network-ingress")
        metrics = w.annotations.get("prometheus.io/port")
        if metrics and not reachable.get(w.port_number(metrics)):
            problem(w.where, f"its metrics port {metrics} is reachable from no namespace: Prometheus cannot scrape it", "network-ingress")
        check_egress(w, [p for p in selecting if "Egress" in types(p)], kafka_cluster, pg_clusters)
    if len(roles["restricted"]) > 1:
        problem("network-policy.yaml", f"the operators' and metrics ports are open to several namespaces ({', '.join(sorted(roles['restricted']))}): only the monitoring one", "network-ingress")
    if roles["restricted"] & roles["public"]:
        problem("network-policy.yaml", f"namespace(s) {', '.join(sorted(roles['restricted'] & roles['public']))} reach both the public port and the operators'/metrics ports: the ingress must reach only the public port", "network-ingress")
    # PostgreSQL's pods: only the workloads that use it reach its port.
    for cluster in pg_clusters:
        selecting = [p for p in policies if p not in deny and label_selects(p["spec"].get("podSelector"), {"cnpg.io/cluster": cluster})]
        if not selecting:
            problem("network-policy.yaml", f"no NetworkPolicy admits anything to the pods of PostgreSQL {cluster}: under the default deny no service reaches it", "network-ingress")
        admitted = set()
        for p in selecting:
            for rule in p["spec"].get("ingress") or []:
                peers = rule.get("from")
                if not peers:
                    problem("network-policy.yaml", f"NetworkPolicy {p['metadata']['name']}: PostgreSQL open to every source", "network-ingress")
                    continue
                for peer in peers:
                    if "namespaceSelector" in peer or "ipBlock" in peer:
                        continue
                    admitted |= {w.name for w in workloads if label_selects(peer.get("podSelector"), w.labels)}
        users = {w.name for w in workloads if w.postgres}
        for name in sorted(admitted - users):
            problem("network-policy.yaml", f"{name} can reach PostgreSQL {cluster} but does not use it", "network-ingress")
        for name in sorted(users - admitted):
            problem("network-policy.yaml", f"{name} uses PostgreSQL {cluster} but no policy lets it in", "network-ingress")


def single_address(peer):
    block = peer.get("ipBlock") or {}
    try:
        network = ipaddress.ip_network(block.get("cidr", ""), strict=False)
    except ValueError:
        return False
    return network.num_addresses == 1 and not block.get("except")


def check_egress(w, policies, kafka_clusters, pg_clusters):
    if not policies:
        problem(w.where, "no NetworkPolicy limits its egress (policyTypes Egress)", "network-egress")
        return
    broker_ports = {int(b.rsplit(":", 1)[1]) for b in str(w.env.get("GEOCHAT_KAFKA_BROKERS", "")).split(",") if ":" in b}
    pg_port = int(w.env.get("GEOCHAT_PG_PORT", 5432)) if w.postgres else None
    found = set()
    for p in policies:
        for rule in p["spec"].get("egress") or []:
            peers, ports = rule.get("to"), rule.get("ports")
            if not peers or not ports:
                problem(w.where, f"NetworkPolicy {p['metadata']['name']}: an egress rule without `to` or `ports` lets it reach anything", "network-egress")
                continue
            for peer in peers:
                pods = (peer.get("podSelector") or {}).get("matchLabels") or {}
                namespace = exact_namespace(peer)
                for port in ports:
                    number = port.get("port")
                    if (number in (53, 5353) and namespace and pods) or (number == 53 and single_address(peer)):
                        # The cluster DNS: its pods (kube-system's kube-dns; OpenShift's
                        # openshift-dns answers on 5353), or one address (NodeLocal DNSCache).
                        found.add("dns")
                    elif "namespaceSelector" not in peer and "ipBlock" not in peer and pods.get("strimzi.io/cluster") in kafka_clusters \
                            and pods.get("strimzi.io/kind") == "Kafka" and number in broker_ports and w.kafka:
                        found.add("kafka")
                    elif "namespaceSelector" not in peer and "ipBlock" not in peer and pods.get("cnpg.io/cluster") in pg_clusters \
                            and number == pg_port and w.postgres:
                        found.add("postgres")
                    else:
                        problem(w.where, f"NetworkPolicy {p['metadata']['name']}: egress to {json.dumps(peer)} port {number} is none of Kafka (if it uses it), PostgreSQL (if it uses it), DNS", "network-egress")
    for need, why in (("dns", True), ("kafka", w.kafka), ("postgres", w.postgres)):
        if why and need not in found:
            problem(w.where, f"its egress policy does not let it reach {need}", "network-egress")


def check_postgres_tls(workloads, by_kind, config_maps):
    for name, data in config_maps.items():
        mode = data.get("GEOCHAT_PG_SSLMODE")
        if mode in PG_SSLMODES_REFUSED:
            problem(f"ConfigMap/{name}", f"GEOCHAT_PG_SSLMODE is {mode}: a connection that may be plaintext", "postgres-tls")
    for w in workloads:
        if not w.postgres:
            continue
        mode = w.env.get("GEOCHAT_PG_SSLMODE")
        if mode not in PG_SSLMODES_OK:
            problem(w.where, f"GEOCHAT_PG_SSLMODE is {mode!r}: must be require or verify-full (unset means the code's default)", "postgres-tls")
        if mode == "verify-full" and not w.env.get("GEOCHAT_PG_SSLROOTCERT"):
            problem(w.where, "verify-full without GEOCHAT_PG_SSLROOTCERT checks against the system's roots, not the cluster's CA", "postgres-tls")
    for c in by_kind.get("Cluster", []):
        owner = c["spec"].get("bootstrap", {}).get("initdb", {}).get("owner")
        hba = c["spec"].get("postgresql", {}).get("pg_hba", [])
        if not any(re.fullmatch(rf"hostnossl\s+\S+\s+({re.escape(str(owner))}|all)\s+\S+\s+reject", line.strip()) for line in hba):
            problem(f"Cluster/{c['metadata']['name']}", f"pg_hba does not reject connections without TLS for {owner} (hostnossl … reject)", "postgres-tls")


def check_gateway_memory(code, workloads):
    default_buffer = code.send_buffer
    for w in workloads:
        if w.binary != "geochat-gateway":
            continue
        inputs = []
        for key in SIZING:
            value = w.doc["metadata"].get("annotations", {}).get(key)
            if value is None or not str(value).isdigit():
                problem(w.where, f"annotation {key} (what its memory is sized for) is missing or not a number", "gateway-memory")
                return
            inputs.append(int(value))
        rooms, sessions, messages = inputs
        places = w.env.get("GEOCHAT_PUSH_MAX_SUBSCRIBERS")
        if places is None or not str(places).isdigit():
            problem(w.where, "GEOCHAT_PUSH_MAX_SUBSCRIBERS must be set (a number): the push places its memory limit is sized for", "gateway-memory")
            continue
        buffer = w.env.get("GEOCHAT_PUSH_SEND_BUFFER_BYTES", default_buffer)
        buffer = int(buffer) if str(buffer).isdigit() and int(buffer) > 0 else 4 * 2**20  # 0: the kernel's own, up to 4 MB
        # The code's figure holds the default send buffer; another one changes it.
        per_place = code.place_bytes - default_buffer + buffer
        limit = quantity(w.container.get("resources", {}).get("limits", {}).get("memory"))
        if limit is None:
            problem(w.where, "no memory limit", "gateway-memory")
            continue
        need = HEADROOM * (GATEWAY_START_BYTES + ROOM_BYTES * rooms + SESSION_BYTES * sessions
                           + MESSAGE_BYTES * messages + int(places) * per_place)
        if need > limit:
            fits = max(0, int((limit / HEADROOM - GATEWAY_START_BYTES - ROOM_BYTES * rooms - SESSION_BYTES * sessions
                               - MESSAGE_BYTES * messages) // per_place))
            problem(w.where, f"memory limit {limit / 1e9:.2f} GB < {need / 1e9:.2f} GB = {HEADROOM} × (45 MB + {ROOM_BYTES} B × {rooms} rooms + "
                    f"250 B × {sessions} sessions + 185 B × {messages} messages + {per_place} B × {places} places); "
                    f"raise the limit or set GEOCHAT_PUSH_MAX_SUBSCRIBERS ≤ {fits}", "gateway-memory")


# --------------------------------------------------------------------------- self-test

def find(docs, kind, name):
    return next(d for _, _, d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def env_of(docs, workload):
    return find(docs, "StatefulSet", workload)["spec"]["template"]["spec"]["containers"][0]["env"]


def set_env(docs, workload, name, value):
    env = env_of(docs, workload)
    env[:] = [e for e in env if e["name"] != name] + ([{"name": name, "value": value}] if value is not None else [])


def policy(docs, name):
    return find(docs, "NetworkPolicy", name)["spec"]


MUTATIONS = [
    ("the gateways scraped on the phones' port", "monitoring",
     lambda d: find(d, "PodMonitor", "geochat-gateways")["spec"]["podMetricsEndpoints"][0].update(port="http")),
    ("a service no PodMonitor scrapes", "monitoring",
     lambda d: find(d, "PodMonitor", "geochat-services")["spec"]["selector"]["matchExpressions"][0]["values"].remove("geochat-expiry")),
    ("an alert edited in the PrometheusRule only", "monitoring",
     lambda d: find(d, "PrometheusRule", "geochat")["spec"]["groups"][0]["rules"][0].update(expr="vector(1)")),
    ("the admin API on an internet-facing gateway", "admin-api",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_ADMIN_API", None)),
    ("the login seal key on an internet-facing gateway", "admin-api",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_LOGIN_SEAL_KEY", "x")),
    ("the operator key on an internet-facing gateway", "admin-api",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_OPERATOR_KEY", "x")),
    ("a per-address limit turned off on the gateway", "rate-limits",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_RATE_START_ADDRESS_PER_S", "0")),
    ("a per-address burst of 0", "rate-limits",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_RATE_HISTORY_ADDRESS_BURST", "0")),
    ("no trusted proxies", "trusted-proxies",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_TRUSTED_PROXIES", None)),
    ("every address trusted as a proxy", "trusted-proxies",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_TRUSTED_PROXIES", "10.0.0.0/8,0.0.0.0/0")),
    ("the gateway may write the admin commands", "kafka-acls",
     lambda d: find(d, "KafkaUser", "geochat-gateway")["spec"]["authorization"]["acls"].append(
         {"resource": {"type": "topic", "name": "geochat.admin.commands", "patternType": "literal"}, "operations": ["Write"]})),
    ("the gateway may write every geochat. topic", "kafka-acls",
     lambda d: find(d, "KafkaUser", "geochat-gateway")["spec"]["authorization"]["acls"].append(
         {"resource": {"type": "topic", "name": "geochat.", "patternType": "prefix"}, "operations": ["Read", "Write"]})),
    ("the gateway may do anything to any topic (literal *, All)", "kafka-acls",
     lambda d: find(d, "KafkaUser", "geochat-gateway")["spec"]["authorization"]["acls"].append(
         {"resource": {"type": "topic", "name": "*", "patternType": "literal"}, "operations": ["All"]})),
    ("rooms may read the admin gateway's replies", "kafka-acls",
     lambda d: find(d, "KafkaUser", "geochat-rooms")["spec"]["authorization"]["acls"].append(
         {"resource": {"type": "topic", "name": "geochat.replies.", "patternType": "prefix"}, "operations": ["Read", "Write"]})),
    ("a service lacks its consumer group", "kafka-acls",
     lambda d: find(d, "KafkaUser", "geochat-session")["spec"]["authorization"]["acls"].pop(
         next(i for i, a in enumerate(find(d, "KafkaUser", "geochat-session")["spec"]["authorization"]["acls"])
              if a["resource"].get("name") == "geochat-session-admin"))),
    ("two workloads share a Kafka account", "kafka-accounts",
     lambda d: set_env(d, "geochat-rooms", "GEOCHAT_RDKAFKA_SASL_USERNAME", "geochat-messaging")),
    ("a workload logs in with another's password", "kafka-accounts",
     lambda d: next(e for e in env_of(d, "geochat-expiry") if e["name"] == "GEOCHAT_RDKAFKA_SASL_PASSWORD")
     ["valueFrom"]["secretKeyRef"].update(key="kafka-password-gateway")),
    ("no default deny", "network-default-deny",
     lambda d: d.remove(next(x for x in d if x[2]["kind"] == "NetworkPolicy" and x[2]["metadata"]["name"] == "geochat-default-deny-ingress"))),
    ("rooms without a policy", "network-ingress",
     lambda d: d.remove(next(x for x in d if x[2]["kind"] == "NetworkPolicy" and x[2]["metadata"]["name"] == "geochat-rooms"))),
    ("the gateway's operators' port open to all", "network-ingress",
     lambda d: policy(d, "geochat-gateway")["ingress"].append({"ports": [{"port": "operators"}]})),
    ("the ingress namespace reaches a service's metrics", "network-ingress",
     lambda d: policy(d, "geochat-session")["ingress"][0]["from"].append(
         {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}})),
    ("the admin API behind the public Service", "network-ingress",
     lambda d: find(d, "Service", "geochat-gateway")["spec"]["ports"].append({"name": "admin", "port": 9180, "targetPort": "operators"})),
    ("the gateway may reach PostgreSQL", "network-egress",
     lambda d: policy(d, "geochat-gateway")["egress"].append(
         {"to": [{"podSelector": {"matchLabels": {"cnpg.io/cluster": "geochat-pg"}}}], "ports": [{"port": 5432, "protocol": "TCP"}]})),
    ("the gateway may reach the internet", "network-egress",
     lambda d: policy(d, "geochat-gateway")["egress"].append(
         {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443, "protocol": "TCP"}]})),
    ("messaging may reach anything", "network-egress",
     lambda d: policy(d, "geochat-messaging")["egress"].append({"ports": [{"port": 443}]})),
    ("PostgreSQL admits the gateways", "network-ingress",
     lambda d: policy(d, "geochat-pg")["ingress"][0]["from"][0]["podSelector"]["matchExpressions"][0]["values"].append("geochat-gateway")),
    ("sslmode disable", "postgres-tls",
     lambda d: find(d, "ConfigMap", "geochat-postgres")["data"].update(GEOCHAT_PG_SSLMODE="disable")),
    ("sslmode prefer on one service", "postgres-tls",
     lambda d: set_env(d, "geochat-rooms", "GEOCHAT_PG_SSLMODE", "prefer")),
    ("a gateway memory limit too small for its places", "gateway-memory",
     lambda d: find(d, "StatefulSet", "geochat-gateway")["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"].update(memory="1Gi")),
    ("the code's 100,000 push places", "gateway-memory",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_PUSH_MAX_SUBSCRIBERS", "100000")),
    ("no push cap set", "gateway-memory",
     lambda d: set_env(d, "geochat-gateway", "GEOCHAT_PUSH_MAX_SUBSCRIBERS", None)),
]


def self_test(manifest_dir, root):
    global problems
    docs = load(manifest_dir)
    check(manifest_dir, root, docs)
    if problems:
        print(f"validate: self-test: not run, the manifests have {len(problems)} problem(s) of their own")
        return 1
    failed = 0
    for what, tag, mutate in MUTATIONS:
        problems = []
        broken = copy.deepcopy(docs)
        try:
            mutate(broken)
            check(manifest_dir, root, broken)
        except (KeyError, TypeError, AttributeError, IndexError, StopIteration) as error:
            print(f"validate: self-test: {what}: could not apply ({error!r}); update MUTATIONS with the manifests")
            failed = 1
            continue
        if not any(p.startswith(f"[{tag}]") for p in problems):
            print(f"validate: self-test: NOT CAUGHT by [{tag}]: {what}" + (f" (only: {problems})" if problems else ""))
            failed = 1
    problems = []
    print(f"validate: self-test: {len(MUTATIONS)} broken variants, {'all caught' if not failed else 'SOME NOT CAUGHT'}")
    return failed


def split(docs, work):
    lists = {}
    for number, (f, i, d) in enumerate(docs):
        key = (d["apiVersion"], d["kind"])
        group = d["apiVersion"].split("/")[0] if "/" in d["apiVersion"] else ""
        if key in CUSTOM:
            target = "schema-" + CUSTOM[key]
        elif group in CUSTOM_GROUPS:
            problem(f"{f}#{i}", f"no schema for {d['apiVersion']} {d['kind']} in schemas/")
            continue
        else:
            target = "builtin"
        base = os.path.splitext(f)[0]
        path = os.path.join(work, f"{number:03d}-{base}-{i}-{d['kind'].lower()}.json")
        with open(path, "w") as out:
            json.dump(d, out, indent=1)
        lists.setdefault(target, []).append(path)
    for target, paths in lists.items():
        with open(os.path.join(work, target + ".txt"), "w") as out:
            out.write("\n".join(paths) + "\n")


def main():
    if sys.argv[1] == "--self-test":
        sys.exit(self_test(*sys.argv[2:4]))
    manifest_dir, root, work = sys.argv[1:4]
    docs = load(manifest_dir)
    split(docs, work)
    try:
        check(manifest_dir, root, docs)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as error:
        # A document too broken to cross-check; the schema checks say where.
        problem(manifest_dir, f"cross-checks stopped at a malformed document: {error!r}")
    for p in problems:
        print(f"validate: {p}")
    print(f"validate: {len(docs)} documents in {manifest_dir}; cross-checks: {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
