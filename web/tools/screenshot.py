#!/usr/bin/env python3
"""Makes the documentation screenshot of the web map (docs/web-map.png, shown in docs/api.md): rooms
around Berlin and central Europe, and an open chat with a short conversation.

    .venv/bin/python web/tools/screenshot.py .data/dev/stack.env [docs/web-map.png]

Against a running stack (deploy/stack.sh up; its stack.env names the gateways):

1. Through the JSON API (urllib, no packages), makes the rooms of ROOMS unless rooms with those topics
   are already there (GET /api/v1/rooms of the region), so running it again adds nothing.
2. Two sessions (Jonas on one gateway, Lydia on the other) hold the short CONVERSATION in the chat
   room, unless the room's latest messages already are that conversation.
3. Headless Chromium (1280x800, Debian's chromium and chromium-driver through Selenium, as
   Tests/Integration/test_web_map.py drives it; deploy/install-browser.sh) opens the map, signs in as
   Lydia, chooses the chat room in the list of the rooms in view, shows the region, waits for the messages, the participants and
   the list of the rooms in view, and saves the PNG.

The page's status line must be empty (no error) when the picture is taken; the script fails otherwise.
"""
import argparse
import json
import os
import shlex
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1280, 800

# The view: Germany and its neighbours, the North Sea and the Baltic. Rooms made for this zoom ± 3 and
# closer show (pins closer than ~34 px would be a count).
VIEW = (52.0, 12.2, 6)
REGION = {"south": 46.0, "west": 2.0, "north": 57.5, "east": 24.0}
NEAR = 0.05  # degrees: a room with the topic within this of its place counts as already made

# (latitude, longitude, zoom, topic); labels run to the right of their pins, so rooms on one row
# of the map are kept apart.
ROOMS = [
    (55.676, 12.568, 6, "København: Nyhavn canal tours"),
    (54.352, 18.646, 6, "Gdańsk amber market"),
    (53.546, 9.966, 6, "Hamburg harbour ferries"),
    (54.180, 12.080, 7, "Warnemünde beach volleyball"),
    (52.541, 13.402, 7, "Mauerpark flea market"),
    (52.373, 4.893, 6, "Amsterdam cycling club"),
    (51.340, 12.375, 7, "Leipzig book fair meetup"),
    (51.108, 17.033, 6, "Wrocław dwarf hunt"),
    (50.938, 6.958, 6, "Köln: carnival crew"),
    (50.087, 14.421, 6, "Praha: Charles Bridge at dawn"),
    (48.137, 11.575, 7, "München Biergarten tips"),
    (48.208, 16.373, 6, "Wien: coffee house crawl"),
]
CHAT_TOPIC = "Mauerpark flea market"
BROWSER_NICK = "Lydia"
CONVERSATION = [  # (who, text); the browser is Lydia, so her lines show as her own
    ("Jonas", "Anyone going to Mauerpark on Sunday?"),
    ("Lydia", "Yes! I'll be there around 11, hunting for old records."),
    ("Jonas", "The stall by the north entrance has crates of 70s jazz."),
    ("Lydia", "Perfect. Meet at the karaoke amphitheatre at 3?"),
    ("Jonas", "Deal, see you there :)"),
]
CREATORS = ["Mira", "Tomasz", "Anke", "Pieter"]  # rooms are made by a few people, a few rooms each


# ---------------------------------------------------------------- the JSON API

class Problem(Exception):
    def __init__(self, status, body, retry_after):
        super().__init__(f"{status}: {body}")
        self.status, self.body, self.retry_after = status, body, retry_after


def request(gateway, method, path, body=None, session=None, retries=8):
    """One API request; waits out 429 (and 503) with Retry-After. Answers the decoded JSON or None."""
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if session:
        headers["Authorization"] = "Bearer " + session
    for attempt in range(retries + 1):
        try:
            with urllib.request.urlopen(urllib.request.Request(gateway + "/api/v1" + path, data=data, method=method,
                                                               headers=headers), timeout=30) as response:
                raw = response.read()
                return json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            retry_after = e.headers.get("Retry-After")
            if e.code in (429, 503) and attempt < retries:
                wait = min(float(retry_after or 1), 30.0)
                print(f"  {method} {path}: {e.code}, waiting {wait:g} s", file=sys.stderr)
                time.sleep(wait)
                continue
            raise Problem(e.code, text, retry_after) from None
    raise AssertionError("unreachable")


def start_session(gateway, nick):
    return request(gateway, "POST", "/sessions", {"nick": nick})["session"]


def end_session(gateway, session):
    try:
        request(gateway, "DELETE", "/session", session=session, retries=0)
    except (Problem, OSError):
        pass


def rooms_in_region(gateway):
    query = urllib.parse.urlencode({k: f"{v:.6f}" for k, v in REGION.items()})
    return request(gateway, "GET", "/rooms?" + query)["rooms"]


def ensure_rooms(gateway):
    """The rooms of ROOMS, made where missing; answers {topic: room id}."""
    existing = rooms_in_region(gateway)
    ids, sessions, made = {}, [], 0
    try:
        for latitude, longitude, zoom, topic in ROOMS:
            found = [r for r in existing if r["topic"] == topic
                     and abs(r["latitude"] - latitude) < NEAR and abs(r["longitude"] - longitude) < NEAR]
            if found:
                ids[topic] = min(r["id"] for r in found)
                continue
            if made % 3 == 0:  # a session makes at most 3 rooms at once (the phones' create limit, burst 3)
                sessions.append(start_session(gateway, CREATORS[len(sessions) % len(CREATORS)]))
            room = request(gateway, "POST", "/rooms",
                           {"latitude": latitude, "longitude": longitude, "zoom": zoom, "topic": topic},
                           session=sessions[-1])
            made += 1
            ids[topic] = room["id"]
    finally:
        for session in sessions:
            end_session(gateway, session)
    print(f"rooms: {len(ROOMS)} ({made} made, {len(ROOMS) - made} already there)")
    return ids


def hold_conversation(room, talkers):
    """Says CONVERSATION in `room` unless its latest messages already are it. `talkers`: nick -> (gateway, session)."""
    gateway, session = talkers["Jonas"]
    latest = request(gateway, "GET", f"/rooms/{room}/messages?after=0&limit=50")["messages"]
    said = [(m["nick"], m["text"]) for m in latest]
    if said[-len(CONVERSATION):] == CONVERSATION:
        print("conversation: already there")
        return
    for nick, text in CONVERSATION:
        gateway, session = talkers[nick]
        request(gateway, "POST", f"/rooms/{room}/messages", {"text": text}, session=session)
        time.sleep(0.4)  # the phones' say limit: 200 ms apart per session; and a natural order of timestamps
    print(f"conversation: {len(CONVERSATION)} messages said")


class KeepPresent(threading.Thread):
    """Keeps sessions in a room's participants while the browser works: presence runs out after
    GEOCHAT_PRESENCE_TIMEOUT_S (60 s by default, 4 s in the test stacks) without a sign of life, and
    neither a reader in the web map (its event stream carries no session) nor Jonas sends one."""

    def __init__(self, gateway, room):
        super().__init__(daemon=True)
        self.gateway, self.room = gateway, room
        self.sessions = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(1.0):
            for session in list(self.sessions):
                try:
                    request(self.gateway, "POST", f"/rooms/{self.room}/join", session=session, retries=0)
                except (Problem, OSError) as e:
                    if session in self.sessions:  # not one that just ended
                        print(f"  keep-present: {e}", file=sys.stderr)


# ---------------------------------------------------------------- the browser

def browser():
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager downloads nothing
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={WIDTH},{HEIGHT}",
                     "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                     "--hide-scrollbars", "--force-device-scale-factor=1", "--lang=en-GB"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    # The page shows times in the browser's locale: British English, 24-hour times, as the map is of Europe
    # (neither --lang nor LANG reaches toLocaleTimeString in headless Chromium).
    driver.execute_cdp_cmd("Emulation.setLocaleOverride", {"locale": "en-GB"})
    # --window-size is the window; headless Chromium's page is smaller than it (1280x657 for 1280x800).
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(15)
    return driver


def wait(driver, condition, what, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        value = condition(driver)
        if value:
            return value
        if time.monotonic() > deadline:
            status = driver.find_element("id", "status").text
            raise AssertionError(f"timed out waiting for {what}; status line: {status!r}")
        time.sleep(0.1)


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def show_view(driver, latitude, longitude, zoom):
    before = js(driver, "return document.getElementById('map').dataset.roomsLoaded || ''")
    js(driver, "geochat.map.setView([arguments[0], arguments[1]], arguments[2], {animate: false})",
       latitude, longitude, zoom)
    wait(driver, lambda d: js(d, "return document.getElementById('map').dataset.roomsLoaded || ''") != before,
         "the rooms of the view")


def take(gateway, room_ids, chat_room, output, keeper):
    driver = browser()
    try:
        _take(driver, gateway, room_ids, chat_room, output, keeper)
    except Exception:
        failed = os.path.splitext(output)[0] + ".failed.png"
        try:
            driver.save_screenshot(failed)
            print(f"the page as it was: {failed}", file=sys.stderr)
        except Exception:  # noqa: BLE001 — the error that got us here matters more
            pass
        raise
    finally:
        keeper.sessions[1:] = []  # Jonas only, from here: the browser's session ends now
        try:
            js(driver, "return fetch('/api/v1/session', {method: 'DELETE', headers: "
                       "{Authorization: 'Bearer ' + sessionStorage.getItem('geochat.session')}}).then(r => r.status)")
        except Exception:  # noqa: BLE001 — the page may be gone; its session then ends by itself
            pass
        driver.quit()


def _take(driver, gateway, room_ids, chat_room, output, keeper):
    driver.get(gateway + "/")
    wait(driver, lambda d: js(d, "return !!(window.geochat && window.L)"), "the map script")
    wait(driver, lambda d: js(d, "return document.getElementById('map').dataset.baseReady") == "yes",
         "the base map")
    nick = driver.find_element("id", "nick")
    nick.clear()
    nick.send_keys(BROWSER_NICK)
    driver.find_element("id", "nick-save").click()
    wait(driver, lambda d: d.find_element("id", "whoami").text == "as " + BROWSER_NICK, "the session")
    keeper.sessions.append(js(driver, "return sessionStorage.getItem('geochat.session')"))

    show_view(driver, *VIEW)
    selector = f'#room-list .room-item[data-room-id="{chat_room}"]'
    wait(driver, lambda d: d.find_elements("css selector", selector), "the chat room in the list of the rooms in view")
    driver.find_element("css selector", selector).click()
    wait(driver, lambda d: d.find_element("id", "chat").is_displayed()
         and d.find_element("id", "chat-title").text == CHAT_TOPIC, "the chat panel")
    wait(driver, lambda d: d.find_element("id", "chat").get_attribute("data-live") == "open", "the event stream")
    texts = [text for _, text in CONVERSATION]
    wait(driver, lambda d: [e.text for e in d.find_elements("css selector", "#messages .message .text")][-len(texts):]
         == texts, "the conversation in the panel")
    talkers = sorted({nick for nick, _ in CONVERSATION})
    present = lambda d: sorted(e.text for e in d.find_elements("css selector", "#participants li")) == talkers
    wait(driver, present, f"the participants {talkers}")

    # The panel narrowed the map: show the region again, and every room of it.
    show_view(driver, *VIEW)
    wanted = set(room_ids.values())
    shown_ids = lambda d: set(js(d, """
        const ids = Array.from(document.querySelectorAll('.room-pin'), (e) => e.dataset.roomId);
        for (const c of document.querySelectorAll('.room-cluster')) ids.push(...c.dataset.rooms.split(','));
        return ids.map(Number);"""))
    try:
        wait(driver, lambda d: wanted <= shown_ids(d), "every room on the map (a pin, or in a count)")
    except AssertionError as e:
        missing = sorted(t for t, i in room_ids.items() if i not in shown_ids(driver))
        bounds = js(driver, "return geochat.map.getBounds().toBBoxString()")
        raise AssertionError(f"{e}; missing {missing}; the map shows {bounds}") from None
    listed = lambda d: {int(e.get_attribute("data-room-id")) for e in d.find_elements("css selector", "#room-list .room-item")}
    wait(driver, lambda d: wanted <= listed(d), "every room in the list of the rooms in view")
    # A still picture: no hover on a pin, no focus ring, no transient status ("Signed in as …").
    js(driver, "document.activeElement && document.activeElement.blur()")
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(driver).move_to_element_with_offset(driver.find_element("id", "bar"), 0, 0).perform()
    wait(driver, lambda d: d.find_element("id", "status").text == "", "an empty status line", timeout=10)
    time.sleep(0.5)  # the canvas repaint after the last move
    wait(driver, present, f"the participants {talkers}")

    status = driver.find_element("id", "status")
    if status.text or "error" in (status.get_attribute("class") or ""):
        raise AssertionError(f"the status line shows {status.text!r}")
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    if not driver.save_screenshot(output):
        raise AssertionError("the screenshot was not saved")
    shown = [e.text for e in driver.find_elements("css selector", "#participants li")]
    print(f"participants shown: {shown}")
    js(driver, "return geochat.closeRoom(true)")  # leave the room, as a user would


# ---------------------------------------------------------------- main

def gateways_of(stack_env):
    with open(stack_env) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key == "GATEWAY_URLS":
                urls = " ".join(shlex.split(value)).split()
                if urls:
                    return urls
    raise SystemExit(f"{stack_env}: no GATEWAY_URLS")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stack_env", help="the running stack's stack.env (e.g. .data/dev/stack.env)")
    parser.add_argument("output", nargs="?", default="docs/web-map.png", help="the PNG (default: %(default)s)")
    args = parser.parse_args()
    gateways = gateways_of(args.stack_env)
    first, second = gateways[0], gateways[-1]

    room_ids = ensure_rooms(first)
    chat_room = room_ids[CHAT_TOPIC]
    talkers = {"Jonas": (second, start_session(second, "Jonas")), "Lydia": (first, start_session(first, "Lydia"))}
    keeper = None
    try:
        hold_conversation(chat_room, talkers)
        # The browser is Lydia; her API session steps out so she is listed once. Jonas stays.
        lydia_gateway, lydia = talkers["Lydia"]
        request(lydia_gateway, "POST", f"/rooms/{chat_room}/leave", session=lydia)
        jonas_gateway, jonas = talkers["Jonas"]
        request(jonas_gateway, "POST", f"/rooms/{chat_room}/join", session=jonas)
        keeper = KeepPresent(first, chat_room)
        keeper.sessions.append(jonas)
        keeper.start()
        take(first, room_ids, chat_room, args.output, keeper)
    finally:
        if keeper:
            keeper.stop.set()
            keeper.join()
        for gateway, session in talkers.values():
            end_session(gateway, session)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
