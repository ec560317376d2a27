"""The web map (web/, served by the gateways at `/`), end to end in two headless Chromium browsers:
A on gateway 1 and B on gateway 2 each start a session by nickname; A creates a room by clicking the
map; B finds its marker and opens it; what one says reaches the other over Server-Sent Events within
a second (measured in the browsers: A's click on Send to the message element appearing in B's page);
a phone (the legacy protocol) sees the same messages; user text never runs as HTML.

Needs chromium, chromium-driver and selenium: deploy/install-browser.sh. Selenium drives the system's
/usr/bin/chromedriver (SE_OFFLINE: Selenium Manager downloads nothing). With GEOCHAT_SCREENSHOT_DIR
set, saves web-map.png (A's page: the map, the room, the open chat) and web-map-b.png."""
import os
import random
import shutil
import uuid

import pytest

from geochat_support.protocol import chat, http, message_list
from geochat_support.waiting import wait_until
from conformance import element

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
DELIVERY_LIMIT_MS = 1000
PLACES = [(52.52, 13.40), (48.86, 2.35), (41.90, 12.50), (6.52, 3.38), (-23.55, -46.63), (35.68, 139.69),
          (-33.87, 151.21), (19.43, -99.13), (28.61, 77.21), (-1.29, 36.82), (45.50, -73.57), (59.33, 18.07)]
INSTALL_HINT = "run deploy/install-browser.sh (apt chromium chromium-driver libjs-leaflet, selenium into .venv)"

os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager fetch a driver or a browser


def _selenium():
    try:
        import selenium  # noqa: F401
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("the web map test needs selenium in the test venv: " + INSTALL_HINT, pytrace=False)
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) or shutil.which(os.path.basename(path))):
            pytest.fail(f"the web map test needs {path}: " + INSTALL_HINT, pytrace=False)
    return webdriver, Service


def _browser():
    webdriver, Service = _selenium()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                     "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(15)
    return driver


@pytest.fixture
def browsers():
    started = []
    try:
        started.append(_browser())
        started.append(_browser())
        yield started
    finally:
        for driver in started:
            try:
                driver.quit()
            except Exception:  # noqa: BLE001 — the browser may already be gone; the test's own error matters
                pass


def screenshot(driver, name):
    directory = os.environ.get("GEOCHAT_SCREENSHOT_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        driver.save_screenshot(os.path.join(directory, name))


# ---------------------------------------------------------------- the page, as a user drives it

def by_id(driver, element_id):
    return driver.find_element("id", element_id)


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def status_of(driver):
    return by_id(driver, "status").text


def wait_page(driver, condition, message, timeout=10):
    """Waits for `condition(driver)`; the failure names the page's status line (API errors show there)."""
    from selenium.common.exceptions import StaleElementReferenceException

    def holds():
        try:
            return condition(driver)
        except StaleElementReferenceException:
            return False  # the page re-rendered what the condition read: look again

    try:
        return wait_until(holds, timeout=timeout, interval=0.05, message=message)
    except AssertionError as e:
        raise AssertionError(f"{e}; status line: {status_of(driver)!r}") from None


def open_page(driver, gateway):
    driver.get(gateway + "/")
    wait_page(driver, lambda d: js(d, "return !!(window.geochat && window.L)"), "the map script runs")
    wait_page(driver, lambda d: by_id(d, "map").get_attribute("data-land") == "loaded", "the coastlines load")


def start_session(driver, nick):
    field = by_id(driver, "nick")
    field.clear()
    field.send_keys(nick)
    by_id(driver, "nick-save").click()
    wait_page(driver, lambda d: js(d, "return sessionStorage.getItem('geochat.nick')") == nick
              and by_id(d, "whoami").text == "as " + nick, f"a session as {nick}")


def show_place(driver, latitude, longitude, zoom):
    """Pans and zooms as a user would with the mouse; waits for the rooms of the new view."""
    before = by_id(driver, "map").get_attribute("data-rooms-loaded")
    js(driver, "geochat.map.setView([arguments[0], arguments[1]], arguments[2], {animate: false})",
       latitude, longitude, zoom)
    wait_page(driver, lambda d: by_id(d, "map").get_attribute("data-rooms-loaded") != before,
              "the rooms of the view are fetched")


FREE_SPOT = """
const box = document.getElementById('map').getBoundingClientRect();
const cx = box.left + box.width / 2, cy = box.top + box.height / 2;
for (let r = 0; r < 200; r += 20) for (let a = 0; a < 360; a += 45) {
  const dx = Math.round(r * Math.cos(a * Math.PI / 180)), dy = Math.round(r * Math.sin(a * Math.PI / 180));
  const hit = document.elementFromPoint(cx + dx, cy + dy);
  if (hit && hit.closest('#map') && !hit.closest('.room-marker, .leaflet-control')) return [dx, dy];
  if (r === 0) break;
}
return null;
"""


def click_empty_map(driver):
    """Clicks the map near its centre where no room's marker is (earlier runs may have left rooms nearby)."""
    from selenium.webdriver.common.action_chains import ActionChains
    spot = js(driver, FREE_SPOT)
    assert spot, "no free spot on the map near its centre"
    ActionChains(driver).move_to_element_with_offset(by_id(driver, "map"), spot[0], spot[1]).click().perform()


def create_room_here(driver, topic):
    click_empty_map(driver)
    wait_page(driver, lambda d: by_id(d, "new-room-topic").is_displayed(), "the new-room form opens")
    by_id(driver, "new-room-topic").send_keys(topic)
    by_id(driver, "new-room-create").click()
    wait_page(driver, lambda d: by_id(d, "chat").is_displayed() and by_id(d, "chat-title").text == topic,
              "the new room's chat opens")
    return int(by_id(driver, "chat").get_attribute("data-room-id"))


def marker(driver, room):
    found = driver.find_elements("css selector", f'.room-marker[data-room-id="{room}"]')
    return found[0] if found else None


def open_room(driver, room, topic):
    wait_page(driver, lambda d: marker(d, room) is not None, f"room {room}'s marker on the map")
    assert marker(driver, room).text == topic
    marker(driver, room).click()
    wait_page(driver, lambda d: by_id(d, "chat").is_displayed() and by_id(d, "chat-title").text == topic,
              f"room {room}'s chat opens")


def live(driver):
    wait_page(driver, lambda d: by_id(d, "chat").get_attribute("data-live") == "open", "the event stream is open")


def participants(driver):
    # Read in one script: the page re-renders the list on every participants event and
    # presence check, and element handles read one by one can go stale in between.
    return js(driver, "return Array.from(document.querySelectorAll('#participants li'), (li) => li.innerText)")


def messages(driver):
    return [tuple(pair) for pair in js(driver, """
        return Array.from(document.querySelectorAll('#messages .message'),
                          (m) => [m.querySelector('.nick').innerText, m.querySelector('.text').innerText])""")]


WATCH = """
window.__seen = window.__seen || {};
if (!window.__watching) {
  window.__watching = true;
  new MutationObserver((changes) => {
    const now = Date.now();
    for (const change of changes) for (const node of change.addedNodes) {
      const text = node.querySelector && node.querySelector('.text');
      if (text && !(text.textContent in window.__seen)) window.__seen[text.textContent] = now;
    }
  }).observe(document.getElementById('messages'), {childList: true});
}
"""

SEND = """
document.getElementById('say-text').value = arguments[0];
const sent = Date.now();
document.getElementById('say-send').click();
return sent;
"""


def say_and_time(sender, receiver, text):
    """Says `text` in `sender`'s page; ms from the click on Send to the message appearing in `receiver`'s
    (both browsers read the same machine's clock)."""
    js(receiver, WATCH)
    sent = js(sender, SEND, text)
    seen = wait_page(receiver, lambda d: js(d, "return window.__seen[arguments[0]]", text),
                     f"{text!r} reaches the other browser", timeout=10)
    wait_page(sender, lambda d: text in [t for _, t in messages(d)], f"{text!r} in the sender's own list")
    return seen - sent


def phone_messages(gateway, room):
    response = chat(gateway, v=5, cmd="messages", chatid=room, past=0)
    assert response.status == 200, response
    return [(m["user"], m["text"]) for m in message_list(element(response, "messages"))]


def script_errors(driver):
    return [e["message"] for e in driver.get_log("browser")
            if e["level"] == "SEVERE" and "favicon" not in e["message"]
            and ("Uncaught" in e["message"] or "TypeError" in e["message"] or "ReferenceError" in e["message"])]


# ---------------------------------------------------------------- the test

def test_two_browsers_chat_on_the_map(stack, browsers):
    a, b = browsers
    gateway_a, gateway_b = stack["gateways"][0], stack["gateways"][1]
    for gateway in (gateway_a, gateway_b):
        page = http(gateway + "/")
        assert page.status == 200 and page.headers.get_content_type() == "text/html", page
    nick_a, nick_b = "wa" + uuid.uuid4().hex[:8], "wb" + uuid.uuid4().hex[:8]
    topic = f'web map <i>{uuid.uuid4().hex[:8]}</i> & "q"'  # HTML in a topic is text too
    # Near a city (so the screenshot shows land), somewhere of its own: zoom 8 is a view of about 5° by 2°.
    city_latitude, city_longitude = random.choice(PLACES)
    latitude, longitude, zoom = city_latitude + random.uniform(-0.3, 0.3), city_longitude + random.uniform(-0.3, 0.3), 8

    open_page(a, gateway_a)
    open_page(b, gateway_b)
    start_session(a, nick_a)
    start_session(b, nick_b)

    show_place(a, latitude, longitude, zoom)
    room = create_room_here(a, topic)
    assert marker(a, room) is not None, "the new room is on A's map"
    live(a)

    show_place(b, latitude, longitude, zoom)
    open_room(b, room, topic)
    live(b)
    wait_page(a, lambda d: {nick_a, nick_b} <= set(participants(d)), "A sees both in the room", timeout=10)
    wait_page(b, lambda d: {nick_a, nick_b} <= set(participants(d)), "B sees both in the room", timeout=10)

    a_to_b = say_and_time(a, b, "hello from A")
    b_to_a = say_and_time(b, a, "hello from B")
    print(f"web map delivery: A to B {a_to_b} ms, B to A {b_to_a} ms")
    assert a_to_b <= DELIVERY_LIMIT_MS, f"A's message took {a_to_b} ms to reach B's page"
    assert b_to_a <= DELIVERY_LIMIT_MS, f"B's message took {b_to_a} ms to reach A's page"
    for driver in (a, b):
        assert messages(driver)[-2:] == [(nick_a, "hello from A"), (nick_b, "hello from B")], messages(driver)

    # HTML in a message is text, in both pages, and runs nothing.
    injected = '<img src=x onerror="window.__xss=1"><b>bold</b>'
    say_and_time(a, b, injected)
    for driver in (a, b):
        assert messages(driver)[-1] == (nick_a, injected)
        assert not by_id(driver, "messages").find_elements("css selector", "img, b")
        assert not driver.find_elements("css selector", "#chat-title i, .room-marker i")
        assert js(driver, "return window.__xss === undefined")

    screenshot(a, "web-map.png")
    screenshot(b, "web-map-b.png")

    # A phone sees the same conversation, through either gateway.
    expected = [(nick_a, "hello from A"), (nick_b, "hello from B"), (nick_a, injected)]
    for gateway in (gateway_a, gateway_b):
        wait_until(lambda: phone_messages(gateway, room)[-3:] == expected, timeout=5,
                   message=f"the phone protocol on {gateway} lists the web map's messages")

    # A rename (PATCH /api/v1/session) shows in what B says next.
    renamed = nick_b + "_2"
    start_session(b, renamed)
    say_and_time(b, a, "renamed")
    assert messages(a)[-1] == (renamed, "renamed")

    # Leaving closes B's panel.
    by_id(b, "leave").click()
    wait_page(b, lambda d: not by_id(d, "chat").is_displayed(), "B's chat closes")

    for name, driver in (("A", a), ("B", b)):
        errors = script_errors(driver)
        assert not errors, f"script errors in {name}'s page: {errors}"
