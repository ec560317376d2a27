// GeoChat web map: rooms on a Leaflet map, chat over the JSON API (/api/v1) and Server-Sent Events.
// Plain JS, no build step. User text only ever goes into the page through textContent.
'use strict';

(function () {
  const API = '/api/v1';
  const MAX_LAT = 85.0511287798; // Web Mercator's edge
  const ROOM_MAX_ZOOM = 17;
  const MOVE_DEBOUNCE_MS = 250;

  const $ = (id) => document.getElementById(id);
  const el = {
    nick: $('nick'), nickForm: $('nick-form'), nickSave: $('nick-save'), whoami: $('whoami'), status: $('status'),
    map: $('map'),
    newRoom: $('new-room'), newRoomWhere: $('new-room-where'), newRoomTopic: $('new-room-topic'),
    newRoomCancel: $('new-room-cancel'),
    chat: $('chat'), chatTitle: $('chat-title'), participants: $('participants'), messages: $('messages'),
    say: $('say'), sayText: $('say-text'), leave: $('leave'),
  };

  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

  // ------------------------------------------------------------------ status line

  let statusTimer = null;
  function status(text, isError) {
    el.status.textContent = text;
    el.status.classList.toggle('error', !!isError);
    el.status.title = text;
    clearTimeout(statusTimer);
    if (text && !isError) statusTimer = setTimeout(() => { el.status.textContent = ''; }, 4000);
  }
  function showError(err) {
    status(err && err.message ? err.message : String(err), true);
  }

  // ------------------------------------------------------------------ API client

  class ApiError extends Error {
    constructor(status, detail, code) {
      super(detail);
      this.status = status;
      this.code = code;
    }
  }

  const auth = {
    session: sessionStorage.getItem('geochat.session'),
    nick: sessionStorage.getItem('geochat.nick'),
    set(session, nick) {
      this.session = session;
      this.nick = nick;
      if (session) {
        sessionStorage.setItem('geochat.session', session);
        sessionStorage.setItem('geochat.nick', nick);
      } else {
        sessionStorage.removeItem('geochat.session');
        sessionStorage.removeItem('geochat.nick');
      }
      renderWho();
    },
  };

  async function api(method, path, body, options) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (auth.session) headers.Authorization = 'Bearer ' + auth.session;
    let response;
    try {
      response = await fetch(API + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        signal: options && options.signal,
      });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new ApiError(0, 'Network error: ' + method + ' ' + path + ' (' + e.message + ')', 'network');
    }
    if (response.status === 204) return null;
    const type = response.headers.get('Content-Type') || '';
    let data = null;
    if (type.includes('json')) {
      try { data = await response.json(); } catch (e) { data = null; }
    }
    if (!response.ok) {
      let detail = (data && (data.detail || data.title)) || (response.status + ' ' + response.statusText);
      if (response.status === 401 && auth.session) {
        auth.set(null, null); // the session ended (expired, or deleted elsewhere)
        detail += ' — choose your nickname again';
      }
      throw new ApiError(response.status, detail, data && data.code);
    }
    return data;
  }

  // ------------------------------------------------------------------ session (nickname)

  const NICK = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;

  function renderWho() {
    el.whoami.textContent = auth.session ? 'as ' + auth.nick : 'not signed in';
    el.nickSave.textContent = auth.session ? 'Rename' : 'Start';
    if (auth.nick && document.activeElement !== el.nick) el.nick.value = auth.nick;
  }

  async function saveNick() {
    const nick = el.nick.value.trim();
    if (!NICK.test(nick)) {
      status('A nickname is a letter, then letters, digits or _, up to 32 characters', true);
      return;
    }
    try {
      if (auth.session && nick === auth.nick) { status('You are ' + nick); return; }
      if (auth.session) {
        try {
          const out = await api('PATCH', '/session', { nick });
          auth.set(out.session || auth.session, out.nick || nick);
          status('Renamed to ' + auth.nick);
          return;
        } catch (e) {
          if (e.status !== 401 && e.status !== 404) throw e;
          auth.set(null, null); // the session expired: start a new one
        }
      }
      const out = await api('POST', '/sessions', { nick });
      auth.set(out.session, out.nick || nick);
      status('Signed in as ' + auth.nick);
      if (current) join(current.id);
    } catch (e) {
      showError(e);
    }
  }

  el.nickForm.addEventListener('submit', (ev) => { ev.preventDefault(); saveNick(); });

  async function needSession() {
    if (auth.session) return true;
    status('Choose a nickname first', true);
    el.nick.focus();
    return false;
  }

  // ------------------------------------------------------------------ map and base layer

  const map = L.map(el.map, {
    center: [30, 10], zoom: 2, minZoom: 1, maxZoom: 18, worldCopyJump: true,
    zoomSnap: 1, attributionControl: true, preferCanvas: false,
  });
  map.attributionControl.setPrefix(false);
  map.attributionControl.addAttribution('Land: Natural Earth (public domain)');

  const baseRenderer = L.canvas({ padding: 0.5 }); // land and graticule: many paths, no events
  const graticule = L.layerGroup().addTo(map);
  const graticuleStyle = { color: '#8fb0c9', weight: 1, opacity: 0.6, interactive: false, renderer: baseRenderer };
  const graticuleMajor = { color: '#6f95b3', weight: 1.3, opacity: 0.8, interactive: false, renderer: baseRenderer };

  function graticuleStep(zoom) {
    if (zoom <= 2) return 30;
    if (zoom <= 3) return 15;
    if (zoom <= 4) return 10;
    if (zoom <= 5) return 5;
    if (zoom <= 7) return 2;
    if (zoom <= 8) return 1;
    if (zoom <= 10) return 0.5;
    if (zoom <= 12) return 0.1;
    if (zoom <= 14) return 0.05;
    return 0.01;
  }

  function drawGraticule() {
    graticule.clearLayers();
    const step = graticuleStep(map.getZoom());
    const b = map.getBounds().pad(0.2);
    const south = Math.max(-MAX_LAT, b.getSouth()), north = Math.min(MAX_LAT, b.getNorth());
    const west = b.getWest(), east = b.getEast();
    const lat0 = Math.ceil(south / step), lat1 = Math.floor(north / step);
    const lon0 = Math.ceil(west / step), lon1 = Math.floor(east / step);
    if (lat1 - lat0 > 200 || lon1 - lon0 > 400) return;
    for (let i = lat0; i <= lat1; i++) {
      const lat = i * step;
      graticule.addLayer(L.polyline([[lat, west], [lat, east]], i === 0 ? graticuleMajor : graticuleStyle));
    }
    for (let i = lon0; i <= lon1; i++) {
      const lon = i * step;
      graticule.addLayer(L.polyline([[south, lon], [north, lon]], i % Math.round(360 / step) === 0 ? graticuleMajor : graticuleStyle));
    }
  }

  let land = null;
  fetch('/map/world.geojson')
    .then((r) => { if (!r.ok) throw new Error('world.geojson: ' + r.status); return r.json(); })
    .then((world) => {
      // Three copies, so that panning across the antimeridian shows land on both sides.
      const shifted = (dx) => ({
        type: 'FeatureCollection',
        features: world.features.map((f) => ({
          type: 'Feature', properties: f.properties,
          geometry: {
            type: f.geometry.type,
            coordinates: f.geometry.type === 'Polygon'
              ? f.geometry.coordinates.map((ring) => ring.map(([x, y]) => [x + dx, y]))
              : f.geometry.coordinates.map((poly) => poly.map((ring) => ring.map(([x, y]) => [x + dx, y]))),
          },
        })),
      });
      land = L.layerGroup([-360, 0, 360].map((dx) => L.geoJSON(shifted(dx), {
        interactive: false, renderer: baseRenderer,
        style: { color: '#b9ae96', weight: 0.8, fillColor: '#f3efe4', fillOpacity: 1 },
      })));
      land.addTo(map);
      land.eachLayer((l) => l.bringToBack());
      el.map.dataset.land = 'loaded';
    })
    .catch((e) => { el.map.dataset.land = 'failed'; status('Coastlines not loaded: ' + e.message, true); });

  // ------------------------------------------------------------------ rooms on the map

  const markers = new Map(); // room id -> L.Marker
  const rooms = new Map(); // room id -> Room

  const RoomIcon = L.DivIcon.extend({
    createIcon(old) {
      const div = L.DivIcon.prototype.createIcon.call(this, old);
      div.dataset.roomId = String(this.options.room.id);
      div.title = this.options.room.topic;
      div.classList.toggle('active', !!(current && current.id === this.options.room.id));
      return div;
    },
  });

  function roomIcon(room) {
    const html = document.createElement('div');
    const pin = document.createElement('span');
    pin.className = 'pin';
    const topic = document.createElement('span');
    topic.className = 'topic';
    topic.textContent = room.topic;
    html.append(pin, topic);
    return new RoomIcon({ className: 'room-marker', html, iconSize: [12, 12], iconAnchor: [6, 6], room });
  }

  function showRoom(room) {
    rooms.set(room.id, room);
    let marker = markers.get(room.id);
    if (marker) {
      const old = marker.options.icon.options.room;
      if (old.topic !== room.topic || old.latitude !== room.latitude || old.longitude !== room.longitude) {
        marker.setLatLng([room.latitude, nearLon(room.longitude)]);
        marker.setIcon(roomIcon(room));
      }
      return marker;
    }
    marker = L.marker([room.latitude, nearLon(room.longitude)], {
      icon: roomIcon(room), keyboard: true, title: room.topic, riseOnHover: true,
    });
    marker.on('click', () => openRoom(room.id));
    marker.addTo(map);
    markers.set(room.id, marker);
    return marker;
  }

  // The copy of a longitude nearest the map's centre (the map may show longitudes beyond ±180).
  function nearLon(lon) {
    const c = map.getCenter().lng;
    return lon + 360 * Math.round((c - lon) / 360);
  }

  function markActive() {
    for (const [id, marker] of markers) {
      const node = marker.getElement();
      if (node) node.classList.toggle('active', !!(current && current.id === id));
    }
  }

  // The visible box in degrees, split in two where it crosses the antimeridian.
  function visibleBoxes() {
    const b = map.getBounds();
    const south = clamp(b.getSouth(), -MAX_LAT, MAX_LAT), north = clamp(b.getNorth(), -MAX_LAT, MAX_LAT);
    let west = b.getWest(), east = b.getEast();
    if (east - west >= 360) return [{ south, west: -180, north, east: 180 }];
    const wrap = (x) => ((x + 180) % 360 + 360) % 360 - 180;
    west = wrap(west); east = wrap(east);
    if (east === -180) east = 180;
    if (west <= east) return [{ south, west, north, east }];
    return [{ south, west, north, east: 180 }, { south, west: -180, north, east }];
  }

  let fetching = false, fetchAgain = false, moveTimer = null;

  async function refreshRooms() {
    if (fetching) { fetchAgain = true; return; }
    fetching = true;
    fetchAgain = false;
    const zoom = Math.round(map.getZoom());
    const minZoom = clamp(zoom - 3, 0, ROOM_MAX_ZOOM), maxZoom = clamp(zoom + 3, 0, ROOM_MAX_ZOOM);
    try {
      const found = new Map();
      for (const box of visibleBoxes()) {
        const q = new URLSearchParams({
          south: box.south.toFixed(6), west: box.west.toFixed(6), north: box.north.toFixed(6), east: box.east.toFixed(6),
          minZoom: String(minZoom), maxZoom: String(maxZoom),
        });
        const out = await api('GET', '/rooms?' + q);
        for (const room of (out && out.rooms) || []) found.set(room.id, room);
      }
      for (const [id, marker] of markers) {
        if (!found.has(id) && !(current && current.id === id)) {
          marker.remove();
          markers.delete(id);
        }
      }
      for (const room of found.values()) showRoom(room);
      el.map.dataset.rooms = String(found.size);
      el.map.dataset.roomsLoaded = String(Date.now());
    } catch (e) {
      showError(e);
    } finally {
      fetching = false;
      if (fetchAgain) refreshRooms();
    }
  }

  function onMoveEnd() {
    drawGraticule();
    for (const marker of markers.values()) { // keep markers on the world copy in view
      const room = marker.options.icon.options.room;
      const lon = nearLon(room.longitude);
      if (lon !== marker.getLatLng().lng) marker.setLatLng([room.latitude, lon]);
    }
    clearTimeout(moveTimer);
    moveTimer = setTimeout(refreshRooms, MOVE_DEBOUNCE_MS);
  }
  map.on('moveend', onMoveEnd);

  // ------------------------------------------------------------------ creating a room

  let pending = null; // {latlng, marker}

  function closeNewRoom() {
    if (pending && pending.marker) pending.marker.remove();
    pending = null;
    el.newRoom.hidden = true;
  }

  map.on('click', (ev) => {
    closeNewRoom();
    const lat = clamp(ev.latlng.lat, -MAX_LAT, MAX_LAT), lng = ev.latlng.wrap().lng;
    pending = {
      lat, lng,
      marker: L.circleMarker(ev.latlng, { radius: 6, color: '#d9480f', weight: 2, fillOpacity: 0.3, interactive: false }).addTo(map),
    };
    el.newRoomWhere.textContent = lat.toFixed(4) + ', ' + lng.toFixed(4) + ' (zoom ' + clamp(Math.round(map.getZoom()), 0, ROOM_MAX_ZOOM) + ')';
    el.newRoomTopic.value = '';
    el.newRoom.hidden = false;
    el.newRoomTopic.focus();
  });

  el.newRoomCancel.addEventListener('click', closeNewRoom);
  el.newRoom.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') closeNewRoom(); });
  // Clicks and keys in the form stay out of the map.
  L.DomEvent.disableClickPropagation(el.newRoom);
  L.DomEvent.disableScrollPropagation(el.newRoom);

  el.newRoom.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!pending) return;
    const topic = el.newRoomTopic.value.trim();
    if (!topic) { status('A room needs a topic', true); el.newRoomTopic.focus(); return; }
    if (!(await needSession())) return;
    const at = pending;
    try {
      const room = await api('POST', '/rooms', {
        latitude: at.lat, longitude: at.lng, zoom: clamp(Math.round(map.getZoom()), 0, ROOM_MAX_ZOOM), topic,
      });
      closeNewRoom();
      showRoom(room);
      status('Created room “' + room.topic + '”');
      openRoom(room.id);
    } catch (e) {
      showError(e);
    }
  });

  // ------------------------------------------------------------------ the chat panel

  let current = null; // {id, room, source, lastId, messageIds: Set, reconnectTimer}

  async function openRoom(id) {
    if (current && current.id === id) { el.sayText.focus(); return; }
    await closeRoom(true);
    const room = rooms.get(id) || { id, topic: 'Room ' + id };
    current = { id, room, source: null, lastId: 0, messageIds: new Set(), reconnectTimer: null };
    el.chat.hidden = false;
    el.chat.dataset.roomId = String(id);
    el.chatTitle.textContent = room.topic;
    el.messages.replaceChildren();
    el.participants.replaceChildren();
    markActive();
    map.invalidateSize();
    const mine = current;
    if (!rooms.has(id)) {
      api('GET', '/rooms/' + id).then((r) => {
        if (current === mine) { mine.room = r; el.chatTitle.textContent = r.topic; }
      }).catch(showError);
    }
    if (auth.session) await join(id); else status('Choose a nickname to join and talk', true);
    if (current !== mine) return;
    // The stream starts with the room's latest messages and its participants, then pushes news.
    listen(mine);
    // A reader is present while it shows signs of life, as a polling phone does once a second:
    // the stream carries no session (EventSource sends no headers), so every 20 s the panel
    // asks for the participants with its session (well inside the 60 s presence timeout).
    mine.heartbeat = setInterval(() => {
      if (current !== mine || !auth.session) return;
      api('GET', '/rooms/' + id + '/participants')
        .then((people) => { if (current === mine && people) showParticipants(people.participants || []); })
        .catch(() => {});
    }, 20000);
    if (auth.session && document.activeElement !== el.nick) el.sayText.focus();
    try {
      const people = await api('GET', '/rooms/' + id + '/participants');
      if (current === mine && !mine.sawParticipants) showParticipants((people && people.participants) || []);
    } catch (e) {
      showError(e);
    }
  }

  async function join(id) {
    try {
      await api('POST', '/rooms/' + id + '/join');
    } catch (e) {
      showError(e);
    }
  }

  function listen(room) {
    const url = API + '/rooms/' + room.id + '/events' + (room.lastId ? '?after=' + room.lastId : '');
    const source = new EventSource(url);
    room.source = source;
    source.addEventListener('open', () => {
      if (current === room) el.chat.dataset.live = 'open';
    });
    source.addEventListener('message', (ev) => {
      if (current !== room) return;
      try { addMessage(JSON.parse(ev.data)); } catch (e) { status('Bad message event: ' + e.message, true); }
    });
    source.addEventListener('participants', (ev) => {
      if (current !== room) return;
      room.sawParticipants = true;
      try { showParticipants(JSON.parse(ev.data).participants || []); } catch (e) { status('Bad participants event: ' + e.message, true); }
    });
    source.addEventListener('gone', () => {
      if (current !== room) return;
      status('This room is gone', true);
      closeRoom(false);
      const marker = markers.get(room.id);
      if (marker) { marker.remove(); markers.delete(room.id); }
    });
    source.addEventListener('error', (ev) => {
      if (current !== room) return;
      if (ev.data) { // an `error` event the server sent (a problem document) before it ends the stream
        try { status(JSON.parse(ev.data).detail || 'Live updates failed', true); } catch (e) { status('Live updates failed', true); }
      }
      el.chat.dataset.live = 'reconnecting';
      if (source.readyState === EventSource.CLOSED) {
        // The browser gave up (an error status, not an event stream): try again ourselves, from the last id.
        status('Live updates interrupted; reconnecting…', true);
        room.reconnectTimer = setTimeout(() => { if (current === room) listen(room); }, 3000);
      }
    });
  }

  async function closeRoom(sayLeave) {
    const room = current;
    if (!room) return;
    current = null;
    if (room.source) room.source.close();
    clearTimeout(room.reconnectTimer);
    clearInterval(room.heartbeat);
    el.chat.hidden = true;
    delete el.chat.dataset.roomId;
    delete el.chat.dataset.live;
    markActive();
    map.invalidateSize();
    if (sayLeave && auth.session) {
      try { await api('POST', '/rooms/' + room.id + '/leave'); } catch (e) { showError(e); }
    }
  }

  function timeOf(iso) {
    const d = new Date(iso);
    return isNaN(d) ? '' : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  }

  function addMessage(m) {
    if (!current || (m.room !== undefined && Number(m.room) !== current.id)) return;
    if (current.messageIds.has(m.id)) return;
    current.messageIds.add(m.id);
    current.lastId = Math.max(current.lastId, m.id);
    const li = document.createElement('li');
    li.className = 'message';
    if (auth.nick && m.nick === auth.nick) li.classList.add('mine');
    li.dataset.messageId = String(m.id);
    const time = document.createElement('span');
    time.className = 'time';
    time.textContent = timeOf(m.addedAt);
    time.title = m.addedAt || '';
    const nick = document.createElement('span');
    nick.className = 'nick';
    nick.textContent = m.nick;
    const text = document.createElement('span');
    text.className = 'text';
    text.textContent = m.text;
    li.append(time, nick, text);
    // In id order: a late history answer may come after live messages.
    let before = null;
    for (let n = el.messages.lastElementChild; n; n = n.previousElementSibling) {
      if (Number(n.dataset.messageId) < m.id) break;
      before = n;
    }
    const atBottom = el.messages.scrollHeight - el.messages.scrollTop - el.messages.clientHeight < 40;
    el.messages.insertBefore(li, before);
    if (atBottom || (auth.nick && m.nick === auth.nick)) el.messages.scrollTop = el.messages.scrollHeight;
  }

  function showParticipants(list) {
    el.participants.replaceChildren(...list.map((name) => {
      const li = document.createElement('li');
      li.textContent = name;
      return li;
    }));
  }

  el.say.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!current) return;
    const text = el.sayText.value;
    if (!text.trim()) return;
    if (!(await needSession())) return;
    const room = current;
    el.sayText.value = '';
    try {
      const m = await api('POST', '/rooms/' + room.id + '/messages', { text });
      if (current === room && m && m.id !== undefined) addMessage(m);
    } catch (e) {
      if (current === room && !el.sayText.value) el.sayText.value = text; // give it back to retry
      showError(e);
    }
  });

  el.leave.addEventListener('click', () => closeRoom(true));

  // ------------------------------------------------------------------ start

  renderWho();
  drawGraticule();
  refreshRooms();
  window.addEventListener('pagehide', () => { if (current && current.source) current.source.close(); });

  // For tests and the console.
  window.geochat = { map, rooms, markers, openRoom, closeRoom, refreshRooms, get current() { return current; } };
})();
