// The rooms of the visible box: fetched (GET /api/v1/rooms), drawn as pins, labels, counts and spread
// groups, and listed beside the map, the two kept in step.
import { api, humanError, isNetworkError } from './api.js';
import { groupByDistance, spreadOffsets } from './layout.js';

export const ROOM_MAX_ZOOM = 17;
const MAX_LAT = 85.0511287798;
const CLUSTER_RADIUS = 34; // px: pins closer than this become one count, or spread
const SPREAD_GAP = 26; // px between the rows of spread pins
const SPREAD_COLUMN = 200; // px between their columns: a pin and its longest label
const SPREAD_MIN_ZOOM = 12; // rooms at one spot show as a count below this zoom, spread from it on
const LIST_MAX = 100;
const MOVE_DEBOUNCE_MS = 250;
const REFRESH_MS = 30000;
const RETRY_MAX_MS = 15000;

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

// The copy of a longitude nearest the map's centre (the map may show longitudes beyond ±180).
export function nearLon(map, lon) {
  const c = map.getCenter().lng;
  return lon + 360 * Math.round((c - lon) / 360);
}

// The visible box in degrees, split in two where it crosses the antimeridian.
function visibleBoxes(map) {
  const b = map.getBounds();
  const south = clamp(b.getSouth(), -MAX_LAT, MAX_LAT), north = clamp(b.getNorth(), -MAX_LAT, MAX_LAT);
  let west = b.getWest(), east = b.getEast();
  if (east - west >= 360) return [{ south, west: -180, north, east: 180 }];
  const wrap = (x) => ((x + 180) % 360 + 360) % 360 - 180;
  west = wrap(west);
  east = wrap(east);
  if (east === -180) east = 180;
  if (west <= east) return [{ south, west, north, east }];
  return [{ south, west, north, east: 180 }, { south, west: -180, north, east }];
}

function setAttributes(node, attributes) {
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
}

export class RoomsOnMap {
  // elements: {map, list, count, empty, more}; hooks: {open(id), activeRoom(), unread(id), notices}
  constructor(map, elements, hooks) {
    this.map = map;
    this.el = elements;
    this.hooks = hooks;
    this.rooms = new Map(); // id -> room, of the latest answer
    this.activity = new Map(); // id -> ms of the latest message seen here
    this.pins = new Map(); // id -> {pin, label, room}
    this.clusters = new Map(); // key -> {marker, members}
    this.legs = L.layerGroup().addTo(map);
    this.listItems = new Map(); // id -> li
    this.fetching = false;
    this.again = false;
    this.failures = 0;
    map.createPane('roomLabels').style.zIndex = 590; // under every pin (markerPane: 600)
    map.on('moveend', () => this.onMoveEnd());
    map.on('zoomend', () => this.render());
    elements.map.addEventListener('keydown', (ev) => this.onKey(ev));
    setInterval(() => { if (!document.hidden) this.refresh(); }, REFRESH_MS);
  }

  // ------------------------------------------------------------------ fetching

  onMoveEnd() {
    this.render();
    clearTimeout(this.moveTimer);
    this.moveTimer = setTimeout(() => this.refresh(), MOVE_DEBOUNCE_MS);
  }

  async fetchView() {
    const zoom = Math.round(this.map.getZoom());
    // Rooms made for this zoom ± 3 and every room made for a closer look: those show as counts.
    const minZoom = clamp(zoom - 3, 0, ROOM_MAX_ZOOM);
    const found = new Map();
    for (const box of visibleBoxes(this.map)) {
      const q = new URLSearchParams({
        south: box.south.toFixed(6), west: box.west.toFixed(6), north: box.north.toFixed(6), east: box.east.toFixed(6),
        minZoom: String(minZoom), maxZoom: String(ROOM_MAX_ZOOM),
      });
      const out = await api('GET', '/rooms?' + q);
      for (const room of (out && out.rooms) || []) found.set(room.id, room);
    }
    return found;
  }

  async refresh() {
    if (this.fetching) { this.again = true; return; }
    this.fetching = true;
    this.again = false;
    clearTimeout(this.retryTimer);
    try {
      this.rooms = await this.fetchView();
      this.failures = 0;
      this.hooks.notices.recover('rooms');
      this.el.map.dataset.rooms = String(this.rooms.size);
      this.el.map.dataset.roomsLoaded = String(Date.now());
      this.render();
    } catch (e) {
      this.failed(e);
    } finally {
      this.fetching = false;
      if (this.again) this.refresh();
    }
  }

  failed(e) {
    this.failures += 1;
    this.hooks.notices.report('rooms', humanError(e, 'Rooms not updated'), { network: isNetworkError(e) });
    const backoff = Math.min(RETRY_MAX_MS, 2000 * 2 ** (this.failures - 1));
    const wait = e.retryAfter ? Math.max(e.retryAfter * 1000, 1000) : backoff;
    this.retryTimer = setTimeout(() => this.refresh(), wait);
  }

  // A room this page learned of elsewhere (created here, opened by a link).
  remember(room) {
    this.rooms.set(room.id, room);
    this.render();
  }

  forget(id) {
    this.rooms.delete(id);
    this.render();
  }

  noteActivity(id, ms) {
    if (!(ms > (this.activity.get(id) || 0))) return;
    this.activity.set(id, ms);
    this.renderList();
  }

  // ------------------------------------------------------------------ drawing

  displayed() {
    const active = this.hooks.activeRoom();
    const all = new Map(this.rooms);
    if (active && active.latitude !== undefined) all.set(active.id, active);
    return all.values();
  }

  render() {
    const zoom = this.map.getZoom(), maxZoom = this.map.getMaxZoom();
    const padded = this.map.getBounds().pad(0.3);
    const activeId = this.hooks.activeRoom() && this.hooks.activeRoom().id;
    const points = [];
    for (const room of this.displayed()) {
      const latlng = L.latLng(room.latitude, nearLon(this.map, room.longitude));
      if (!padded.contains(latlng)) continue;
      const p = this.map.project(latlng, zoom);
      points.push({ room, latlng, x: p.x, y: p.y });
    }
    // The open room leads its group; then the newest.
    points.sort((a, b) => (b.room.id === activeId) - (a.room.id === activeId) || b.room.id - a.room.id);
    const pins = new Map(), clusters = new Map(), legs = [], spots = [];
    for (const group of groupByDistance(points, CLUSTER_RADIUS)) {
      if (group.members.length === 1) {
        const m = group.members[0];
        pins.set(m.room.id, { room: m.room, at: m.latlng });
      } else if (zoom < maxZoom && (zoom < SPREAD_MIN_ZOOM || this.separable(group.members, maxZoom))) {
        clusters.set(group.members.map((m) => m.room.id).sort((a, b) => a - b).join(','), group);
      } else {
        this.spread(group, zoom, pins, legs);
        spots.push(this.map.unproject(L.point(group.x, group.y), zoom));
      }
    }
    this.syncPins(pins);
    this.syncClusters(clusters);
    this.legs.clearLayers();
    for (const [from, to] of legs) {
      this.legs.addLayer(L.polyline([from, to], { color: '#1d5d8c', weight: 1, opacity: 0.7, interactive: false }));
    }
    for (const spot of spots) {
      this.legs.addLayer(L.circleMarker(spot, { radius: 3, color: '#1d5d8c', weight: 1, fillOpacity: 1, interactive: false }));
    }
    this.markActive();
    this.renderList();
  }

  // Would zooming all the way in show these rooms apart?
  separable(members, maxZoom) {
    const deep = members.map((m) => this.map.project(m.latlng, maxZoom));
    return groupByDistance(deep, CLUSTER_RADIUS).length > 1;
  }

  spread(group, zoom, pins, legs) {
    const offsets = spreadOffsets(group.members.length, SPREAD_GAP, SPREAD_COLUMN);
    group.members.forEach((m, i) => {
      const at = this.map.unproject(L.point(group.x + offsets[i].dx, group.y + offsets[i].dy), zoom);
      pins.set(m.room.id, { room: m.room, at, spread: true });
      legs.push([m.latlng, at]);
    });
  }

  syncPins(wanted) {
    for (const [id, shown] of this.pins) {
      if (wanted.has(id)) continue;
      shown.pin.remove();
      shown.label.remove();
      this.pins.delete(id);
    }
    for (const [id, { room, at }] of wanted) {
      const shown = this.pins.get(id);
      if (!shown) {
        this.pins.set(id, this.makePin(room, at));
        continue;
      }
      if (!shown.pin.getLatLng().equals(at)) {
        shown.pin.setLatLng(at);
        shown.label.setLatLng(at);
      }
      if (shown.room.topic !== room.topic) this.retitle(shown, room);
      shown.room = room;
    }
  }

  makePin(room, at) {
    const shown = { room };
    shown.pin = L.marker(at, {
      icon: L.divIcon({ className: 'room-pin', html: '', iconSize: [16, 16], iconAnchor: [8, 8] }),
      keyboard: true, riseOnHover: true, title: room.topic,
    });
    shown.label = L.marker(at, {
      icon: L.divIcon({ className: 'room-label', html: '', iconSize: null, iconAnchor: [-12, 10] }),
      keyboard: false, pane: 'roomLabels',
    });
    for (const marker of [shown.pin, shown.label]) {
      marker.on('click', () => this.hooks.open(shown.room.id));
      marker.on('add', () => this.decorate(shown));
      marker.addTo(this.map);
    }
    return shown;
  }

  decorate(shown) {
    const pin = shown.pin.getElement(), label = shown.label.getElement();
    if (pin) {
      pin.dataset.roomId = String(shown.room.id);
      setAttributes(pin, { role: 'button', 'aria-label': 'Room: ' + shown.room.topic });
      pin.title = shown.room.topic;
    }
    if (label) {
      label.dataset.roomId = String(shown.room.id);
      label.setAttribute('aria-hidden', 'true'); // the pin carries the name
      label.textContent = shown.room.topic;
    }
  }

  retitle(shown, room) {
    shown.room = room;
    this.decorate(shown);
  }

  syncClusters(wanted) {
    for (const [key, shown] of this.clusters) {
      if (wanted.has(key)) continue;
      shown.marker.remove();
      this.clusters.delete(key);
    }
    for (const [key, group] of wanted) {
      const at = this.map.unproject(L.point(group.x, group.y), this.map.getZoom());
      const shown = this.clusters.get(key);
      if (shown) {
        shown.members = group.members;
        if (!shown.marker.getLatLng().equals(at)) shown.marker.setLatLng(at);
        continue;
      }
      this.clusters.set(key, this.makeCluster(key, group, at));
    }
  }

  makeCluster(key, group, at) {
    const n = group.members.length;
    const size = n < 10 ? 28 : n < 100 ? 34 : 40;
    const shown = { members: group.members };
    shown.marker = L.marker(at, {
      icon: L.divIcon({ className: 'room-cluster', html: '', iconSize: [size, size], iconAnchor: [size / 2, size / 2] }),
      keyboard: true, title: n + ' rooms: zoom in to see them',
    });
    shown.marker.on('click', () => this.expand(shown));
    shown.marker.on('add', () => {
      const node = shown.marker.getElement();
      node.dataset.cluster = key;
      node.dataset.rooms = key; // the ids of its rooms
      node.dataset.count = String(n);
      node.textContent = String(n);
      setAttributes(node, { role: 'button', 'aria-label': n + ' rooms here; zoom in to see them' });
    });
    shown.marker.addTo(this.map);
    return shown;
  }

  // A count: zoom to its rooms (or, for rooms at one spot, close enough to spread them).
  expand(shown) {
    const maxZoom = this.map.getMaxZoom();
    const bounds = L.latLngBounds(shown.members.map((m) => m.latlng));
    if (this.separable(shown.members, maxZoom)) {
      this.map.fitBounds(bounds, { padding: [60, 60], maxZoom });
    } else {
      this.map.setView(bounds.getCenter(), Math.max(this.map.getZoom() + 1, SPREAD_MIN_ZOOM));
    }
  }

  // Enter or Space on a focused pin opens its room; on a count, zooms in.
  onKey(ev) {
    if (ev.key !== 'Enter' && ev.key !== ' ') return;
    const pin = ev.target.closest && ev.target.closest('.room-pin');
    const cluster = ev.target.closest && ev.target.closest('.room-cluster');
    if (pin) {
      ev.preventDefault();
      this.hooks.open(Number(pin.dataset.roomId));
    } else if (cluster && this.clusters.has(cluster.dataset.cluster)) {
      ev.preventDefault();
      this.expand(this.clusters.get(cluster.dataset.cluster));
    }
  }

  markActive() {
    const active = this.hooks.activeRoom();
    const id = active && active.id;
    for (const [roomId, shown] of this.pins) {
      for (const marker of [shown.pin, shown.label]) {
        const node = marker.getElement();
        if (node) node.classList.toggle('active', roomId === id);
      }
    }
    for (const shown of this.clusters.values()) {
      const node = shown.marker.getElement();
      if (node) node.classList.toggle('active', shown.members.some((m) => m.room.id === id));
    }
    for (const [roomId, li] of this.listItems) {
      const button = li.firstElementChild;
      if (roomId === id) button.setAttribute('aria-current', 'true'); else button.removeAttribute('aria-current');
    }
  }

  // The marker that shows a room now: its pin, or the count it is in.
  markerNodes(id) {
    const shown = this.pins.get(id);
    if (shown) return [shown.pin.getElement(), shown.label.getElement()].filter(Boolean);
    for (const cluster of this.clusters.values()) {
      if (cluster.members.some((m) => m.room.id === id)) return [cluster.marker.getElement()].filter(Boolean);
    }
    return [];
  }

  highlight(id, on) {
    for (const node of this.markerNodes(id)) node.classList.toggle('hover', on);
  }

  // ------------------------------------------------------------------ the list

  inView() {
    const bounds = this.map.getBounds();
    const rooms = [];
    for (const room of this.rooms.values()) {
      if (bounds.contains(L.latLng(room.latitude, nearLon(this.map, room.longitude)))) rooms.push(room);
    }
    const seen = (room) => this.activity.get(room.id) || 0;
    return rooms.sort((a, b) => seen(b) - seen(a) || b.id - a.id);
  }

  renderList() {
    const rooms = this.inView();
    const shown = rooms.slice(0, LIST_MAX);
    const focused = document.activeElement && this.el.list.contains(document.activeElement)
      ? Number(document.activeElement.dataset.roomId) : null;
    const keep = new Set(shown.map((r) => r.id));
    for (const [id, li] of this.listItems) {
      if (!keep.has(id)) { li.remove(); this.listItems.delete(id); }
    }
    shown.forEach((room, i) => {
      const li = this.listItems.get(room.id) || this.makeItem(room);
      this.fillItem(li, room);
      if (this.el.list.children[i] !== li) this.el.list.insertBefore(li, this.el.list.children[i] || null);
    });
    if (focused && this.listItems.has(focused) && !this.el.list.contains(document.activeElement)) {
      this.listItems.get(focused).firstElementChild.focus();
    }
    this.el.count.textContent = '(' + rooms.length + ')';
    this.el.empty.hidden = rooms.length > 0;
    this.el.more.hidden = rooms.length <= LIST_MAX;
    this.el.more.textContent = rooms.length > LIST_MAX ? (rooms.length - LIST_MAX) + ' more: zoom in to list them' : '';
    this.markActive();
  }

  makeItem(room) {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'room-item';
    button.dataset.roomId = String(room.id);
    const topic = document.createElement('span');
    topic.className = 'topic';
    const badge = document.createElement('span');
    badge.className = 'badge';
    button.append(topic, badge);
    button.addEventListener('click', () => this.hooks.open(room.id));
    button.addEventListener('mouseenter', () => this.highlight(room.id, true));
    button.addEventListener('mouseleave', () => this.highlight(room.id, false));
    button.addEventListener('focus', () => this.highlight(room.id, true));
    button.addEventListener('blur', () => this.highlight(room.id, false));
    li.append(button);
    this.listItems.set(room.id, li);
    return li;
  }

  fillItem(li, room) {
    const button = li.firstElementChild;
    const [topic, badge] = button.children;
    const unread = this.hooks.unread(room.id);
    if (topic.textContent !== room.topic) topic.textContent = room.topic;
    badge.textContent = unread ? String(unread) : '';
    badge.hidden = !unread;
    button.setAttribute('aria-label', room.topic + (unread ? ', ' + unread + ' unread' : ''));
  }
}
