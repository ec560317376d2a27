"""The admin API (operators' listener) against its own OpenAPI document, with schemathesis (PyPI), as
test_openapi_schemathesis.py does for the public API (issue 41): no 5xx, every status, content type,
header and body as documented.

Reads get valid and invalid requests. Changes get invalid ones only — generated invalid data (the fuzzing
phase in negative mode; the examples and coverage phases send valid boundary values and the document's
examples in every mode) — and the audit log then shows that none was made: the stack is shared with the
other tests, so valid changes — removing rooms, ending sessions, bans, settings — are left to the tests
that check their effects (test_admin*.py). Logging in and out are left out (a generated logout
would end the token the run uses; test_admin.py covers both), and so is starting an expiry run
(test_admin_expiry.py)."""
import json
import os
import subprocess
import sys

import pytest

from admin_support import admin_url, api, bootstrap_admin, login
from geochat_support.protocol import http

CHECKS = ",".join([
    "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance",
    "response_headers_conformance",
])
NOT_GENERATED = ["login", "logout", "startExpiryRun"]


@pytest.fixture(scope="module")
def admin(stack):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    return name, login(stack["gateways"][0], name, password)


def schemathesis(document, base, token, *options):
    tool = os.path.join(os.path.dirname(sys.executable), "schemathesis")
    excluded = [arg for op in NOT_GENERATED for arg in ("--exclude-operation-id", op)]
    return subprocess.run(
        [tool, "run", str(document), "--url", base, "-H", f"Authorization: Bearer {token}", *excluded, *options,
         "--max-examples", "10", "--request-timeout", "10", "--generation-deterministic", "--no-color"],
        capture_output=True, text=True, timeout=600)


def without_examples(node):
    """The document without its examples, which are valid requests (schemathesis sends them in every mode)."""
    if isinstance(node, dict):
        return {k: without_examples(v) for k, v in node.items() if k not in ("examples", "example")}
    if isinstance(node, list):
        return [without_examples(v) for v in node]
    return node


def test_the_admin_api_conforms_to_its_openapi_document(stack, admin, tmp_path):
    name, token = admin
    base = admin_url(stack["gateways"][0]) + "/admin"
    answer = http(base + "/openapi.json")
    assert answer.status == 200, answer
    document = tmp_path / "admin-openapi.json"
    document.write_text(json.dumps(json.loads(answer.body)))
    changes_document = tmp_path / "admin-openapi-no-examples.json"
    changes_document.write_text(json.dumps(without_examples(json.loads(answer.body))))

    reads = schemathesis(document, base, token, "--include-method", "GET", "--phases", "examples,coverage,fuzzing",
                         "--checks", CHECKS)
    assert reads.returncode == 0, reads.stdout[-12000:] + reads.stderr[-2000:]
    changes = schemathesis(changes_document, base, token, "--exclude-method", "GET", "--mode", "negative",
                           "--phases", "fuzzing", "--checks", CHECKS + ",negative_data_rejection")
    assert changes.returncode == 0, changes.stdout[-12000:] + changes.stderr[-2000:]
    done = api(stack["gateways"][0], "GET", f"audit?actor={name}&outcome=ok&limit=1000", token=token)
    assert done.status == 200, done
    changed = [(e["action"], e["target"], e["detail"]) for e in done.json["entries"] if e["action"] != "login"]
    assert changed == [], "invalid requests changed something"
