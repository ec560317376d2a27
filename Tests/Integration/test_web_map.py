"""The web map (web/, served by the gateways at `/`), end to end in headless Chromium, as people use it
(issue 29): chat between two browsers on the two gateways within a second, with a phone (the legacy
protocol) in the same room and user text never running as HTML; rooms you can discover (the list of
the rooms in view, counts, spread pins); a new room as an explicit action with no click swallowed; the
live state told honestly (the connection indicator, errors in words that clear on recovery, the length
limits as you type, presence pushed on posting, leaving with the tab); the room and view in the
address (reload, share, back and forward), older messages on scroll, unread counts; accessibility
(axe-core from the selenium-axe-python package when it is installed, and the main rules checked by
hand); the base map and place search an operator sets, and "locate me".

Helpers: web_support.py. With GEOCHAT_SCREENSHOT_DIR set, saves web-map.png and web-map-b.png."""
import random
import time
import uuid

from api_support import call, create, say, start
from geochat_support.protocol import chat, http, message_list
from geochat_support.waiting import wait_until
from conformance import element
from web_support import (ACCESSIBLE_NAMES, ConfiguredGateway, MapServices, assert_accessible_by_axe,
    assert_no_script_errors, say_and_time, screenshot)

DELIVERY_LIMIT_MS = 1000
PRESENCE_PUSH_LIMIT_S = 3  # a change of who is here reaches the page by push, well before any refresh
PLACES = [(52.52, 13.40), (48.86, 2.35), (41.90, 12.50), (6.52, 3.38), (-23.55, -46.63), (35.68, 139.69),
          (-33.87, 151.21), (19.43, -99.13), (28.61, 77.21), (-1.29, 36.82), (45.50, -73.57), (59.33, 18.07)]


def nick(prefix):
    return prefix + uuid.uuid4().hex[:8]


def somewhere_quiet():
    """A place of this test's own in the South Pacific, where no other test makes rooms."""
    return random.uniform(-45, -30), random.uniform(-150, -110)


def near_a_city_alone(gateway):
    """A place near a city (so the screenshot shows land) with no room of another test near it: a room
    within a pin's width of another is drawn as their count, not as its own pin."""
    for _ in range(50):
        city_latitude, city_longitude = random.choice(PLACES)
        latitude, longitude = city_latitude + random.uniform(-0.3, 0.3), city_longitude + random.uniform(-0.3, 0.3)
        near = call(gateway, "GET", f"/rooms?south={latitude - 0.5}&west={longitude - 0.5}"
                                    f"&north={latitude + 0.5}&east={longitude + 0.5}")
        assert near.status == 200, near
        if not near.json["rooms"]:
            return latitude, longitude
    raise AssertionError("no city without rooms near it")


def phone_messages(gateway, room):
    response = chat(gateway, v=5, cmd="messages", chatid=room, past=0)
    assert response.status == 200, response
    return [(m["user"], m["text"]) for m in message_list(element(response, "messages"))]


def participants_of(gateway, room):
    response = call(gateway, "GET", f"/rooms/{room}/participants")
    assert response.status == 200, response
    return response.json["participants"]


# ---------------------------------------------------------------- chat between two browsers

def test_two_browsers_chat_on_the_map(stack, browsers):
    gateway_a, gateway_b = stack["gateways"][0], stack["gateways"][1]
    for gateway in (gateway_a, gateway_b):
        page = http(gateway + "/")
        assert page.status == 200 and page.headers.get_content_type() == "text/html", page
    nick_a, nick_b = nick("wa"), nick("wb")
    topic = f'web map <i>{uuid.uuid4().hex[:8]}</i> & "q"'  # HTML in a topic is text too
    # Near a city (so the screenshot shows land), somewhere of its own: zoom 8 is a view of about 5° by 2°.
    latitude, longitude = near_a_city_alone(gateway_a)

    a, b = browsers.page(gateway_a), browsers.page(gateway_b)
    a.sign_in(nick_a)
    b.sign_in(nick_b)

    a.show(latitude, longitude, 8)
    room = a.create_room(topic)
    assert a.pin(room) is not None and a.label(room).text == topic, "the new room is on A's map"
    a.live()
    assert a.by_id("conn").get_attribute("data-state") == "live" and a.by_id("conn-text").text == "Live"

    # B finds it in the list of the rooms in view and on the map.
    b.show(latitude, longitude, 8)
    b.wait_fetched(lambda p: p.list_item(room) is not None, "the room in B's list of the rooms in view")
    assert b.list_item(room).text == topic
    b.open_by_pin(room, topic)
    b.live()
    a.wait(lambda p: {nick_a, nick_b} <= set(p.participants()), "A sees both in the room")
    b.wait(lambda p: {nick_a, nick_b} <= set(p.participants()), "B sees both in the room")

    a_to_b = say_and_time(a, b, "hello from A")
    b_to_a = say_and_time(b, a, "hello from B")
    print(f"web map delivery: A to B {a_to_b} ms, B to A {b_to_a} ms")
    assert a_to_b <= DELIVERY_LIMIT_MS, f"A's message took {a_to_b} ms to reach B's page"
    assert b_to_a <= DELIVERY_LIMIT_MS, f"B's message took {b_to_a} ms to reach A's page"
    for page in (a, b):
        assert page.messages()[-2:] == [(nick_a, "hello from A"), (nick_b, "hello from B")], page.messages()

    # HTML in a message is text, in both pages, and runs nothing.
    injected = '<img src=x onerror="window.__xss=1"><b>bold</b>'
    say_and_time(a, b, injected)
    for page in (a, b):
        assert page.messages()[-1] == (nick_a, injected)
        assert not page.by_id("messages").find_elements("css selector", "img, b")
        assert not page.css("#chat-title i, .room-label i, #room-list i")
        assert page.js("return window.__xss === undefined")

    screenshot(a, "web-map.png")
    screenshot(b, "web-map-b.png")

    # A phone sees the same conversation, through either gateway.
    expected = [(nick_a, "hello from A"), (nick_b, "hello from B"), (nick_a, injected)]
    for gateway in (gateway_a, gateway_b):
        wait_until(lambda: phone_messages(gateway, room)[-3:] == expected, timeout=5,
                   message=f"the phone protocol on {gateway} lists the web map's messages")

    # Someone who posts without joining is listed under "Here" at once, by push (no refresh for 20 s).
    poster = nick("wp")
    said_at = time.monotonic()
    say(gateway_b, start(gateway_b, poster), room, "posting joins")
    for page in (a, b):
        page.wait(lambda p: poster in p.participants(), f"{poster} under Here after posting",
                  timeout=PRESENCE_PUSH_LIMIT_S)
    print(f"web map: a poster listed under Here {time.monotonic() - said_at:.2f} s after posting")

    # A rename (PATCH /api/v1/session) shows in what B says next.
    renamed = nick_b + "_2"
    b.sign_in(renamed)
    say_and_time(b, a, "renamed")
    assert a.messages()[-1] == (renamed, "renamed")
    # (A rename pushes no participants event: A's list may still show B's old name until the next change.)
    a.wait(lambda p: {renamed, nick_b} & set(p.participants()), "B listed in A's page")

    # Closing the tab leaves the room (pagehide): A sees B go at once, not when presence runs out.
    original = b.driver.current_window_handle
    b.driver.switch_to.new_window("tab")
    b.driver.switch_to.window(original)
    closed_at = time.monotonic()
    b.driver.close()
    b.driver.switch_to.window(b.driver.window_handles[0])
    a.wait(lambda p: not {renamed, nick_b} & set(p.participants()), "B's closed tab leaves the room",
           timeout=PRESENCE_PUSH_LIMIT_S)
    print(f"web map: a closed tab left the room {time.monotonic() - closed_at:.2f} s after closing")

    # Leaving closes A's panel and takes the room out of "Your rooms"; with no room open, "Online".
    a.by_id("leave").click()
    a.wait(lambda p: not p.chat_open(), "A's chat closes")
    assert a.by_id("joined-section").get_attribute("hidden") is not None
    a.wait(lambda p: p.by_id("conn-text").text == "Online", "the indicator without a room's stream")
    assert_no_script_errors(a)


# ---------------------------------------------------------------- a new room, clicks, the keyboard

def spot_shown(page):
    """The new-room form's place: "52.5200, 13.4000, for zoom 12"."""
    latitude, longitude, _ = page.by_id("new-room-where").text.split(", ")
    return float(latitude), float(longitude)


def near(a, b, tolerance):
    return abs(a[0] - b[0]) <= tolerance and abs(a[1] - b[1]) <= tolerance


def test_new_room_is_an_explicit_action_and_no_click_is_swallowed(stack, browsers):
    from selenium.webdriver.common.keys import Keys
    gateway = stack["gateways"][0]
    page = browsers.page(gateway)
    page.sign_in(nick("wn"))
    latitude, longitude = somewhere_quiet()
    page.show(latitude, longitude, 12)
    # A room of its own 150 px east of the centre, made through the API.
    east = page.js("const s = geochat.map.getSize(); const p = geochat.map.containerPointToLatLng([s.x / 2 + 150, s.y / 2]);"
                   "return [p.lat, p.lng]")
    first = create(gateway, page.session(), east[0], east[1], zoom=12, topic="east " + uuid.uuid4().hex[:6])
    page.wait_fetched(lambda p: p.pin(first["id"]) is not None, "the room's pin")

    # A click on the empty map opens nothing; a double-click zooms in and opens nothing.
    spot = page.free_spot(-160, 80)
    page.click_map(*spot)
    time.sleep(0.4)
    assert not page.by_id("new-room").is_displayed(), "a click on the map opened the new-room form"
    page.click_map(*spot, double=True)
    page.wait(lambda p: p.view()[2] == 13, "the double-click zooms in")
    time.sleep(0.3)
    assert not page.by_id("new-room").is_displayed(), "a double-click opened the new-room form"
    page.show(latitude, longitude, 12)

    # "New room here": the spot is the map's centre; the zoom shown follows the map; a click moves the spot.
    page.by_id("new-room-here").click()
    page.wait(lambda p: p.by_id("new-room").is_displayed(), "the form opens")
    assert page.by_id("new-room-where").text.endswith("for zoom 12"), page.by_id("new-room-where").text
    page.css(".leaflet-control-zoom-in")[0].click()
    page.wait(lambda p: p.by_id("new-room-where").text.endswith("for zoom 13"), "the form shows the new zoom")
    spot = page.free_spot(-120, 60)
    page.click_map(*spot)
    clicked = page.js("const s = geochat.map.getSize();"
                      "const p = geochat.map.containerPointToLatLng([s.x / 2 + arguments[0], s.y / 2 + arguments[1]]);"
                      "return [p.lat, p.lng]", *spot)
    page.wait(lambda p: near(spot_shown(p), clicked, 3e-4), "the click moves the spot")
    topic = "made here " + uuid.uuid4().hex[:6]
    page.by_id("new-room-topic").send_keys(topic)
    page.by_id("new-room-create").click()
    page.wait(lambda p: p.chat_open(topic), "the new room opens")
    second = int(page.by_id("chat").get_attribute("data-room-id"))
    made = call(gateway, "GET", f"/rooms/{second}").json
    assert made["zoom"] == 13, f"the room was made for zoom {made['zoom']}, the form said 13"
    assert near((made["latitude"], made["longitude"]), clicked, 3e-4), (made, clicked)

    # The first click after the form is not swallowed (Leaflet's skip-next-click flag stayed set).
    page.wait(lambda p: p.pin(first["id"]) is not None, "the first room's pin")
    page.pin(first["id"]).click()
    page.wait(lambda p: p.chat_open(first["topic"]), "one click on a pin right after Create opens its room")
    page.by_id("new-room-here").click()
    page.by_id("new-room-topic").click()
    page.by_id("new-room-cancel").click()
    page.wait(lambda p: not p.by_id("new-room").is_displayed(), "Cancel closes the form")
    page.pin(second).click()
    page.wait(lambda p: p.chat_open(topic), "one click on a pin right after Cancel opens its room")

    # The keyboard: Enter on "New room here", a topic and Enter; Escape closes the form.
    button = page.by_id("new-room-here")
    button.send_keys(Keys.ENTER)
    page.wait(lambda p: p.js("return document.activeElement.id") == "new-room-topic", "the form takes the focus")
    page.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    page.wait(lambda p: not p.by_id("new-room").is_displayed(), "Escape closes the form")
    assert page.js("return document.activeElement.id") == "new-room-here", "the focus goes back to the button"
    button.send_keys(Keys.ENTER)
    keyed = "by keyboard " + uuid.uuid4().hex[:6]
    page.driver.switch_to.active_element.send_keys(keyed + Keys.ENTER)
    page.wait(lambda p: p.chat_open(keyed), "the room made with the keyboard opens")

    # Enter or Space on a focused pin opens its room; every pin is a focusable, named button.
    for key, room, its_topic in ((Keys.ENTER, first["id"], first["topic"]), (Keys.SPACE, second, topic)):
        pin = page.pin(room)
        page.js("arguments[0].focus()", pin)
        pin.send_keys(key)
        page.wait(lambda p: p.chat_open(its_topic), f"{key!r} on a focused pin opens its room")
    for pin in page.css(".room-pin"):
        assert pin.get_attribute("tabindex") == "0" and pin.get_attribute("role") == "button"
        assert pin.get_attribute("aria-label").startswith("Room: ")
    assert_no_script_errors(page)


# ---------------------------------------------------------------- rooms you can discover

SPREAD_GEOMETRY = """
const pins = arguments[0].map((id) => document.querySelector('.room-pin[data-room-id="' + id + '"]'));
const boxes = pins.map((p) => p.getBoundingClientRect());
let overlaps = 0;
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const a = boxes[i], b = boxes[j];
  if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps++;
}
return overlaps;
"""

# Every pin in view is on top at its centre: no label (nor other pin) takes its click.
PINS_ON_TOP = """
const map = document.getElementById('map').getBoundingClientRect();
const covered = [];
for (const pin of document.querySelectorAll('.room-pin')) {
  const r = pin.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  if (x < map.left + 60 || x > map.right - 60 || y < map.top + 60 || y > map.bottom - 30) continue;
  const hit = document.elementFromPoint(x, y);
  if (hit !== pin) covered.push(pin.dataset.roomId + ' under ' + (hit && hit.className));
}
return covered;
"""


def test_rooms_in_view_counts_and_spread_pins(stack, browsers):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    gateway = stack["gateways"][1]
    maker = start(gateway, nick("wm"))
    latitude, longitude = somewhere_quiet()
    tag = uuid.uuid4().hex[:6]
    same_spot = [create(gateway, maker, latitude, longitude, zoom=14, topic=f"same spot {i} {tag}")["id"]
                 for i in range(3)]
    near = [create(gateway, maker, latitude + 0.003, longitude + 0.004, zoom=14, topic=f"near a {tag}")["id"],
            create(gateway, maker, latitude - 0.004, longitude + 0.003, zoom=14, topic=f"near b {tag}")["id"]]
    far = create(gateway, maker, latitude + 0.2, longitude + 0.3, zoom=10, topic=f"far {tag}")["id"]
    group = same_spot + near

    page = browsers.page(gateway)
    page.sign_in(nick("wd"))

    # From the world view, rooms made for a street are there to find, as counts or pins.
    page.show(latitude, longitude, 2)
    page.wait_fetched(lambda p: all(p.shown_as(r) for r in group + [far]), "every room shown at the world view")

    # A region: the five close rooms are one count; the far one a pin; the list has all six, newest first.
    page.show(latitude + 0.1, longitude + 0.15, 9)
    page.wait(lambda p: all(p.shown_as(r) == "count" for r in group) and p.shown_as(far) == "pin",
              "five rooms as one count, the far one as a pin")
    cluster = page.css(".room-cluster")
    cluster = [c for c in cluster if str(group[0]) in c.get_attribute("data-rooms").split(",")][0]
    assert cluster.text == "5" and cluster.get_attribute("role") == "button", cluster.text
    assert "5 rooms" in cluster.get_attribute("aria-label")
    ours = [r for r in page.listed() if r in group + [far]]
    assert ours == sorted(group + [far], reverse=True), f"the list of the rooms in view: {ours}"
    assert page.by_id("in-view-count").text == f"({len(page.listed())})"

    # Enter on the count zooms in to its rooms: the two near rooms apart, the three at one spot spread
    # around it, none over another, each pin on top at its centre (a label never takes a pin's click).
    cluster.send_keys(Keys.ENTER)
    page.wait(lambda p: all(p.shown_as(r) == "pin" for r in group), "the count opens into pins", timeout=10)
    assert page.js(SPREAD_GEOMETRY, same_spot) == 0, "spread pins overlap"
    assert page.js("return geochat.rooms.legs.getLayers().length") >= 3, "no legs from spread pins to their spot"
    assert page.js(PINS_ON_TOP) == [], "a pin is covered"

    # The list and the map in step: a list entry points at its pin; choosing it opens the room.
    chosen = same_spot[1]
    ActionChains(page.driver).move_to_element(page.list_item(chosen)).perform()
    page.wait(lambda p: "hover" in p.pin(chosen).get_attribute("class"), "the list entry lights up its pin")
    page.list_item(chosen).click()
    page.wait(lambda p: p.shown_room() == chosen, "the list entry opens its room")
    page.live()
    page.wait(lambda p: "active" in p.pin(chosen).get_attribute("class")
              and p.list_item(chosen).get_attribute("aria-current") == "true", "the open room marked on both")

    # Recent activity first: a message in the open room puts it at the top of the list.
    say(gateway, maker, chosen, "activity " + tag)
    page.wait(lambda p: p.listed()[0] == chosen, "the room with news first in the list")
    assert_no_script_errors(page)


# ---------------------------------------------------------------- the address, history, unread

def test_links_reload_older_messages_and_unread(stack, browsers):
    gateway = stack["gateways"][0]
    poster = start(gateway, nick("wh"))
    latitude, longitude = somewhere_quiet()
    tag = uuid.uuid4().hex[:6]
    talk = create(gateway, poster, latitude, longitude, zoom=12, topic="long talk " + tag)["id"]
    quiet = create(gateway, poster, latitude + 0.01, longitude + 0.01, zoom=12, topic="quiet " + tag)["id"]
    for i in range(1, 121):
        say(gateway, poster, talk, f"m{i}")
    link = f"#map=13/{latitude:.5f}/{longitude:.5f}&room={talk}"

    page = browsers.page(gateway)
    nick_a = nick("wl")
    page.sign_in(nick_a)

    # A link opens its room and its view; the panel shows the latest 50 messages.
    page.open(gateway, link)
    page.wait(lambda p: p.chat_open("long talk " + tag), "the linked room opens")
    page.wait(lambda p: len(p.messages()) == 50, "the latest 50 messages")
    assert [t for _, t in page.messages()][:1] == ["m71"]
    lat, lng, zoom = page.view()
    assert zoom == 13 and abs(lat - latitude) < 1e-4 and abs(lng - longitude) < 1e-4, page.view()

    # Older messages on scroll, page by page, to the first; what was in view stays in view.
    page.js("document.getElementById('messages').scrollTop = 0")
    page.wait(lambda p: len(p.messages()) == 100, "50 older messages on scrolling up")
    assert page.js("return document.getElementById('messages').scrollTop") > 0, "the list jumped to its top"
    page.js("document.getElementById('messages').scrollTop = 0")
    page.wait(lambda p: len(p.messages()) == 120, "the rest, to the first message")
    assert [t for _, t in page.messages()] == [f"m{i}" for i in range(1, 121)]
    page.wait(lambda p: not p.by_id("older").is_displayed(), "nothing older to show")

    # Reload: the same room and view, and still in the room.
    page.driver.refresh()
    page.ready()
    page.wait(lambda p: p.chat_open("long talk " + tag), "the room again after a reload")
    lat, lng, zoom = page.view()
    assert zoom == 13 and abs(lat - latitude) < 1e-4 and abs(lng - longitude) < 1e-4, page.view()
    wait_until(lambda: nick_a in participants_of(gateway, talk), timeout=5,
               message="still a participant after the reload")

    # Back and forward: opening a room is a step; Close is a step.
    page.wait_fetched(lambda p: p.list_item(quiet) is not None, "the quiet room in the list")
    page.list_item(quiet).click()
    page.wait(lambda p: p.shown_room() == quiet, "the quiet room opens")
    assert f"room={quiet}" in page.js("return location.hash")
    page.driver.back()
    page.wait(lambda p: p.shown_room() == talk, "back: the first room again")
    page.driver.forward()
    page.wait(lambda p: p.shown_room() == quiet, "forward: the quiet room again")
    page.by_id("chat-hide").click()
    page.wait(lambda p: not p.chat_open() and "room=" not in p.js("return location.hash"), "Close: no room")
    page.driver.back()
    page.wait(lambda p: p.shown_room() == quiet, "back: the quiet room again")

    # Unread counts: in "Your rooms" and the tab's title, gone when the room is read; kept over a reload.
    for i in range(3):
        say(gateway, poster, talk, f"unread {i}")
    page.wait(lambda p: p.unread_badge(talk) == "3", "3 unread in the other room")
    assert page.driver.title.startswith("(3) "), page.driver.title
    page.driver.refresh()
    page.ready()
    page.wait(lambda p: p.shown_room() == quiet and p.unread_badge(talk) == "3", "3 unread after a reload")
    page.css(f'#joined-list .room-item[data-room-id="{talk}"]')[0].click()
    page.wait(lambda p: p.shown_room() == talk and p.unread_badge(talk) == "", "read on opening")
    assert not page.driver.title.startswith("("), page.driver.title

    # Shared: another browser, not signed in, opens the same link: the room, its messages, the view.
    other = browsers.page(gateway)
    other.open(gateway, link)
    other.wait(lambda p: p.chat_open("long talk " + tag) and len(p.messages()) == 50, "the shared link's room")
    assert other.messages()[-1][1] == "unread 2"
    lat, lng, zoom = other.view()
    assert zoom == 13 and abs(lat - latitude) < 1e-4, other.view()
    assert_no_script_errors(page, other)


# ---------------------------------------------------------------- live state, errors, limits

def test_connection_state_errors_and_limits(stack, browsers):
    gateway = stack["gateways"][1]
    page = browsers.page(gateway)
    nick_c = nick("wc")
    page.sign_in(nick_c)
    latitude, longitude = somewhere_quiet()
    room = create(gateway, page.session(), latitude, longitude, zoom=12, topic="state " + uuid.uuid4().hex[:6])
    page.open(gateway, f"#map=12/{latitude:.5f}/{longitude:.5f}&room={room['id']}")
    page.wait(lambda p: p.chat_open(room["topic"]), "the room opens")
    page.live()
    page.wait(lambda p: p.by_id("conn").get_attribute("data-state") == "live", "the indicator says live")

    # Offline: the indicator says so, a message not sent says why in words and is given back.
    page.driver.execute_cdp_cmd("Network.enable", {})
    page.driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                                {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    page.wait(lambda p: p.by_id("conn").get_attribute("data-state") == "offline"
              and p.by_id("conn-text").text == "Offline", "the indicator says offline")
    page.say("while offline")
    page.wait(lambda p: p.status_is_error and "can’t be reached" in p.status, "a message not sent, in words")
    assert box_text(page, "say-text") == "while offline", "the unsent text is given back"
    for technical in ("Failed to fetch", "Network error", "TypeError", "/api/v1"):
        assert technical not in page.status, page.status

    # Online again: live again by itself, and the error is gone.
    page.driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                                {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    page.wait(lambda p: p.by_id("conn").get_attribute("data-state") == "live", "live again", timeout=20)
    page.live()
    page.wait(lambda p: not p.status_is_error, "the error clears on recovery", timeout=10)
    page.by_id("say-send").click()
    page.wait(lambda p: (nick_c, "while offline") in p.messages(), "the message, sent again")

    # The gateway not answering while the browser is online (its requests blocked): "Reconnecting…" at
    # once, "Offline" after a while of failing, live again and the error gone once it answers.
    page.driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/v1/*"]})
    page.js("geochat.map.panBy([40, 0], {animate: false})")
    page.wait(lambda p: p.by_id("conn").get_attribute("data-state") == "reconnecting"
              and p.by_id("conn-text").text == "Reconnecting…", "the indicator says reconnecting")
    page.wait(lambda p: p.status_is_error and p.status.startswith("Rooms not updated: GeoChat can’t be reached"),
              "rooms not updated, in words")
    page.wait(lambda p: p.by_id("conn").get_attribute("data-state") == "offline", "offline after a while", timeout=15)
    page.driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    page.wait(lambda p: p.by_id("conn").get_attribute("data-state") == "live" and not p.status_is_error,
              "live again, the error gone", timeout=20)

    # The server's limits, shown as one types (the page read them from /map/settings.json).
    limits = page.js("return geochat.settings.limits")
    assert limits == {"nick": 32, "topic": 100, "message": 500}, limits
    assert page.by_id("nick").get_attribute("maxlength") == "32"
    assert page.by_id("say-count").text == "0/500"
    set_text(page, "say-text", "x" * 501)
    assert page.by_id("say-count").text == "501/500 (too long)"
    assert page.by_id("say-text").get_attribute("aria-invalid") == "true"
    before = len(page.messages())
    page.by_id("say-send").click()
    page.wait(lambda p: "1 character too long" in p.status, "too long, said before sending")
    time.sleep(0.5)
    assert len(page.messages()) == before, "a message over the limit was sent"
    astral = "\U0001F600" * 300  # 300 code points, 600 UTF-16 units: within the limit
    set_text(page, "say-text", astral)
    assert page.by_id("say-count").text == "300/500"
    page.by_id("say-send").click()
    page.wait(lambda p: p.messages() and p.messages()[-1][1] == astral, "300 emoji are within the limit")
    page.wait(lambda p: not p.status_is_error, "the length error clears once a message goes out")

    page.by_id("new-room-here").click()
    set_text(page, "new-room-topic", "t" * 101)
    assert page.by_id("new-room-count").text == "101/100 (too long)"
    page.by_id("new-room-create").click()
    page.wait(lambda p: "1 character too long" in p.status, "a topic too long, said before creating")
    assert page.by_id("new-room").is_displayed()
    page.by_id("new-room-cancel").click()

    # A room that is not there: said in words, and cleared when a room opens.
    page.open(gateway, "#room=2147480000")
    page.wait(lambda p: p.status == "That room no longer exists", "a missing room, in words")
    page.open(gateway, f"#map=12/{latitude:.5f}/{longitude:.5f}&room={room['id']}")
    page.wait(lambda p: p.chat_open(room["topic"]) and not p.status_is_error, "the error clears")
    assert_no_script_errors(page)


def box_text(page, element_id):
    return page.by_id(element_id).get_attribute("value")


def set_text(page, element_id, text):
    """Types `text` as a paste would (ChromeDriver cannot type characters beyond the BMP)."""
    page.js("const box = document.getElementById(arguments[0]); box.value = arguments[1];"
            "box.dispatchEvent(new Event('input'))", element_id, text)


# ---------------------------------------------------------------- accessibility

def test_accessibility(stack, browsers):
    gateway = stack["gateways"][0]
    page = browsers.page(gateway)
    page.sign_in(nick("wx"))
    latitude, longitude = somewhere_quiet()
    other = start(gateway, nick("wy"))
    room = create(gateway, other, latitude, longitude, zoom=12, topic="accessible " + uuid.uuid4().hex[:6])
    say(gateway, other, room["id"], "a first message")
    page.open(gateway, f"#map=12/{latitude:.5f}/{longitude:.5f}&room={room['id']}")
    page.wait(lambda p: p.chat_open(room["topic"]) and p.messages(), "the room with a message opens")
    page.live()

    # By hand, always: every control has a name; pins, the map and the lists can be reached and read.
    assert page.js(ACCESSIBLE_NAMES) == [], "controls without an accessible name"
    pin = page.pin(room["id"])
    assert pin.get_attribute("role") == "button" and pin.get_attribute("tabindex") == "0"
    assert pin.get_attribute("aria-label") == "Room: " + room["topic"]
    assert page.by_id("map").get_attribute("tabindex") == "0" and page.by_id("map").get_attribute("aria-label")
    assert page.by_id("messages").get_attribute("tabindex") == "0", "the scrolling messages take the focus"
    assert page.by_id("status").get_attribute("role") == "status" and page.by_id("conn").get_attribute("role") == "status"
    for element_id in ("nick", "say-text", "new-room-topic"):
        assert page.js("return document.getElementById(arguments[0]).labels.length", element_id) == 1, element_id

    # New messages are announced (an ARIA live region), with who said them.
    announcer = page.by_id("announcer")
    assert announcer.get_attribute("aria-live") == "polite"
    say(gateway, other, room["id"], "announce me")
    page.wait(lambda p: "announce me" in p.by_id("announcer").get_attribute("textContent"), "the message announced")
    assert page.by_id("announcer").get_attribute("textContent").endswith(": announce me")

    # axe-core: no serious or critical violation on the page with a room open.
    assert_accessible_by_axe(page)
    assert_no_script_errors(page)


# ---------------------------------------------------------------- the base map, place search, locate me

def test_base_map_place_search_and_locate_me(stack, browsers):
    gateway = stack["gateways"][0]
    page = browsers.page(gateway)

    # As shipped: the offline map (Natural Earth land), no place search.
    assert page.by_id("map").get_attribute("data-base") == "land"
    assert page.by_id("map").get_attribute("data-land") == "loaded"
    assert not page.by_id("place-search").is_displayed()
    assert "Natural Earth" in page.css(".leaflet-control-attribution")[0].text

    # Locate me: the browser's position, or a clear word when it is blocked.
    page.driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": gateway, "permissions": ["geolocation"]})
    page.driver.execute_cdp_cmd("Emulation.setGeolocationOverride",
                                {"latitude": 48.8584, "longitude": 2.2945, "accuracy": 30})
    page.by_id("locate").click()
    page.wait(lambda p: p.by_id("map").get_attribute("data-located") == "48.85840,2.29450", "located")
    lat, lng, zoom = page.view()
    assert abs(lat - 48.8584) < 1e-3 and abs(lng - 2.2945) < 1e-3 and zoom >= 14, page.view()
    page.driver.execute_cdp_cmd("Browser.setPermission", {"origin": gateway, "permission": {"name": "geolocation"},
                                                          "setting": "denied"})
    page.by_id("locate").click()
    page.wait(lambda p: p.status_is_error and "blocked" in p.status, "a blocked location, in words")

    # An operator's tile server and geocoder (here our own, on loopback), as the gateway serves them.
    services = MapServices()
    proxy = ConfiguredGateway(gateway, services.tile_url, "© Test Tiles <b>contributors</b>", services.geocoder_url)
    try:
        configured = browsers.page(proxy.url)
        assert configured.by_id("map").get_attribute("data-base") == "tiles"
        configured.wait(lambda p: p.js(
            "return Array.from(document.querySelectorAll('img.leaflet-tile-loaded'))"
            ".filter((i) => i.src.startsWith(arguments[0]) && i.naturalWidth === 256).length", services.origin) > 0,
            "tiles from the operator's tile server")
        assert services.tiles_served
        attribution = configured.css(".leaflet-control-attribution")[0]
        assert "© Test Tiles <b>contributors</b>" in attribution.text, attribution.text
        assert not attribution.find_elements("css selector", "b"), "the attribution went in as HTML"
        assert configured.js("return geochat.map.getMaxZoom()") == 19

        search = configured.by_id("place-search")
        assert search.is_displayed() and search.get_attribute("role") == "search"
        configured.by_id("place-query").send_keys("Alexanderplatz\n")
        configured.wait(lambda p: len(p.css("#place-results button")) == 2, "two places found")
        assert configured.css("#place-results button")[0].text == "Alexanderplatz, Mitte, Berlin, Deutschland"
        query = services.searches[-1]
        assert query["format"] == ["jsonv2"] and query["limit"] == ["5"] and query["q"] == ["Alexanderplatz"], query
        configured.wait(lambda p: abs(p.view()[0] - 52.5219) < 0.01 and abs(p.view()[1] - 13.4132) < 0.01,
                        "the map shows the first place")
        configured.css("#place-results button")[1].click()
        configured.wait(lambda p: abs(p.view()[0] - 52.9784) < 0.01 and abs(p.view()[1] - 13.3337) < 0.01,
                        "the map shows the chosen place")
        assert not configured.by_id("place-results").is_displayed()
        configured.by_id("place-query").clear()
        configured.by_id("place-query").send_keys("Nowhere at all\n")
        configured.wait(lambda p: "No place found" in p.status, "nothing found, said so")
        assert_no_script_errors(page, configured)
    finally:
        proxy.close()
        services.close()
