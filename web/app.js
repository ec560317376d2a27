// GeoChat web map: rooms on a Leaflet map, chat over the JSON API (/api/v1) and Server-Sent Events.
// Plain JS modules, no build step. User text only ever goes into the page through textContent.
import { api, auth, humanError, isNetworkError, link } from './api.js';
import { DEFAULT_SETTINGS, addBaseMap, addMapButton, loadSettings } from './basemap.js';
import { Chats } from './chat.js';
import { addLocateControl, setUpPlaceSearch } from './places.js';
import { ROOM_MAX_ZOOM, RoomsOnMap } from './rooms.js';

const MAX_LAT = 85.0511287798;
const INFO_MS = 4000;
const URL_DEBOUNCE_MS = 300;
const NICK = /^[A-Za-z][A-Za-z0-9_]*$/;

const $ = (id) => document.getElementById(id);
const el = {
  nick: $('nick'), nickForm: $('nick-form'), nickSave: $('nick-save'), nickCount: $('nick-count'), whoami: $('whoami'),
  status: $('status'), conn: $('conn'), connText: $('conn-text'), announcer: $('announcer'),
  placeForm: $('place-search'), placeQuery: $('place-query'), placeResults: $('place-results'),
  side: $('side'), roomsToggle: $('rooms-toggle'),
  joinedSection: $('joined-section'), joinedList: $('joined-list'),
  roomList: $('room-list'), inViewCount: $('in-view-count'), roomListEmpty: $('room-list-empty'), roomListMore: $('room-list-more'),
  map: $('map'),
  newRoom: $('new-room'), newRoomWhere: $('new-room-where'), newRoomTopic: $('new-room-topic'), newRoomCount: $('new-room-count'),
  newRoomCancel: $('new-room-cancel'),
  chat: $('chat'), chatTitle: $('chat-title'), chatHide: $('chat-hide'), leave: $('leave'),
  participants: $('participants'), messages: $('messages'), older: $('older'), olderLoad: $('older-load'),
  say: $('say'), sayText: $('say-text'), sayCount: $('say-count'),
};

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const codePoints = (s) => [...s].length;
let settings = DEFAULT_SETTINGS;

// ------------------------------------------------------------------ the status line: errors until they recover

const notices = {
  errors: new Map(), // key -> {text, network}
  infoText: '',
  timer: null,
  report(key, text, options = {}) {
    this.errors.delete(key);
    this.errors.set(key, { text, network: !!options.network });
    this.render();
  },
  recover(key) {
    if (this.errors.delete(key)) this.render();
  },
  recoverNetwork() {
    for (const [key, error] of this.errors) if (error.network) this.errors.delete(key);
    this.render();
  },
  info(text) {
    this.infoText = text;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.infoText = ''; this.render(); }, INFO_MS);
    this.render();
  },
  render() {
    const latest = [...this.errors.values()].pop();
    const text = latest ? latest.text : this.infoText;
    if (el.status.textContent !== text) el.status.textContent = text;
    el.status.classList.toggle('error', !!latest);
    el.status.title = text;
  },
};

// ------------------------------------------------------------------ the connection indicator

function renderConnection(state) {
  const streaming = link.stream === 'open';
  const words = {
    live: streaming ? 'Live' : 'Online',
    reconnecting: link.wasLive ? 'Reconnecting…' : 'Connecting…',
    offline: 'Offline',
  };
  el.conn.dataset.state = state;
  el.connText.textContent = words[state];
  el.conn.title = {
    live: streaming ? 'Connected: new messages arrive as they are sent' : 'Connected',
    reconnecting: 'The connection dropped; trying again',
    offline: 'No connection to GeoChat; the page keeps trying',
  }[state];
}

link.listeners.add((state, previous) => {
  renderConnection(state);
  if (state === 'live' && previous && previous !== 'live') {
    notices.recoverNetwork();
    if (previous === 'offline') rooms.refresh();
  }
});
window.addEventListener('offline', () => link.changed());
window.addEventListener('online', () => {
  link.changed();
  rooms.refresh();
  chats.reconnect();
});

// ------------------------------------------------------------------ length counters

// The length error of a box (key) clears as soon as the box is within its limit again.
function counter(input, output, limit, key) {
  const update = () => {
    const n = codePoints(input.value.trim());
    const max = limit();
    const over = n > max;
    output.textContent = n + '/' + max + (over ? ' (too long)' : '');
    output.classList.toggle('over', over);
    if (over) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
    if (!over) notices.recover(key);
  };
  input.addEventListener('input', update);
  update();
  return update;
}

const updateNickCount = counter(el.nick, el.nickCount, () => settings.limits.nick, 'nick');
const updateTopicCount = counter(el.newRoomTopic, el.newRoomCount, () => settings.limits.topic, 'topic-length');
const updateSayCount = counter(el.sayText, el.sayCount, () => settings.limits.message, 'message-length');

// The server's limits: nicknames are ASCII (one unit a character); topics and messages count code points,
// so their boxes take up to two UTF-16 units a character and the counter tells what is too long.
function applyLimits() {
  el.nick.maxLength = settings.limits.nick;
  el.nick.pattern = '[A-Za-z][A-Za-z0-9_]{0,' + (settings.limits.nick - 1) + '}';
  el.newRoomTopic.maxLength = 2 * settings.limits.topic;
  el.sayText.maxLength = 2 * settings.limits.message;
  for (const update of [updateNickCount, updateTopicCount, updateSayCount]) update();
}

function tooLong(text, max, what, key) {
  const n = codePoints(text);
  if (n <= max) return false;
  const over = n - max;
  notices.report(key, what + ' is ' + over + (over === 1 ? ' character' : ' characters') + ' too long (at most ' + max + ')');
  return true;
}

// ------------------------------------------------------------------ the session (nickname)

function renderWho() {
  el.whoami.textContent = auth.session ? 'as ' + auth.nick : 'not signed in';
  el.nickSave.textContent = auth.session ? 'Rename' : 'Start';
  if (auth.nick && document.activeElement !== el.nick) el.nick.value = auth.nick;
  updateNickCount();
}

async function renameOrStart(nick) {
  if (auth.session) {
    try {
      const out = await api('PATCH', '/session', { nick });
      auth.set(out.session || auth.session, out.nick || nick);
      return 'Renamed to ' + auth.nick;
    } catch (e) {
      if (e.status !== 401 && e.status !== 404) throw e;
      auth.set(null, null); // the session expired: start a new one
    }
  }
  const out = await api('POST', '/sessions', { nick });
  auth.set(out.session, out.nick || nick);
  return 'Signed in as ' + auth.nick;
}

async function saveNick() {
  const nick = el.nick.value.trim();
  const max = settings.limits.nick;
  if (!NICK.test(nick) || nick.length > max) {
    notices.report('nick', 'A nickname is a letter, then letters, digits or _, up to ' + max + ' characters');
    el.nick.focus();
    return;
  }
  if (auth.session && nick === auth.nick) { notices.recover('nick'); notices.info('You are ' + nick); return; }
  try {
    notices.info(await renameOrStart(nick));
    notices.recover('nick');
  } catch (e) {
    notices.report('nick', humanError(e, 'Nickname not saved'), { network: isNetworkError(e) });
  }
}

el.nickForm.addEventListener('submit', (ev) => { ev.preventDefault(); saveNick(); });

auth.listeners.add(() => {
  renderWho();
  chats.sessionChanged();
  if (!auth.session) notices.report('session', 'Your session ended; choose your nickname again');
  else notices.recover('session');
});

function needSession() {
  if (auth.session) return true;
  notices.report('session', 'Choose a nickname first');
  el.nick.focus();
  return false;
}

// ------------------------------------------------------------------ the map

const map = L.map(el.map, {
  center: [30, 10], zoom: 2, minZoom: 1, maxZoom: DEFAULT_SETTINGS.tiles.maxZoom, worldCopyJump: true,
  zoomSnap: 1, attributionControl: true,
});
map.attributionControl.setPrefix(false);

let chats = null; // the rooms' hooks ask it; it is made right after them
const rooms = new RoomsOnMap(map, {
  map: el.map, list: el.roomList, count: el.inViewCount, empty: el.roomListEmpty, more: el.roomListMore,
}, {
  open: (id) => openRoom(id),
  activeRoom: () => chats && chats.current && chats.current.room,
  unread: (id) => (chats ? chats.unread(id) : 0),
  notices,
});

chats = new Chats(el, {
  rooms,
  notices,
  announce,
  roomLoaded: (room) => rooms.remember(room),
  changed: ({ push } = {}) => pageChanged(push),
});

function openRoom(id) {
  closeNewRoom();
  return chats.open(id);
}

// ------------------------------------------------------------------ announcements (screen readers)

function announce(text) {
  const line = document.createElement('p');
  line.textContent = text;
  el.announcer.append(line);
  while (el.announcer.childElementCount > 5) el.announcer.firstElementChild.remove();
}

// ------------------------------------------------------------------ a new room: an explicit action

let pending = null; // {marker, follow}: follow, the spot is the map's centre until the map is clicked

function pendingPlace() {
  const at = pending.marker.getLatLng();
  return {
    latitude: clamp(at.lat, -MAX_LAT, MAX_LAT), longitude: at.wrap().lng,
    zoom: clamp(Math.round(map.getZoom()), 0, ROOM_MAX_ZOOM),
  };
}

function showWhere() {
  if (!pending) return;
  const p = pendingPlace();
  el.newRoomWhere.textContent = p.latitude.toFixed(4) + ', ' + p.longitude.toFixed(4) + ', for zoom ' + p.zoom;
  el.newRoom.dataset.zoom = String(p.zoom);
}

function openNewRoom(latlng) {
  closeNewRoom();
  pending = {
    follow: !latlng,
    marker: L.circleMarker(latlng || map.getCenter(), {
      radius: 7, color: '#d9480f', weight: 2, fillOpacity: 0.3, interactive: false,
    }).addTo(map),
  };
  el.newRoomTopic.value = '';
  updateTopicCount();
  showWhere();
  el.newRoom.hidden = false;
  el.newRoomTopic.focus();
}

function closeNewRoom(restoreFocus) {
  if (!pending) return;
  pending.marker.remove();
  pending = null;
  el.newRoom.hidden = true;
  notices.recover('create');
  notices.recover('topic-length');
  if (restoreFocus) document.getElementById('new-room-here').focus();
}

map.on('move', () => {
  if (pending && pending.follow) pending.marker.setLatLng(map.getCenter());
  showWhere();
});
map.on('zoomend', showWhere);
// A click on the map moves the spot of an open form; it never opens one (a double-click zooms).
map.on('click', (ev) => {
  if (!pending) return;
  pending.follow = false;
  pending.marker.setLatLng(ev.latlng);
  showWhere();
});
map.on('contextmenu', (ev) => openNewRoom(ev.latlng)); // right-click or long press: a room right there

addMapButton(map, {
  position: 'topright', className: 'new-room-here', id: 'new-room-here', text: '+ New room here',
  title: 'Start a room at the centre of the map', onClick: () => openNewRoom(null),
});

el.newRoomCancel.addEventListener('click', () => closeNewRoom(true));
el.newRoom.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') closeNewRoom(true); });

el.newRoom.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!pending) return;
  const topic = el.newRoomTopic.value.trim();
  if (!topic) { notices.report('create', 'A room needs a topic'); el.newRoomTopic.focus(); return; }
  if (tooLong(topic, settings.limits.topic, 'The topic', 'topic-length')) return;
  if (!needSession()) return;
  try {
    const room = await api('POST', '/rooms', { ...pendingPlace(), topic });
    closeNewRoom();
    rooms.remember(room);
    notices.info('Created room “' + room.topic + '”');
    await openRoom(room.id);
  } catch (e) {
    notices.report('create', humanError(e, 'Room not created'), { network: isNetworkError(e) });
  }
});

// ------------------------------------------------------------------ the chat panel's controls

el.say.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const text = el.sayText.value;
  if (!chats.current || !text.trim()) return;
  if (tooLong(text.trim(), settings.limits.message, 'The message', 'message-length')) return;
  if (!needSession()) return;
  el.sayText.value = '';
  updateSayCount();
  const room = chats.current;
  const sent = await chats.say(text);
  if (!sent && chats.current === room && !el.sayText.value) { // give it back to try again
    el.sayText.value = text;
    updateSayCount();
  }
});

el.leave.addEventListener('click', () => chats.leave(chats.shownId));
el.chatHide.addEventListener('click', () => chats.hide());

el.roomsToggle.addEventListener('click', () => {
  const open = el.side.classList.toggle('open');
  el.roomsToggle.setAttribute('aria-expanded', String(open));
  map.invalidateSize();
});

// ------------------------------------------------------------------ the address: room and view

function viewParam() {
  const zoom = map.getZoom(), c = map.getCenter();
  const digits = Math.max(0, Math.ceil(Math.log(Math.max(zoom, 1)) / Math.LN2));
  return zoom + '/' + c.lat.toFixed(digits) + '/' + c.wrap().lng.toFixed(digits);
}

function hashFor(roomId) {
  return '#map=' + viewParam() + (roomId ? '&room=' + roomId : '');
}

function readHash() {
  const q = new URLSearchParams(location.hash.slice(1));
  const parts = (q.get('map') || '').split('/').map(Number);
  const view = parts.length === 3 && parts.every(Number.isFinite)
    ? { zoom: clamp(Math.round(parts[0]), 1, map.getMaxZoom()), lat: clamp(parts[1], -MAX_LAT, MAX_LAT), lng: parts[2] }
    : null;
  const room = Number(q.get('room'));
  return { view, room: Number.isInteger(room) && room > 0 ? room : null };
}

let following = false; // applying the address: no new history entries for what it says

function writeHash(push) {
  const hash = hashFor(chats.shownId);
  if (following || hash === location.hash) return;
  history[push ? 'pushState' : 'replaceState'](null, '', hash);
}

let urlTimer = null;
map.on('moveend', () => {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => writeHash(false), URL_DEBOUNCE_MS);
});

async function followHash() {
  const { view, room } = readHash();
  following = true;
  try {
    if (view && !sameView(view)) map.setView([view.lat, view.lng], view.zoom, { animate: false });
    if (room && chats.shownId !== room) {
      const opened = chats.open(room, { push: false, focus: false });
      following = false;
      const shown = await opened;
      if (!view && shown && shown.latitude !== undefined) map.setView([shown.latitude, shown.longitude], shown.zoom, { animate: false });
    } else if (!room && chats.shownId) {
      chats.hide({ push: false });
    }
  } finally {
    following = false;
  }
}

function sameView(view) {
  const c = map.getCenter();
  return view.zoom === map.getZoom() && Math.abs(view.lat - c.lat) < 1e-4 && Math.abs(view.lng - c.wrap().lng) < 1e-4;
}

window.addEventListener('popstate', followHash);
window.addEventListener('hashchange', followHash);

// ------------------------------------------------------------------ the title and what follows a change

function pageChanged(push) {
  const total = chats.unreadTotal;
  const base = chats.current ? chats.current.room.topic + ' — GeoChat' : 'GeoChat map';
  document.title = (total ? '(' + total + ') ' : '') + base;
  rooms.renderList();
  rooms.markActive();
  map.invalidateSize();
  if (push !== undefined) writeHash(push);
}

// ------------------------------------------------------------------ leaving with the tab

window.addEventListener('pagehide', () => chats.exitPage());
window.addEventListener('pageshow', (ev) => { if (ev.persisted) chats.resumePage(); });

// ------------------------------------------------------------------ start

async function start() {
  renderWho(); // the indicator says "Connecting…" until the first answer (or failure)
  addLocateControl(map, notices);
  const hadView = readHash().view;
  if (hadView) map.setView([hadView.lat, hadView.lng], hadView.zoom, { animate: false });
  settings = await loadSettings();
  applyLimits();
  addBaseMap(map, settings, el.map, notices);
  setUpPlaceSearch(settings, map, { form: el.placeForm, query: el.placeQuery, results: el.placeResults }, notices);
  el.map.dataset.settings = 'loaded';
  chats.restore();
  await followHash();
  rooms.refresh();
  writeHash(false);
}

// For tests and the console.
window.geochat = {
  map, rooms, chats, link, openRoom, notices,
  get settings() { return settings; },
  get current() { return chats.current; },
  refreshRooms: () => rooms.refresh(),
  closeRoom: () => chats.hide(),
};

start();
