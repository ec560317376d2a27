"""Fixtures for the integration tests: they drive the legacy HTTP protocol
against a real stack (gateways, services, PostgreSQL, Kafka) that
deploy/test.sh starts and describes in the file GEOCHAT_STACK_ENV. The
protocol client, psql access and waiting live in geochat_support (tools/,
installed into .venv by deploy/install.sh)."""
import os

import pytest

# The support package's asserts (check_xml, start, …) report their operands like a test's own.
pytest.register_assert_rewrite("geochat_support")

from geochat_support.stack import read_stack_env  # noqa: E402
import admin_support  # noqa: E402
from log_scan import session_id_leaks  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "disrupts_dependencies: stops and restarts Kafka or PostgreSQL under the whole stack")
    config.addinivalue_line(
        "markers", "restarts_the_broker: stops the local broker, which loses every topic and record (Tansu keeps "
        "them in memory); the `kafka` profile is for clusters that keep them, so such a test runs on `tansu` only")


def stack_profile():
    path = os.environ.get("GEOCHAT_STACK_ENV")
    return read_stack_env(path).get("KAFKA_PROFILE", "tansu") if path and os.path.exists(path) else "tansu"


def pytest_collection_modifyitems(items):
    """Tests that stop Kafka or PostgreSQL run after the others, whatever their
    file names: the stack recovers by itself (those tests check it through every
    gateway), but a recovery their checks do not cover (expiry's, once) would
    otherwise surface as a failure of whichever test came next."""
    items.sort(key=lambda item: item.get_closest_marker("disrupts_dependencies") is not None)
    if stack_profile() == "kafka":
        skip = pytest.mark.skip(reason="the kafka profile does not survive a broker that forgets its topics")
        for item in items:
            if item.get_closest_marker("restarts_the_broker"):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def stack():
    """stack.env as a dict, plus "gateways": the list of gateway URLs."""
    if not os.environ.get("GEOCHAT_STACK_ENV"):
        pytest.fail("GEOCHAT_STACK_ENV is not set: run the integration tests through deploy/test.sh")
    env = read_stack_env(os.environ["GEOCHAT_STACK_ENV"])
    env["gateways"] = env["GATEWAY_URLS"].split()
    env["admin_gateways"] = env["GATEWAY_ADMIN_URLS"].split()
    assert len(env["gateways"]) >= 2, "the integration tests need two gateways"
    admin_support.ADMIN_OF.update(zip(env["gateways"], env["admin_gateways"]))
    return env


@pytest.fixture(scope="session", autouse=True)
def no_session_ids_in_logs_after_the_last_test(stack):
    """After the last test, whichever it is: no full session id issued on this stack appears in its logs.
    A leak fails the run as an error in the teardown of the last test (test_no_secrets_in_logs.py checks
    its own traffic wherever it runs)."""
    yield
    leaks, _ = session_id_leaks(stack, admin_support.ISSUED_PASSWORDS)
    assert not leaks, "full session ids in logs:\n" + "\n".join(leaks[:10])


@pytest.fixture
def browsers():
    """Headless Chromium browsers for the page tests (web_support.py), quit at the end of the test."""
    from web_support import Browsers
    started = Browsers()
    try:
        yield started
    finally:
        started.quit()
