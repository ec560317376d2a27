"""Production settings reach the services (docs/operations.md, "Production"):
librdkafka properties from the environment reach the Kafka client, and a value
it refuses stops start-up with a clear line naming it; the services reach
PostgreSQL over TLS with the certificate checked (`verify-full`)."""
import os
import subprocess

from geochat_support.db import sql


def run_service(stack, binary, **environment):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOCHAT_")}
    env["LD_LIBRARY_PATH"] = os.path.join(stack["ROOT"], ".runtime", "lib")  # as deploy/lib.sh starts services
    env.update(environment)
    return subprocess.run([os.path.join(stack["BIN_DIR"], binary)], env=env, capture_output=True, text=True, timeout=60)


def test_a_refused_librdkafka_property_stops_start_up_naming_it(stack):
    run = run_service(stack, "geochat-rooms", GEOCHAT_KAFKA_BROKERS=stack["KAFKA_BROKERS"],
                      GEOCHAT_RDKAFKA_SECURITY_PROTOCOL="carrier-pigeon", GEOCHAT_RDKAFKA_SASL_PASSWORD="hunter2",
                      GEOCHAT_HTTP_PORT="1")
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "configuration refused" in output and "security.protocol=carrier-pigeon" in output, output
    assert "hunter2" not in output


def test_an_unknown_profile_or_an_unreadable_ca_stops_start_up(stack):
    run = run_service(stack, "geochat-rooms", GEOCHAT_KAFKA_PROFILE="redpanda", GEOCHAT_HTTP_PORT="1")
    assert run.returncode == 2 and "kafka.profile" in run.stdout + run.stderr
    run = run_service(stack, "geochat-rooms", GEOCHAT_KAFKA_BROKERS=stack["KAFKA_BROKERS"], GEOCHAT_PG_SSLMODE="verify-full",
                      GEOCHAT_PG_SSLROOTCERT="/nonexistent/ca.crt", GEOCHAT_HTTP_PORT="1")
    assert run.returncode == 2 and "pg.sslrootcert" in run.stdout + run.stderr, run.stdout + run.stderr


def test_every_service_connection_to_postgresql_is_tls(stack):
    rows = sql(stack, """
        SELECT s.ssl, count(*) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
        WHERE a.backend_type = 'client backend' AND a.datname = 'geochat' AND a.pid <> pg_backend_pid()
          AND a.application_name NOT LIKE 'psql%'
        GROUP BY s.ssl""")
    by_ssl = {ssl: int(n) for ssl, n in rows}
    assert by_ssl.get("t", 0) >= 5, f"the services' pools: {rows}"
    assert by_ssl.get("f", 0) == 0, f"plaintext connections: {rows}"


def test_a_missing_or_malformed_login_seal_key_stops_start_up(stack):
    """Gateways and session services seal admin passwords with a shared key; without one they do not start."""
    for binary in ("geochat-gateway", "geochat-session"):
        run = run_service(stack, binary, GEOCHAT_KAFKA_BROKERS=stack["KAFKA_BROKERS"], GEOCHAT_HTTP_PORT="1",
                          GEOCHAT_ADMIN_PORT="1")
        output = run.stdout + run.stderr
        assert run.returncode == 2 and "GEOCHAT_LOGIN_SEAL_KEY" in output, output
        run = run_service(stack, binary, GEOCHAT_KAFKA_BROKERS=stack["KAFKA_BROKERS"], GEOCHAT_HTTP_PORT="1",
                          GEOCHAT_ADMIN_PORT="1", GEOCHAT_LOGIN_SEAL_KEY="c2hvcnQtc2VjcmV0")
        output = run.stdout + run.stderr
        assert run.returncode == 2 and "not 32 bytes" in output, output
        assert "c2hvcnQtc2VjcmV0" not in output


def test_a_missing_operator_key_stops_start_up(stack):
    """Rooms and messaging check, expiry and admin gateways seal the removals only operators may send
    (OperatorSeal); without the key none of them starts."""
    seal = "q" * 43 + "="  # 32 bytes of base64
    for binary, extra in (("geochat-rooms", {}), ("geochat-messaging", {}), ("geochat-expiry", {}),
                          ("geochat-gateway", {"GEOCHAT_LOGIN_SEAL_KEY": seal, "GEOCHAT_ADMIN_PORT": "1"})):
        run = run_service(stack, binary, GEOCHAT_KAFKA_BROKERS=stack["KAFKA_BROKERS"], GEOCHAT_HTTP_PORT="1", **extra)
        output = run.stdout + run.stderr
        assert run.returncode == 2 and "GEOCHAT_OPERATOR_KEY" in output, (binary, output)


def test_the_stacks_postgresql_wants_a_password(stack):
    """The one-machine stack's PostgreSQL does not trust whoever reaches its port: without the
    password of <state>/pg.password a connection is refused; with it, it is let in."""
    password_file = stack.get("PG_PASSWORD_FILE", "")
    assert password_file and os.path.exists(password_file), "stack.sh made the password with the data folder"
    assert os.stat(password_file).st_mode & 0o077 == 0, "readable by its owner only"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    run = subprocess.run(["psql", "-h", stack["PG_HOST"], "-p", stack["PG_PORT"], "-U", "postgres", "-d", "geochat",
                          "-w", "-Atc", "SELECT 1"], env=env, capture_output=True, text=True, timeout=30)
    assert run.returncode != 0 and "password" in run.stderr, run.stderr
    assert sql(stack, "SELECT 1") == [["1"]]
