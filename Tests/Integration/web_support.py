"""The web map in headless Chromium, for test_web_map.py: browsers, the page as a user drives it, and,
for the operator-set base map and place search, a tile server and a geocoder of our own on loopback
with a proxy that serves a gateway's page as one configured with them would.

Needs chromium, chromium-driver and selenium (deploy/install-browser.sh). Selenium drives the system's
/usr/bin/chromedriver (SE_OFFLINE: Selenium Manager downloads nothing)."""
import http.client
import http.server
import json
import os
import shutil
import struct
import threading
import urllib.parse
import urllib.request
import warnings
import zlib

import pytest

from geochat_support.waiting import wait_until

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL_HINT = "run deploy/install-browser.sh (apt chromium chromium-driver libjs-leaflet, selenium into .venv)"

os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager fetch a driver or a browser


# ---------------------------------------------------------------- browsers

def _selenium():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("the web map test needs selenium in the test venv: " + INSTALL_HINT, pytrace=False)
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) or shutil.which(os.path.basename(path))):
            pytest.fail(f"the web map test needs {path}: " + INSTALL_HINT, pytrace=False)
    return webdriver, Service


def new_browser(width=1280, height=800):
    webdriver, Service = _selenium()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},{height}",
                     "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--lang=en-GB"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(15)
    return driver


class Browsers:
    """Starts browsers on demand; quits them all at the end of the test."""

    def __init__(self):
        self.started = []

    def page(self, gateway=None, **size):
        page = Page(new_browser(**size))
        self.started.append(page.driver)
        if gateway:
            page.open(gateway)
        return page

    def quit(self):
        for driver in self.started:
            try:
                driver.quit()
            except Exception:  # noqa: BLE001 — the browser may already be gone; the test's own error matters
                pass


def screenshot(page, name):
    directory = os.environ.get("GEOCHAT_SCREENSHOT_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        page.driver.save_screenshot(os.path.join(directory, name))


# ---------------------------------------------------------------- the page, as a user drives it

FREE_SPOT = """
const box = document.getElementById('map').getBoundingClientRect();
const cx = box.left + box.width / 2 + arguments[0], cy = box.top + box.height / 2 + arguments[1];
for (let r = 0; r < 200; r += 20) for (let a = 0; a < 360; a += 45) {
  const dx = Math.round(r * Math.cos(a * Math.PI / 180)), dy = Math.round(r * Math.sin(a * Math.PI / 180));
  const hit = document.elementFromPoint(cx + dx, cy + dy);
  if (hit && hit.closest('#map') && !hit.closest('.leaflet-marker-icon, .leaflet-control')) {
    return [Math.round(cx + dx - box.left - box.width / 2), Math.round(cy + dy - box.top - box.height / 2)];
  }
  if (r === 0) break;
}
return null;
"""

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
const box = document.getElementById('say-text');
box.value = arguments[0];
box.dispatchEvent(new Event('input'));
const sent = Date.now();
document.getElementById('say-send').click();
return sent;
"""

# The marker of a room: its pin, or the count it is in.
SHOWN_AS = """
const pin = document.querySelector('.room-pin[data-room-id="' + arguments[0] + '"]');
if (pin) return 'pin';
for (const c of document.querySelectorAll('.room-cluster')) {
  if (c.dataset.rooms.split(',').includes(String(arguments[0]))) return 'count';
}
return null;
"""


class Page:
    def __init__(self, driver):
        self.driver = driver

    # -- basics
    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def by_id(self, element_id):
        return self.driver.find_element("id", element_id)

    def css(self, selector):
        return self.driver.find_elements("css selector", selector)

    @property
    def status(self):
        return self.by_id("status").text

    @property
    def status_is_error(self):
        return "error" in (self.by_id("status").get_attribute("class") or "")

    def wait(self, condition, message, timeout=10):
        """Waits for `condition(page)`; the failure names the page's status line (errors show there)."""
        from selenium.common.exceptions import StaleElementReferenceException

        def holds():
            try:
                return condition(self)
            except StaleElementReferenceException:
                return False  # the page re-rendered what the condition read: look again

        try:
            return wait_until(holds, timeout=timeout, interval=0.05, message=message)
        except AssertionError as e:
            raise AssertionError(f"{e}; status line: {self.status!r}") from None

    def open(self, gateway, fragment=""):
        self.driver.get(gateway + "/" + fragment)
        self.ready()

    def ready(self):
        self.wait(lambda p: p.js("return !!(window.geochat && window.L)"), "the map script runs")
        self.wait(lambda p: p.by_id("map").get_attribute("data-base-ready") == "yes", "the base map loads")

    def sign_in(self, nick):
        field = self.by_id("nick")
        field.clear()
        field.send_keys(nick)
        self.by_id("nick-save").click()
        self.wait(lambda p: p.js("return sessionStorage.getItem('geochat.nick')") == nick
                  and p.by_id("whoami").text == "as " + nick, f"a session as {nick}")

    def session(self):
        return self.js("return sessionStorage.getItem('geochat.session')")

    def show(self, latitude, longitude, zoom):
        """Pans and zooms as a user would with the mouse; waits for the rooms of the new view."""
        before = self.by_id("map").get_attribute("data-rooms-loaded")
        self.js("geochat.map.setView([arguments[0], arguments[1]], arguments[2], {animate: false})",
                latitude, longitude, zoom)
        self.wait(lambda p: p.by_id("map").get_attribute("data-rooms-loaded") != before,
                  "the rooms of the view are fetched")

    def refetch(self):
        before = self.by_id("map").get_attribute("data-rooms-loaded")
        self.js("geochat.refreshRooms()")
        self.wait(lambda p: p.by_id("map").get_attribute("data-rooms-loaded") != before, "the rooms are fetched again")

    def wait_fetched(self, condition, message, timeout=10):
        """Waits for `condition(page)`, fetching the rooms of the view again until it holds (a room made
        through the API reaches a gateway's room index a moment after its answer)."""
        def fetched_and_holds(page):
            if condition(page):
                return True
            page.refetch()
            return condition(page)
        return self.wait(fetched_and_holds, message, timeout=timeout)

    def view(self):
        return self.js("const c = geochat.map.getCenter(); return [c.lat, c.lng, geochat.map.getZoom()]")

    def point_of(self, latitude, longitude):
        """Pixel offset of a place from the map's centre."""
        return self.js("""const p = geochat.map.latLngToContainerPoint([arguments[0], arguments[1]]);
                          const s = geochat.map.getSize(); return [p.x - s.x / 2, p.y - s.y / 2]""", latitude, longitude)

    def free_spot(self, dx=0, dy=0):
        spot = self.js(FREE_SPOT, dx, dy)
        assert spot, "no free spot on the map"
        return spot

    def click_map(self, dx, dy, double=False):
        from selenium.webdriver.common.action_chains import ActionChains
        chain = ActionChains(self.driver).move_to_element_with_offset(self.by_id("map"), dx, dy)
        (chain.double_click() if double else chain.click()).perform()

    # -- rooms
    def pin(self, room):
        found = self.css(f'.room-pin[data-room-id="{room}"]')
        return found[0] if found else None

    def label(self, room):
        found = self.css(f'.room-label[data-room-id="{room}"]')
        return found[0] if found else None

    def list_item(self, room):
        found = self.css(f'#room-list .room-item[data-room-id="{room}"]')
        return found[0] if found else None

    def listed(self):
        return [int(i) for i in self.js(
            "return Array.from(document.querySelectorAll('#room-list .room-item'), (b) => b.dataset.roomId)")]

    def shown_as(self, room):
        return self.js(SHOWN_AS, room)

    def create_room(self, topic):
        """The explicit action: "New room here" (the map's centre), a topic, Create."""
        self.by_id("new-room-here").click()
        self.wait(lambda p: p.by_id("new-room-topic").is_displayed(), "the new-room form opens")
        self.by_id("new-room-topic").send_keys(topic)
        self.by_id("new-room-create").click()
        self.wait(lambda p: p.chat_open(topic), "the new room's chat opens")
        return int(self.by_id("chat").get_attribute("data-room-id"))

    def chat_open(self, topic=None):
        return self.by_id("chat").is_displayed() and (topic is None or self.by_id("chat-title").text == topic)

    def shown_room(self):
        value = self.by_id("chat").get_attribute("data-room-id")
        return int(value) if value and self.by_id("chat").is_displayed() else None

    def open_by_pin(self, room, topic):
        self.wait(lambda p: p.pin(room) is not None, f"room {room}'s pin on the map")
        self.pin(room).click()
        self.wait(lambda p: p.chat_open(topic), f"room {room}'s chat opens")

    def live(self):
        self.wait(lambda p: p.by_id("chat").get_attribute("data-live") == "open", "the event stream is open")

    def participants(self):
        # Read in one script: the page re-renders the list on every participants event.
        return self.js("return Array.from(document.querySelectorAll('#participants li'), (li) => li.innerText)")

    def messages(self):
        return [tuple(pair) for pair in self.js("""
            return Array.from(document.querySelectorAll('#messages .message'),
                              (m) => [m.querySelector('.nick').innerText, m.querySelector('.text').innerText])""")]

    def say(self, text):
        self.js(SEND, text)

    def unread_badge(self, room):
        return self.js("""const b = document.querySelector('#joined-list .room-item[data-room-id="' + arguments[0] + '"] .badge');
                          return b && !b.hidden ? b.textContent : ''""", room)

    def script_errors(self):
        return [e["message"] for e in self.driver.get_log("browser")
                if e["level"] == "SEVERE" and "favicon" not in e["message"]
                and ("Uncaught" in e["message"] or "TypeError" in e["message"] or "ReferenceError" in e["message"]
                     or "Content Security Policy" in e["message"])]


def say_and_time(sender, receiver, text):
    """Says `text` in `sender`'s page; ms from the click on Send to the message appearing in `receiver`'s
    (both browsers read the same machine's clock)."""
    receiver.js(WATCH)
    sent = sender.js(SEND, text)
    seen = receiver.wait(lambda p: p.js("return window.__seen[arguments[0]]", text),
                         f"{text!r} reaches the other browser", timeout=10)
    sender.wait(lambda p: text in [t for _, t in p.messages()], f"{text!r} in the sender's own list")
    return seen - sent


# ---------------------------------------------------------------- axe-core, from an installed package

def axe_source():
    """axe.min.js as the PyPI package selenium-axe-python ships it (axe-core 4.9), or None when the package
    is not installed. Read from its files, not imported: nothing of the package runs."""
    import importlib.util
    spec = importlib.util.find_spec("selenium_axe_python")
    if not spec or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "axe-core", "axe.min.js")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def assert_no_script_errors(*pages):
    for page in pages:
        errors = page.script_errors()
        assert not errors, f"script errors (or CSP refusals) in the page: {errors}"


ACCESSIBLE_NAMES = """
const unnamed = [];
for (const node of document.querySelectorAll('input, button, select, textarea, [role="button"], [tabindex="0"]')) {
  if (node.closest('[hidden]') || node.getClientRects().length === 0) continue;
  const labelled = (node.labels && Array.from(node.labels).some((l) => l.textContent.trim()))
    || (node.getAttribute('aria-label') || '').trim()
    || (node.getAttribute('aria-labelledby') || '').split(' ').some((id) => id && document.getElementById(id)
         && document.getElementById(id).textContent.trim())
    || ((node.tagName === 'BUTTON' || node.getAttribute('role') === 'button') && node.textContent.trim())
    || (node.getAttribute('title') || '').trim();
  if (!labelled) unnamed.push(node.outerHTML.slice(0, 120));
}
return unnamed;
"""

RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']})
  .then((r) => done(r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                                               nodes: v.nodes.slice(0, 3).map((n) => n.html)}))))
  .catch((e) => done({error: String(e)}));
"""


def assert_accessible_by_axe(page):
    """axe-core over the page as it is: no serious or critical violation. Without the checker installed,
    a warning outside CI; in CI a failure (deploy/install-browser.sh installs it)."""
    source = axe_source()
    if source is None:
        assert not os.environ.get("CI"), "axe-core not installed (PyPI selenium-axe-python, deploy/install-browser.sh)"
        warnings.warn("axe-core not installed (PyPI selenium-axe-python): only the checks by hand ran")
        return
    page.js(source)
    found = page.driver.execute_async_script(RUN_AXE)
    assert not (isinstance(found, dict) and found.get("error")), found
    for violation in found:
        print(f"axe: {violation['impact']}: {violation['id']}: {violation['help']} {violation['nodes']}")
    serious = [v for v in found if v["impact"] in ("serious", "critical")]
    assert serious == [], f"axe-core: serious or critical violations: {serious}"


# ---------------------------------------------------------------- an operator's tile server and geocoder

def png(width, height, rgb):
    """A solid-colour PNG (8-bit RGB), made here: no image library needed."""
    row = b"\x00" + bytes(rgb) * width
    raw = zlib.compress(row * height)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


TILE = png(256, 256, (205, 222, 190))
PLACES = {
    "alexanderplatz": [
        {"display_name": "Alexanderplatz, Mitte, Berlin, Deutschland", "lat": "52.5219", "lon": "13.4132",
         "boundingbox": ["52.5201", "52.5237", "13.4101", "13.4163"]},
        {"display_name": "Alexanderplatz, Zehdenick, Brandenburg, Deutschland", "lat": "52.9784", "lon": "13.3337",
         "boundingbox": ["52.9779", "52.9789", "13.3330", "13.3344"]},
    ],
}


class MapServices:
    """A tile server (`/tiles/{z}/{x}/{y}.png`, a plain PNG for every tile) and a Nominatim-compatible
    geocoder (`/search`, answering PLACES, CORS open as Nominatim's is) on one loopback port."""

    def __init__(self):
        services = self
        self.tiles_served = []
        self.searches = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                if url.path.startswith("/tiles/") and url.path.endswith(".png"):
                    services.tiles_served.append(url.path)
                    self.answer(200, "image/png", TILE)
                elif url.path == "/search":
                    query = urllib.parse.parse_qs(url.query)
                    services.searches.append(query)
                    text = (query.get("q") or [""])[0].strip().lower()
                    self.answer(200, "application/json", json.dumps(PLACES.get(text, [])).encode())
                else:
                    self.answer(404, "text/plain", b"not found\n")

            def answer(self, status, content_type, body):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.tile_url = self.origin + "/tiles/{z}/{x}/{y}.png"
        self.geocoder_url = self.origin + "/search"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection", "host"}


class ConfiguredGateway:
    """A gateway's page as a gateway started with GEOCHAT_MAP_TILE_URL, GEOCHAT_MAP_TILE_ATTRIBUTION and
    GEOCHAT_MAP_GEOCODER_URL serves it: a loopback proxy in front of `gateway` that answers
    /map/settings.json with those settings (the gateway's own limits kept) and adds the tile server's
    origin to the Content-Security-Policy's img-src and the geocoder's to connect-src, as the gateway
    does (MapSettings, SecurityHeaders). Everything else passes through as it is, streams included."""

    def __init__(self, gateway, tile_url, attribution, geocoder_url, max_zoom=19):
        upstream = urllib.parse.urlparse(gateway)
        with urllib.request.urlopen(gateway + "/map/settings.json", timeout=10) as r:
            settings = json.load(r)
        settings["tiles"] = {"url": tile_url, "attribution": attribution, "maxZoom": max_zoom}
        settings["geocoder"] = {"url": geocoder_url}
        settings_body = json.dumps(settings).encode()
        tile_origin = _origin(tile_url)
        geocoder_origin = _origin(geocoder_url)

        def policy(csp):
            parts = [p.strip() for p in csp.split(";")]
            parts = [p + " " + tile_origin if p.startswith("img-src") else p for p in parts]
            parts = [p + " " + geocoder_origin if p.startswith("connect-src") else p for p in parts]
            return "; ".join(parts)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request a connection; a stream ends when the upstream's does

            def log_message(self, *args):
                pass

            def do_GET(self):
                if urllib.parse.urlparse(self.path).path == "/map/settings.json":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(settings_body)))
                    self.end_headers()
                    self.wfile.write(settings_body)
                    return
                self.forward()

            do_POST = do_PATCH = do_DELETE = do_HEAD = lambda self: self.forward()

            def forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    self.send_response(response.status, response.reason)
                    for name, value in response.getheaders():
                        if name.lower() in HOP_BY_HOP:
                            continue
                        if name.lower() == "content-security-policy":
                            value = policy(value)
                        self.send_header(name, value)
                    self.end_headers()
                    while True:
                        chunk = response.read1(65536)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    pass  # the browser or the gateway went away: so does this request
                finally:
                    connection.close()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _origin(url):
    parsed = urllib.parse.urlparse(url.replace("{", "%7B").replace("}", "%7D"))
    return f"{parsed.scheme}://{parsed.netloc}"


def wait_for(condition, message, timeout=10):
    return wait_until(condition, timeout=timeout, interval=0.05, message=message)
