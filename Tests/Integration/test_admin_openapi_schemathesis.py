"""The admin API (operators' listener) against its own OpenAPI document, with schemathesis (PyPI), as
test_openapi_schemathesis.py does for the public API (issue 41): no 5xx, every status, content type,
header and body as documented.

Reads get valid and invalid requests. Changes get invalid ones only: each must be refused and change
nothing (the stack is shared with the other tests, so valid generated changes — removing rooms, ending
sessions, bans, settings — are left to the tests that check their effects: test_admin*.py). Logging in
and out are left out (a generated logout would end the token the run uses; test_admin.py covers both),
and so is starting an expiry run (test_admin_expiry.py)."""
import json
import os
import subprocess
import sys

import pytest

from admin_support import admin_url, bootstrap_admin, login
from geochat_support.protocol import http

CHECKS = ",".join([
    "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance",
    "response_headers_conformance",
])
NOT_GENERATED = ["login", "logout", "startExpiryRun"]


@pytest.fixture(scope="module")
def token(stack):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    return login(stack["gateways"][0], name, password)


def schemathesis(document, base, token, *options):
    tool = os.path.join(os.path.dirname(sys.executable), "schemathesis")
    excluded = [arg for op in NOT_GENERATED for arg in ("--exclude-operation-id", op)]
    return subprocess.run(
        [tool, "run", str(document), "--url", base, "-H", f"Authorization: Bearer {token}", *excluded, *options,
         "--phases", "examples,coverage,fuzzing",
         "--max-examples", "10", "--request-timeout", "10", "--generation-deterministic", "--no-color"],
        capture_output=True, text=True, timeout=600)


def test_the_admin_api_conforms_to_its_openapi_document(stack, token, tmp_path):
    base = admin_url(stack["gateways"][0]) + "/admin"
    answer = http(base + "/openapi.json")
    assert answer.status == 200, answer
    document = tmp_path / "admin-openapi.json"
    document.write_text(json.dumps(json.loads(answer.body)))

    reads = schemathesis(document, base, token, "--include-method", "GET", "--checks", CHECKS)
    assert reads.returncode == 0, reads.stdout[-12000:] + reads.stderr[-2000:]
    changes = schemathesis(document, base, token, "--exclude-method", "GET", "--mode", "negative",
                           "--checks", CHECKS + ",negative_data_rejection")
    assert changes.returncode == 0, changes.stdout[-12000:] + changes.stderr[-2000:]
