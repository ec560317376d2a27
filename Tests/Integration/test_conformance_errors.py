"""Conformance, contract 5, 6 and 7: every bad input gets its code and status,
with a text for people, and changes nothing. Sizes are bounded: a huge query
string or header is answered with a contract error or a clean close, and the
gateway carries on. Requests alternate between the two gateways."""
import urllib.parse

import pytest

from geochat_support.db import count
from geochat_support.protocol import check_xml, create, http, raw_chat, start, unique_topic
from conformance import Alternating, element, raw_request

COUNTS = {
    "sessions": "SELECT count(*) FROM session.sessions",
    "session_versions": "SELECT coalesce(sum(version), 0) FROM session.sessions",
    "rooms": "SELECT count(*) FROM rooms.rooms",
    "messages": "SELECT count(*) FROM messaging.messages",
    "memberships": "SELECT count(*) FROM rooms.memberships",
}


def snapshot(stack):
    return {name: count(stack, query) for name, query in COUNTS.items()}


@pytest.fixture(scope="module")
def world(stack):
    g = stack["gateways"][0]
    session = start(g)
    room = create(g, session, 0.3141, 0.5926, 10, unique_topic())["id"]
    return {"s": session, "r": room}


def check_error(response, status, code, context):
    assert response.status == status, (context, response)
    root = element(response, "error")
    assert root.getAttribute("code") == code, (context, response)
    assert list(root.attributes.keys()) == ["code"]
    assert root.firstChild is not None and root.firstChild.data.strip(), "an error has a text for people"


def cases(s, r):
    q = urllib.parse.quote
    kib4 = "a" * 4096
    return [
        # version and command
        ("v=4&cmd=start&nick=Ann", 400, "unsupported_version"),
        ("v=&cmd=start&nick=Ann", 400, "unsupported_version"),
        ("v=5", 400, "missing_param"),
        ("", 400, "missing_param"),
        ("v=5&cmd=", 400, "unknown_command"),
        ("v=5&cmd=dance", 400, "unknown_command"),
        ("v=5&cmd=START&nick=Ann", 400, "unknown_command"),
        ("v=5&cmd=start%20&nick=Ann", 400, "unknown_command"),
        ("v=4&cmd=dance", 400, "unsupported_version"),  # version is checked first
        # nicknames: empty is invalid_nick (not empty), missing is missing_param
        ("cmd=start", 400, "missing_param"),
        ("cmd=start&nick=", 400, "invalid_nick"),
        ("cmd=start&nick=" + "n" * 33, 400, "invalid_nick"),
        ("cmd=start&nick=" + "n" * 5000, 413, "too_large"),
        ("cmd=start&nick=Ann&nick=Bob", 400, "bad_param"),
        ("cmd=start&nick=%FF", 400, "bad_param"),
        # chats: numbers
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=1", 400, "missing_param"),
        ("cmd=chats&lat1=0&lon2=1&lat2=1&minz=1&maxz=2", 400, "missing_param"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=5&maxz=4", 400, "bad_param"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=4&maxz=18", 400, "bad_param"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=-1&maxz=3", 400, "bad_param"),
    ] + [
        (f"cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz={q(z)}&maxz=10", 400, "bad_param")
        for z in ("2.5", "2.0", "1e1", " 3", "3 ", "0x3", "", "three", "99999999999999999999")
    ] + [
        (f"cmd=chats&lon1={q(c)}&lat1=0&lon2=1&lat2=1&minz=1&maxz=2", 400, "bad_param")
        for c in ("nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-0.1", "1.0000001", "2", "0x1p-3", "0,5", "",
                  " 0.5", "0.5 ", "abc", "--1", "1e", ".", "+-1")
    ] + [
        (f"cmd=chats&lon1=0&lat1={q(c)}&lon2=1&lat2=1&minz=1&maxz=2", 400, "bad_param") for c in ("nan", "1.5", "-1")
    ] + [
        # create
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3", 400, "missing_param"),
        (f"cmd=create&sessionid={s}&lat=0.5&z=3&topic=x", 400, "missing_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&topic=x", 400, "missing_param"),
        (f"cmd=create&lon=0.5&lat=0.5&z=3&topic=x", 400, "missing_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3&topic=", 400, "empty"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3&topic=%20%09%0A", 400, "empty"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3&topic=" + "t" * 101, 400, "too_long"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=18&topic=x", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=&topic=x", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=inf&lat=0.5&z=3&topic=x", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&longitude=0.6&lat=0.5&z=3&topic=x", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&latitude=0.50001&z=3&topic=x", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3&z=4&topic=x", 400, "bad_param"),
        ("cmd=create&sessionid=" + "0" * 26 + "&lon=0.5&lat=0.5&z=3&topic=x", 403, "invalid_session"),
        ("cmd=create&sessionid=short&lon=0.5&lat=0.5&z=3&topic=x", 403, "invalid_session"),
        ("cmd=create&sessionid=&lon=0.5&lat=0.5&z=3&topic=x", 403, "invalid_session"),
        (f"cmd=create&sessionid={s.upper()}&lon=0.5&lat=0.5&z=3&topic=x", 403, "invalid_session"),
        # join / leave / participants
        (f"cmd=join&sessionid={s}", 400, "missing_param"),
        (f"cmd=join&sessionid={s}&chatid=", 400, "bad_param"),
        (f"cmd=join&sessionid={s}&chatid=1.0", 400, "bad_param"),
        (f"cmd=join&sessionid={s}&chatid=987654321", 404, "no_such_chat"),
        (f"cmd=join&sessionid={s}&chatid=-5", 404, "no_such_chat"),
        (f"cmd=leave&sessionid={s}&chatid=987654321", 404, "no_such_chat"),
        ("cmd=leave&sessionid=" + "v" * 26 + f"&chatid={r}", 403, "invalid_session"),
        ("cmd=participants&chatid=abc", 400, "bad_param"),
        ("cmd=participants&chatid=987654321", 404, "no_such_chat"),
        # say
        (f"cmd=say&sessionid={s}&chatid={r}", 400, "missing_param"),
        (f"cmd=say&sessionid={s}&msg=hi", 400, "missing_param"),
        (f"cmd=say&chatid={r}&msg=hi", 400, "missing_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=", 400, "empty"),
        (f"cmd=say&sessionid={s}&chatid={r}&text=%E3%80%80", 400, "empty"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + "m" * 501, 400, "too_long"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + "m" * 600, 400, "too_long"),
        # the 4 KiB bound comes first, counted in bytes after decoding
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + "m" * 4097, 413, "too_large"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + "m" * 5120, 413, "too_large"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + "%C3%BC" * 2049, 413, "too_large"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + "%C3%BC" * 2048, 400, "too_long"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=hi&cachebuster=" + "x" * 4097, 413, "too_large"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=hi&" + "n" * 4097 + "=1", 413, "too_large"),
        (f"cmd=say&sessionid={s}&chatid=987654321&msg=" + "m" * 5000, 413, "too_large"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + kib4 + "&unused=" + kib4, 400, "too_long"),
        # conflicts
        (f"cmd=say&sessionid={s}&chatid={r}&msg=a&text=b", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&message=a&text=b", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=a&msg=b", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&chatid={r + 1}&msg=a", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&sessionid={'0' * 26}&chatid={r}&msg=a", 400, "bad_param"),
        # encodings and characters
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%FF%FE", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%C3%28", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%C0%AF", 400, "bad_param"),          # overlong
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%ED%A0%80", 400, "bad_param"),       # a surrogate
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%F4%90%80%80", 400, "bad_param"),    # above U+10FFFF
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%E2%82", 400, "bad_param"),          # cut short
    ] + [
        (f"cmd=say&sessionid={s}&chatid={r}&msg=a{c}b", 400, "bad_param")
        for c in ("%00", "%01", "%08", "%0B", "%0C", "%1F", "%EF%BF%BE", "%EF%BF%BF")
    ] + [
        (f"cmd=say&sessionid={s}&chatid={r}&msg={broken}", 400, "bad_param")
        for broken in ("%", "a%", "%4", "%zz", "%G1", "%%41", "100%")
    ] + [
        (f"cmd=say&sessionid={s}&chatid={r}&msg=hi&bad%=1", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid=987654321&msg=hello", 404, "no_such_chat"),
        (f"cmd=say&sessionid={'0' * 26}&chatid={r}&msg=hello", 403, "invalid_session"),
        # nick
        (f"cmd=nick&sessionid={s}&nick=", 400, "invalid_nick"),
        (f"cmd=nick&sessionid={s}&nick=a%00", 400, "bad_param"),
        ("cmd=nick&sessionid=" + "0" * 26 + "&nick=Ann", 403, "invalid_session"),
        # messages
        ("cmd=messages", 400, "missing_param"),
        (f"cmd=messages&chatid={r}&limit=0", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&limit=-3", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&limit=", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&past=", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&past=1&past=2", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&sessionid=" + "0" * 26, 403, "invalid_session"),
    ]


def test_every_error_has_its_code_and_status_and_changes_nothing(stack, world):
    gw = Alternating(stack["gateways"])
    before = snapshot(stack)
    for query, status, code in cases(world["s"], world["r"]):
        check_error(raw_chat(gw(), query), status, code, query)
        # The same as a POST body.
        check_error(check_xml(http(gw() + "/chat.php", data=query)), status, code, "POST " + query)
    assert snapshot(stack) == before


def test_query_and_body_fine_print(stack, world):
    gw = Alternating(stack["gateways"])
    s, r = world["s"], world["r"]
    before = snapshot(stack)
    # The same name in query and body is not a conflict: the body wins.
    response = check_xml(http(gw() + f"/chat.php?cmd=messages&chatid=987654321", data=f"chatid={r}"))
    assert response.status == 200 and element(response, "messages").getAttribute("chatid") == str(r)
    # Repeated with different values within the query is bad_param even when the body has the name too.
    check_error(check_xml(http(gw() + f"/chat.php?cmd=messages&chatid=1&chatid=2", data=f"chatid={r}")),
                400, "bad_param", "repeat in query")
    check_error(check_xml(http(gw() + f"/chat.php?cmd=messages&chatid={r}", data="chatid=1&chatid=2")),
                400, "bad_param", "repeat in body")
    # Aliases split between query and body with different values conflict.
    check_error(check_xml(http(gw() + f"/chat.php?cmd=say&sessionid={s}&chatid={r}&msg=a", data="text=b")),
                400, "bad_param", "aliases across query and body")
    # A POST whose body is not a form carries no parameters.
    response = check_xml(http(gw() + "/chat.php", data="cmd=start&nick=Ann", headers={"Content-Type": "text/plain"}))
    check_error(response, 400, "missing_param", "text/plain body")
    # A body over 64 KiB is too_large; more than 64 parameters are too_large.
    body = "cmd=start&nick=Ann&" + "&".join(f"p{i}=" + "p" * 4000 for i in range(17))
    assert len(body) > 64 * 1024
    check_error(check_xml(http(gw() + "/chat.php", data=body)), 413, "too_large", "body over 64 KiB")
    many = "&".join(f"p{i}=1" for i in range(70))
    check_error(raw_chat(gw(), "cmd=start&nick=Ann&" + many), 413, "too_large", "70 parameters")
    # A value of exactly 4 KiB (after decoding) is fine for an unknown parameter.
    response = raw_chat(gw(), f"cmd=messages&chatid={r}&pad=" + "%41" * 4096)
    assert response.status == 200, response
    assert snapshot(stack) == before


def test_huge_requests_are_refused_without_harm(stack, world):
    gw = Alternating(stack["gateways"])
    r = world["r"]

    def healthy(g):
        response = raw_chat(g, f"cmd=messages&chatid={r}")
        assert response.status == 200, response

    host = gw().replace("http://", "")
    huge = [
        # 1 MB query string
        f"GET /chat.php?cmd=messages&chatid={r}&pad={'q' * 1_000_000} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode(),
        # a query just over the 64 KiB query bound, under the HTTP decoder's 80 KiB
        f"GET /chat.php?cmd=messages&chatid={r}&{'&'.join('p%d=%s' % (i, 'q' * 1100) for i in range(60))} HTTP/1.1\r\n"
        f"Host: {host}\r\n\r\n".encode(),
        # one 200 KB header
        f"GET /chat.php?cmd=messages&chatid={r} HTTP/1.1\r\nHost: {host}\r\nX-Big: {'h' * 200_000}\r\n\r\n".encode(),
        # 5000 small headers
        (f"GET /chat.php?cmd=messages&chatid={r} HTTP/1.1\r\nHost: {host}\r\n"
         + "".join(f"X-H{i}: v\r\n" for i in range(5000)) + "\r\n").encode(),
        # a 10 MB body announced and sent
        (f"POST /chat.php HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
         f"Content-Length: {10_000_000}\r\n\r\n").encode() + b"cmd=start&nick=Ann&pad=" + b"b" * 10_000_000,
        # a chunked body that goes on and on
        (f"POST /chat.php HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
         "Transfer-Encoding: chunked\r\n\r\n").encode() + b"".join(b"10000\r\n" + b"c" * 0x10000 + b"\r\n"
                                                                     for _ in range(40)) + b"0\r\n\r\n",
    ]
    for request in huge:
        for g in stack["gateways"]:
            status, body = raw_request(g, request)
            if status is not None:
                assert status in (400, 413, 414, 431), (status, body[:200])
                if body.startswith(b"<?xml"):
                    assert b'code="too_large"' in body or b'code="bad_param"' in body, body[:200]
            healthy(g)
