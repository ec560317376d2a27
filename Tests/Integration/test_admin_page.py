"""The admin page (web/admin/, issue 41) in headless Chromium, on the operators' listener of one gateway,
through every action an operator has: log in (a wrong password said in words), find a room by its topic
and on the map, open one by id, read its latest messages, remove one message, remove all of a sender's
in one room and then everywhere, change the room (topic, place, zoom) and remove it, find sessions by
nickname, rename one, end one, ban one and lift it, ban a nickname and lift it, read the audit log,
log out. Each change is checked where users meet it: phones polling the other gateway, its JSON API.
Accessibility: every control named, and axe-core with no serious or critical violation. The public
listener does not serve the page.

Helpers: web_support.py (browsers, axe), admin_support.py (the admin account)."""
import http.client
import types
import urllib.parse

import pytest

from admin_support import admin_url, api, bootstrap_admin, login
import api_support
from api_support import call
from geochat_support.protocol import chat, create, messages, say_as_a_phone, start, unique_nick, unique_topic
from geochat_support.waiting import wait_until
from web_support import ACCESSIBLE_NAMES, Page, assert_accessible_by_axe, assert_no_script_errors

REASON = "page test " + unique_nick()


@pytest.fixture(scope="module")
def admin(stack):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    return {"name": name, "password": password}


class AdminPage(Page):
    """The page as an operator drives it: clicks and typing, waits on what the page shows."""

    def __init__(self, driver, gateway):
        super().__init__(driver)
        self.url = admin_url(gateway) + "/admin/ui/"

    def open(self):
        self.driver.get(self.url)
        self.wait(lambda p: p.js("return !!(window.geochatAdmin && window.L)"), "the admin script runs")

    def type(self, element_id, text):
        box = self.by_id(element_id)
        box.clear()
        box.send_keys(text)
        # Keys typed while the page moves the focus elsewhere are lost: say so here, not at the next step.
        assert box.get_attribute("value") == text, f"{element_id} holds {box.get_attribute('value')!r}, not {text!r}"

    def open_room_by_id(self, room, message):
        """Opens a room by its id and waits for the whole of it: shown, its messages loaded, the focus on
        its heading (the page moves the focus there last; keys typed before that would be lost)."""
        self.type("room-id", str(room))
        self.css("#room-open button")[0].click()
        self.wait(lambda p: p.room_open() == str(room)
                  and p.js("return document.activeElement && document.activeElement.id") == "room-head", message)

    def log_in(self, name, password):
        self.type("login-name", name)
        self.type("login-password", password)
        self.by_id("login-go").click()

    def confirm(self, reason=REASON, value=None):
        """Answers the confirmation dialog: the new value (a nickname) if asked, the reason, then Confirm."""
        self.wait(lambda p: p.js("return document.getElementById('confirm').open"), "the confirmation dialog opens")
        if value is not None:
            self.type("confirm-value", value)
        self.type("confirm-reason", reason)
        self.by_id("confirm-ok").click()
        self.wait(lambda p: not p.js("return document.getElementById('confirm').open"), "the dialog closes")

    def room_open(self):
        return self.js("return document.getElementById('room-section').dataset.room || null")

    def shown_messages(self):
        return self.js("""return Array.from(document.querySelectorAll('#messages li[data-id]'))
                          .map((li) => [Number(li.dataset.id), li.querySelector('.text').textContent])""")

    def message_button(self, message, label_start):
        return self.css(f'#messages li[data-id="{message}"] button[aria-label^="{label_start}"]')[0]

    def row_of(self, table, attribute, value):
        rows = self.css(f'#{table} tbody tr[data-{attribute}="{value}"]')
        return rows[0] if rows else None

    def reload_messages(self):
        before = self.js("return document.getElementById('room-section').dataset.messagesLoaded || ''")
        self.by_id("messages-refresh").click()
        self.wait(lambda p: p.js("return document.getElementById('room-section').dataset.messagesLoaded || ''")
                  != before, "the messages reload")


def phone_ids(gateway, room):
    return [m["id"] for m in messages(gateway, room)]


def test_an_operator_does_everything_from_the_admin_page(stack, admin, browsers):
    a, b = stack["gateways"][:2]
    # A room with a spammer and a neighbour, and a second room where the spammer also wrote.
    spammer, neighbour = unique_nick(), unique_nick()
    spammer_session, neighbour_session = start(b, spammer), start(b, neighbour)
    topic = unique_topic()
    room = create(b, spammer_session, 0.9113, 0.6521, 12, topic)["id"]
    other = create(b, spammer_session, 0.9114, 0.6522, 12, unique_topic())["id"]
    for session, text in ((neighbour_session, "hello all"), (spammer_session, "buy now"),
                          (neighbour_session, "an insult"), (spammer_session, "buy more")):
        say_as_a_phone(b, session, room, text)
    say_as_a_phone(b, spammer_session, other, "buy here too")
    say_as_a_phone(b, neighbour_session, other, "stop it")

    page = AdminPage(browsers.page().driver, a)
    page.open()
    assert page.by_id("login-section").is_displayed() and not page.by_id("console").is_displayed()

    # A wrong password is said in words, and nothing opens.
    page.log_in(admin["name"], "not the password at all")
    page.wait(lambda p: p.status_is_error and p.status, "a refused login is said")
    assert not page.by_id("console").is_displayed()
    page.log_in(admin["name"], admin["password"])
    page.wait(lambda p: p.js("return document.body.dataset.state") == "in", "logged in")
    assert admin["name"] in page.by_id("who").text

    # Find the room by its topic: in the list, and as a pin on the map; the pin opens it.
    page.type("rooms-query", topic)
    page.css("#rooms-find button")[0].click()
    page.wait(lambda p: p.js("return document.getElementById('rooms-section').dataset.shown") == topic
              and p.row_of("rooms-table", "room", room), "the room found by its topic")
    pin = page.wait(lambda p: (p.css(f'.leaflet-marker-icon[data-room="{room}"]') or [None])[0], "its pin")
    assert pin.get_attribute("alt") == f"Room {room}: {topic}"
    pin.click()
    page.wait(lambda p: p.room_open() == str(room), "the pin opens the room")
    page.wait(lambda p: [t for _, t in p.shown_messages()] == ["hello all", "buy now", "an insult", "buy more"],
              "its latest messages, oldest first")
    assert f"Room {room}: {topic}" == page.by_id("room-head").text

    # By hand, always: every control has a name; the page's own status line is a live region.
    assert page.js(ACCESSIBLE_NAMES) == [], "controls without an accessible name"
    assert page.by_id("status").get_attribute("role") == "status"
    assert_accessible_by_axe(page)

    # Remove one message: gone from the page, and from phones polling the other gateway.
    page.message_button(3, "Remove message 3").click()
    page.confirm()
    page.wait(lambda p: [i for i, _ in p.shown_messages()] == [1, 2, 4], "message 3 gone from the page")
    wait_until(lambda: phone_ids(b, room) == [1, 2, 4], timeout=5, message="message 3 gone from phones on B")

    # All of the spammer's here (from one of their messages): the neighbour's stay, the other room's too.
    page.message_button(2, "Remove every message of the sender of message 2 by " + spammer + " in this").click()
    page.confirm()
    page.wait(lambda p: [i for i, _ in p.shown_messages()] == [1], "the spammer's gone from the room")
    wait_until(lambda: phone_ids(b, room) == [1], timeout=5, message="and from phones on B")
    assert [m["text"] for m in messages(b, other)] == ["buy here too", "stop it"], "the other room is untouched"

    # Open the other room by its id; remove the spammer's messages everywhere from there.
    page.open_room_by_id(other, "the other room, by id")
    page.wait(lambda p: len(p.shown_messages()) == 2, "the other room's messages")
    page.message_button(1, "Remove every message of the sender of message 1 by " + spammer + " in every").click()
    page.confirm()
    page.wait(lambda p: [t for _, t in p.shown_messages()] == ["stop it"], "the spammer's gone everywhere")
    wait_until(lambda: [m["text"] for m in messages(b, other)] == ["stop it"], timeout=5, message="on B")

    # Change the room: topic, place and zoom; the other gateway's JSON API answers it so.
    page.open_room_by_id(room, "back to the first room")
    new_topic = unique_topic()
    page.type("edit-topic", new_topic)
    page.type("edit-latitude", "-12.85")  # the Indian Ocean: near no other test's rooms
    page.type("edit-longitude", "75.2")
    page.type("edit-zoom", "10")
    page.type("edit-reason", REASON)
    page.by_id("room-save").click()
    page.wait(lambda p: p.by_id("room-head").text == f"Room {room}: {new_topic}", "the change shown")

    def changed_on_b():
        answer = call(b, "GET", f"/rooms/{room}")
        shown = answer.json.get("room", answer.json) if answer.status == 200 else {}
        return shown.get("topic") == new_topic and shown.get("zoom") == 10 \
            and abs(shown["latitude"] + 12.85) < 1e-4 and abs(shown["longitude"] - 75.2) < 1e-4
    wait_until(changed_on_b, timeout=5, message="the change reaches gateway B")

    # Sessions: find by nickname, rename one, end one, ban one and lift the ban.
    renamed, ended, banned = unique_nick(), start(b, unique_nick()), None
    page.type("sessions-nick", neighbour)
    page.css("#sessions-find button")[0].click()
    page.wait(lambda p: p.row_of("sessions-table", "nick", neighbour), "the neighbour's session found")
    page.css(f'#sessions-table tr[data-nick="{neighbour}"] button[aria-label^="Rename"]')[0].click()
    page.confirm(value=renamed)
    wait_until(lambda: api(a, "GET", f"sessions?nick={renamed}", token=token_of(page)).json["sessions"],
               timeout=5, message="the session renamed")
    assert say_after(b, neighbour_session, room) == 200, "a renamed session goes on"

    ended_nick = api(a, "GET", "sessions?limit=1000", token=token_of(page)).json["sessions"]
    ended_nick = next(s["nick"] for s in ended_nick if s["id"] == ended)
    page.type("sessions-nick", ended_nick)
    page.css("#sessions-find button")[0].click()
    page.wait(lambda p: p.row_of("sessions-table", "nick", ended_nick), "the session to end found")
    page.css(f'#sessions-table tr[data-nick="{ended_nick}"] button[aria-label^="End"]')[0].click()
    page.confirm()
    wait_until(lambda: say_after(b, ended, room) == 403, timeout=5, message="the ended session refused on B")

    banned = spammer
    page.type("sessions-nick", banned)
    page.css("#sessions-find button")[0].click()
    page.wait(lambda p: p.row_of("sessions-table", "nick", banned), "the spammer's session found")
    page.css(f'#sessions-table tr[data-nick="{banned}"] button[aria-label^="Ban"]')[0].click()
    page.confirm()
    ban_key = f"session:{spammer_session}"
    page.wait(lambda p: p.row_of("bans-table", "ban", ban_key), "the session's ban listed")
    wait_until(lambda: say_after(b, spammer_session, room) == 403, timeout=5, message="the banned session refused")
    page.css(f'#bans-table tr[data-ban="{ban_key}"] button')[0].click()
    page.wait(lambda p: not p.row_of("bans-table", "ban", ban_key), "the ban lifted")
    wait_until(lambda: say_after(b, spammer_session, room) == 200, timeout=5, message="the session speaks again")

    # Ban a nickname from the form, and lift it.
    nick_banned = unique_nick()
    page.type("ban-nick", nick_banned)
    page.type("ban-reason", REASON)
    page.css("#ban-form button")[0].click()
    page.wait(lambda p: p.row_of("bans-table", "ban", "nick:" + nick_banned), "the nickname's ban listed")
    wait_until(lambda: chat(b, v=5, cmd="start", nick=nick_banned).status == 403, timeout=5,
               message="the banned nickname cannot start")
    page.css(f'#bans-table tr[data-ban="nick:{nick_banned}"] button')[0].click()
    page.wait(lambda p: not p.row_of("bans-table", "ban", "nick:" + nick_banned), "the nickname's ban lifted")

    # Remove the other room: gone from the other gateway.
    page.open_room_by_id(other, "the other room opens")
    page.by_id("room-remove").click()
    page.confirm()
    page.wait(lambda p: p.room_open() is None and "removed" in p.status, "the room removed")
    wait_until(lambda: call(b, "GET", f"/rooms/{other}").status == 404, timeout=5, message="gone on B")

    # The audit log: every change of this test, with its reason.
    page.by_id("audit-action").clear()
    loaded = page.js("return document.getElementById('audit-section').dataset.loaded")
    page.css("#audit-find button")[0].click()
    page.wait(lambda p: p.js("return document.getElementById('audit-section').dataset.loaded") != loaded,
              "the audit log reloads")
    rows = page.js("return Array.from(document.querySelectorAll('#audit-table tbody tr'))"
                   ".map((r) => [r.dataset.action, r.textContent])")
    with_reason = {action for action, text in rows if REASON in text}
    # Every change of this test, with the reason given on the page (lifting a ban takes none).
    assert {"remove-messages", "change-room", "rename-session", "end-session", "ban", "remove-room"} <= with_reason
    assert any(action == "unban" for action, _ in rows)
    assert all(spammer_session not in text for _, text in rows), "a session id is a bearer secret: prefixes only"
    assert_accessible_by_axe(page)
    assert_no_script_errors(page)

    # Log out: the token is revoked, the login shows again.
    token = token_of(page)
    page.by_id("logout").click()
    page.wait(lambda p: p.by_id("login-section").is_displayed(), "the login shows again")
    assert api(a, "GET", "rooms", token=token).status == 401, "the token is revoked"


def test_the_page_is_the_operators_listeners_only(stack):
    a = stack["gateways"][0]
    page = http_get(admin_url(a) + "/admin/ui/")
    assert page.status == 200 and b"<title>GeoChat admin</title>" in page.body
    policy = page.headers.get("Content-Security-Policy", "")
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert http_get(admin_url(a) + "/admin/ui").status == 308, "without the slash: sent to it"
    assert http_get(admin_url(a) + "/admin/ui/admin.js").status == 200
    assert http_get(admin_url(a) + "/admin/ui/map/basemap.js").status == 200
    assert http_get(admin_url(a) + "/admin/ui/../README.md").status == 404
    # The public listener serves neither the page nor its scripts.
    for path in ("/admin/ui/", "/map/admin/admin.js", "/map/admin/index.html"):
        assert http_get(a + path).status == 404, path


def token_of(page):
    return page.js("return sessionStorage.getItem('geochat-admin-token')")


def say_after(gateway, session, room):
    return chat(gateway, cmd="say", sessionid=session, chatid=room, msg="still here?").status


def http_get(url):
    """One GET that does not follow redirects: (status, headers, body)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", parts.path + ("?" + parts.query if parts.query else ""))
        response = connection.getresponse()
        return types.SimpleNamespace(status=response.status, headers=response.headers, body=response.read())
    finally:
        connection.close()


def test_a_removed_message_leaves_the_web_maps_screen_live_and_on_resuming(stack, admin, browsers):
    """Issue 41: a browser showing a message an operator removes takes it off the screen (`event: removed`),
    and one whose stream was away when it happened is told when it resumes from its last id."""
    a, b = stack["gateways"][:2]
    token = login(a, admin["name"], admin["password"])
    poster = api_support.start(b)
    latitude, longitude = -14.2, 78.4  # the Indian Ocean: near no other test's rooms
    room = api_support.create(b, poster, latitude, longitude, 12, unique_topic())["id"]
    for text in ("one", "two", "three"):
        api_support.say(b, poster, room, text)
    page = browsers.page(a)
    page.open(a, f"#map=13/{latitude:.5f}/{longitude:.5f}&room={room}")
    page.wait(lambda p: [t for _, t in p.messages()] == ["one", "two", "three"], "the three messages shown")
    page.live()

    assert api(b, "DELETE", f"rooms/{room}/messages/2?reason=spam", token=token).status == 200
    page.wait(lambda p: [t for _, t in p.messages()] == ["one", "three"], "gone from the screen", timeout=5)

    # Away: the page's stream closed; a removal meanwhile; the page listens again from its last id.
    page.js("const c = geochat.chats.current; c.source.close(); c.source = null;")
    assert api(b, "DELETE", f"rooms/{room}/messages/3?reason=spam", token=token).status == 200
    wait_until(lambda: [m["id"] for m in messages(a, room)] == [1], timeout=5, message="removed on A")
    page.js("geochat.chats.listen(geochat.chats.current)")
    page.wait(lambda p: [t for _, t in p.messages()] == ["one"], "told on resuming", timeout=5)
    assert_no_script_errors(page)

