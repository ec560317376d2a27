"""Splits GeoChat's Kubernetes manifests for the validators and checks what no
schema can: that the files agree with each other and with the code.

    python check_manifests.py MANIFEST_DIR REPO_ROOT WORK_DIR

Writes one JSON file per document under WORK_DIR and the lists validate.sh
hands to the validators: WORK_DIR/builtin.txt (for kubernetes-validate) and
WORK_DIR/schema-<name>.txt (for check-jsonschema with schemas/<name>.json).
Prints every problem found and exits 1 if there was one. Run by validate.sh.
"""

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
}
CUSTOM_GROUPS = {"kafka.strimzi.io", "postgresql.cnpg.io", "kustomize.config.k8s.io"}
CLUSTER_SCOPED = {"Namespace", "Kustomization"}
WORKLOADS = {"StatefulSet", "Deployment", "Job"}

problems = []


def problem(where, text):
    problems.append(f"{where}: {text}")


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
    manifest_dir, root, work = sys.argv[1:4]
    docs = load(manifest_dir)
    split(docs, work)
    try:
        check(manifest_dir, root, docs)
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        # A document too broken to cross-check; the schema checks say where.
        problem(manifest_dir, f"cross-checks stopped at a malformed document: {error!r}")
    for p in problems:
        print(f"validate: {p}")
    print(f"validate: {len(docs)} documents in {manifest_dir}; cross-checks: {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
