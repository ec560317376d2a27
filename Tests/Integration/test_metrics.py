"""Every instance serves Prometheus text at /metrics: it parses with the
reference parser, carries the expected families, and the figures move with
traffic (requests, commands, Kafka records, PostgreSQL queries, read models,
expiry jobs). Labels stay bounded: no session ids, no room ids."""
import re
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from admin_support import admin_url
from geochat_support.protocol import chat, create, http, messages, say, start, unique_topic
from geochat_support.waiting import wait_until

SERVICES = ["GATEWAY_URLS", "SESSION_URLS", "ROOMS_URLS", "MESSAGING_URLS", "EXPIRY_URLS"]


def scrape(url):
    url = admin_url(url)  # a gateway's /metrics is on its operators' listener
    """{(sample name, sorted label items): value} of one instance, and its family types."""
    response = http(url + "/metrics")
    assert response.status == 200, response
    assert response.headers.get("Content-Type", "").startswith("text/plain"), response.headers
    samples, types = {}, {}
    for family in text_string_to_metric_families(response.text):
        types[family.name] = family.type
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples, types


def total(samples, name, **labels):
    """The sum of a sample over every label set that includes `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= set(ls))


def scrape_all(urls):
    summed = {}
    for url in urls:
        samples, _ = scrape(url)
        for key, value in samples.items():
            summed[key] = summed.get(key, 0) + value
    return summed


def instances(stack, key):
    return stack[key].split()


def test_every_instance_serves_parseable_metrics(stack):
    # Some traffic first: a rooms instance, say, consumes nothing until a command or an event comes.
    gateway = stack["gateways"][0]
    session = start(gateway)
    say(gateway, session, create(gateway, session, 0.2, 0.3, 8, unique_topic())["id"], "metrics warm-up")
    for key in SERVICES:
        for url in instances(stack, key):
            samples, types = scrape(url)
            assert types.get("geochat_process_resident_memory_bytes") == "gauge", (url, sorted(types))
            assert total(samples, "geochat_process_resident_memory_bytes") > 1_000_000, url
            # Every service produces (events, replies or its readiness ping) and consumes;
            # a family appears with its first sample, and the lag with its first sampling (2 s).
            wait_until(lambda: {"geochat_kafka_produced", "geochat_kafka_consumed", "geochat_kafka_consumer_lag"}
                       <= set(scrape(url)[1]), timeout=15, message=f"kafka families on {url}")
            samples, types = scrape(url)
            assert types["geochat_kafka_produced"] == "counter", url
            assert types["geochat_kafka_consumer_lag"] == "gauge", url
            assert total(samples, "geochat_kafka_produced_total") > 0, url
            assert total(samples, "geochat_kafka_consumed_total") > 0, url


def test_metrics_move_with_traffic(stack):
    gateway = stack["gateways"][0]
    before_gw, _ = scrape(gateway)
    before_messaging = scrape_all(instances(stack, "MESSAGING_URLS"))
    before_rooms = scrape_all(instances(stack, "ROOMS_URLS"))
    before_session = scrape_all(instances(stack, "SESSION_URLS"))

    session = start(gateway)
    room = create(gateway, session, 0.3, 0.4, 9, unique_topic())["id"]
    say(gateway, session, room, "metrics one")
    polls = 7
    for _ in range(polls):
        messages(gateway, room, past=0)
    chat(gateway, cmd="chats", lon1=0.2, lat1=0.3, lon2=0.4, lat2=0.5, minz=6, maxz=12)
    assert http(gateway + "/chat.php?v=5&cmd=nonsense").status == 400

    after_gw, types = scrape(gateway)
    delta = lambda name, **labels: total(after_gw, name, **labels) - total(before_gw, name, **labels)
    assert delta("geochat_http_requests_total", command="messages") >= polls
    assert delta("geochat_http_requests_total", command="say") >= 1
    assert delta("geochat_http_requests_total", command="start") >= 1
    assert delta("geochat_http_requests_total", command="invalid") >= 1
    assert delta("geochat_http_request_errors_total", code="unknown_command") >= 1
    assert types["geochat_http_request_duration_seconds"] == "histogram"
    assert delta("geochat_http_request_duration_seconds_count", command="messages") >= polls
    assert delta("geochat_http_request_duration_seconds_bucket", command="messages", le="+Inf") >= polls
    assert delta("geochat_request_duration_seconds_count", topic="geochat.messaging.commands") >= 1
    # The create; a say's `joinBySaying` is posted one way, not a request.
    assert delta("geochat_request_duration_seconds_count", topic="geochat.rooms.commands") >= 1
    assert total(after_gw, "geochat_gateway_sessions") >= 1
    assert total(after_gw, "geochat_gateway_rooms_loaded") >= 1
    assert total(after_gw, "geochat_gateway_rooms_indexed") >= 1, "chats are answered from the gateway's index"
    assert total(after_gw, "geochat_gateway_presence_sessions") >= 1
    wait_until(lambda: total(scrape(gateway)[0], "geochat_kafka_consumed_total", topic="geochat.messages.events")
               > total(before_gw, "geochat_kafka_consumed_total", topic="geochat.messages.events"),
               message="the gateway's event feed counts the stored message")

    after_messaging = scrape_all(instances(stack, "MESSAGING_URLS"))
    moved = lambda after, before, name, **labels: total(after, name, **labels) - total(before, name, **labels)
    assert moved(after_messaging, before_messaging, "geochat_commands_total", command="say") >= 1
    assert moved(after_messaging, before_messaging, "geochat_command_duration_seconds_count", command="say") >= 1
    assert moved(after_messaging, before_messaging, "geochat_pg_query_duration_seconds_count") >= 1
    assert total(after_messaging, "geochat_pg_pool_max_connections") > 0
    assert moved(after_messaging, before_messaging, "geochat_kafka_produced_total", topic="geochat.messages.events") >= 1
    assert moved(after_messaging, before_messaging, "geochat_command_wait_seconds_count", command="say") >= 1, \
        "the command's time on its way is measured"

    after_rooms = scrape_all(instances(stack, "ROOMS_URLS"))
    assert moved(after_rooms, before_rooms, "geochat_commands_total", command="create") >= 1
    wait_until(lambda: moved(scrape_all(instances(stack, "ROOMS_URLS")), before_rooms, "geochat_commands_total",
                             command="joinBySaying") >= 1,
               message="the say joined its author through the rooms service")
    assert moved(after_rooms, before_rooms, "geochat_commands_total", command="region") == 0, \
        "a loaded gateway never asks the rooms service for a region"
    after_session = scrape_all(instances(stack, "SESSION_URLS"))
    assert moved(after_session, before_session, "geochat_commands_total", command="start") >= 1


def test_expiry_reports_job_progress(stack):
    url = instances(stack, "EXPIRY_URLS")[0]
    before = total(scrape(url)[0], "geochat_expiry_jobs_started_total")
    # deploy/test.sh runs expiry every 2 s (GEOCHAT_EXPIRY_INTERVAL_S=2).
    wait_until(lambda: total(scrape(url)[0], "geochat_expiry_jobs_started_total") > before, timeout=20,
               message="an expiry run is counted")
    samples, types = scrape(url)
    assert types.get("geochat_expiry_job_rooms_examined") == "gauge"
    assert total(samples, "geochat_expiry_job_running") in (0, 1)


def test_labels_carry_no_ids(stack):
    """Session ids (26 chars of 0-9a-v) and room ids never appear as label values."""
    gateway = stack["gateways"][0]
    session = start(gateway)
    room = create(gateway, session, 0.31, 0.41, 9, unique_topic())["id"]
    messages(gateway, room, past=0, sessionid=session)
    for key in SERVICES:
        for url in instances(stack, key):
            text = http(admin_url(url) + "/metrics").text
            assert session not in text, url
            for labels in re.findall(r"\{([^}]*)\}", text):
                for name, value in re.findall(r'(\w+)="([^"]*)"', labels):
                    assert not re.fullmatch(r"[0-9a-v]{26}", value), (url, name, value)
                    assert name == "le" or value != str(room), (url, name, value)
