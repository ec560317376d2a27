"""The live API against its own OpenAPI document, with schemathesis (PyPI):
generated valid and invalid requests for every operation; no 5xx, every status,
content type, header and body as documented, and invalid input refused.

Two operations are left to test_api.py: the push stream (it never ends, which
a request-per-example tool cannot read) and ending the session (it would end
the one session the other operations run under). The long poll's `wait` is
left out of the copy of the document given to schemathesis (test_api.py tests
it), so generated waits of up to 25 s do not make the run long."""
import json
import os
import subprocess
import sys

from api_support import call, start

CHECKS = ",".join([
    "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance",
    "response_headers_conformance", "negative_data_rejection",
])


def test_the_api_conforms_to_its_openapi_document(stack, tmp_path):
    gateway = stack["gateways"][0]
    document = call(gateway, "GET", "/openapi.json").json
    assert document["openapi"] == "3.1.0"
    poll = document["paths"]["/rooms/{room}/messages"]["get"]
    poll["parameters"] = [p for p in poll["parameters"] if p.get("name") != "wait"]
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps(document))
    session = start(gateway, "Schemathesis")
    schemathesis = os.path.join(os.path.dirname(sys.executable), "schemathesis")
    run = subprocess.run(
        [schemathesis, "run", str(path), "--url", gateway + "/api/v1", "-H", f"Authorization: Bearer {session}",
         "--exclude-operation-id", "events", "--exclude-operation-id", "endSession", "--checks", CHECKS,
         "--max-examples", "30", "--request-timeout", "10", "--generation-deterministic", "--no-color"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-12000:] + run.stderr[-2000:]
    assert "Tested: 13" in run.stdout, run.stdout[-3000:]
