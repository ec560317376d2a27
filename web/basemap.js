// The page's settings (/map/settings.json, set by the operator) and the base map they choose:
// an operator's tile server, or the offline map that ships in web/ (Natural Earth land and a graticule).
const MAX_LAT = 85.0511287798; // Web Mercator's edge
const OFFLINE_MAX_ZOOM = 18;

export const DEFAULT_SETTINGS = Object.freeze({
  tiles: { url: null, attribution: null, maxZoom: OFFLINE_MAX_ZOOM },
  geocoder: { url: null },
  limits: { nick: 32, topic: 100, message: 500 },
});

const text = (v) => (typeof v === 'string' && v.trim() ? v.trim() : null);
const count = (v, fallback, lo, hi) => (Number.isInteger(v) && v >= lo && v <= hi ? v : fallback);

function normalize(raw) {
  const d = DEFAULT_SETTINGS;
  const tiles = (raw && raw.tiles) || {};
  const limits = (raw && raw.limits) || {};
  const url = text(tiles.url);
  return {
    tiles: { url, attribution: text(tiles.attribution), maxZoom: url ? count(tiles.maxZoom, 19, 1, 22) : d.tiles.maxZoom },
    geocoder: { url: text(raw && raw.geocoder && raw.geocoder.url) },
    limits: {
      nick: count(limits.nick, d.limits.nick, 1, 1000),
      topic: count(limits.topic, d.limits.topic, 1, 10000),
      message: count(limits.message, d.limits.message, 1, 100000),
    },
  };
}

// A gateway without the settings route (404), or none reachable: the defaults.
// `base`: where the map's files are (the web map's `/map/`; the admin page's `map/`, beside it).
export async function loadSettings(base = '/map/') {
  try {
    const response = await fetch(base + 'settings.json', { headers: { Accept: 'application/json' } });
    if (!response.ok) return normalize(null);
    return normalize(await response.json());
  } catch (e) {
    return normalize(null);
  }
}

// Leaflet puts attributions in as HTML: the operator's text goes in as text.
function escapeHTML(s) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// ------------------------------------------------------------------ tiles

function addTiles(map, tiles, mapElement, notices) {
  const layer = L.tileLayer(tiles.url, {
    maxZoom: tiles.maxZoom,
    attribution: tiles.attribution ? escapeHTML(tiles.attribution) : '',
  });
  let failed = 0;
  layer.on('tileerror', () => {
    failed += 1;
    if (failed >= 3) notices.report('tiles', 'Map tiles aren’t loading; the rooms still work', { network: true });
  });
  layer.on('tileload', () => {
    failed = 0;
    notices.recover('tiles');
    mapElement.dataset.baseReady = 'yes';
  });
  layer.addTo(map);
  mapElement.dataset.base = 'tiles';
}

// ------------------------------------------------------------------ the offline map: land and a graticule

function graticuleStep(zoom) {
  const steps = [[2, 30], [3, 15], [4, 10], [5, 5], [7, 2], [8, 1], [10, 0.5], [12, 0.1], [14, 0.05]];
  for (const [upTo, step] of steps) if (zoom <= upTo) return step;
  return 0.01;
}

function drawGraticule(map, group, renderer) {
  const minor = { color: '#8fb0c9', weight: 1, opacity: 0.6, interactive: false, renderer };
  const major = { color: '#6f95b3', weight: 1.3, opacity: 0.8, interactive: false, renderer };
  group.clearLayers();
  const step = graticuleStep(map.getZoom());
  const b = map.getBounds().pad(0.2);
  const south = Math.max(-MAX_LAT, b.getSouth()), north = Math.min(MAX_LAT, b.getNorth());
  const west = b.getWest(), east = b.getEast();
  const lat0 = Math.ceil(south / step), lat1 = Math.floor(north / step);
  const lon0 = Math.ceil(west / step), lon1 = Math.floor(east / step);
  if (lat1 - lat0 > 200 || lon1 - lon0 > 400) return;
  for (let i = lat0; i <= lat1; i++) {
    const lat = i * step;
    group.addLayer(L.polyline([[lat, west], [lat, east]], i === 0 ? major : minor));
  }
  for (let i = lon0; i <= lon1; i++) {
    const lon = i * step;
    group.addLayer(L.polyline([[south, lon], [north, lon]], i % Math.round(360 / step) === 0 ? major : minor));
  }
}

// Three copies of the land, so that panning across the antimeridian shows land on both sides.
function shiftedWorld(world, dx) {
  const shiftRing = (ring) => ring.map(([x, y]) => [x + dx, y]);
  return {
    type: 'FeatureCollection',
    features: world.features.map((f) => ({
      type: 'Feature', properties: f.properties,
      geometry: {
        type: f.geometry.type,
        coordinates: f.geometry.type === 'Polygon'
          ? f.geometry.coordinates.map(shiftRing)
          : f.geometry.coordinates.map((poly) => poly.map(shiftRing)),
      },
    })),
  };
}

async function addLand(map, renderer, mapElement, notices, base) {
  try {
    const response = await fetch(base + 'world.geojson');
    if (!response.ok) throw new Error('world.geojson answered ' + response.status);
    const world = await response.json();
    const land = L.layerGroup([-360, 0, 360].map((dx) => L.geoJSON(shiftedWorld(world, dx), {
      interactive: false, renderer,
      style: { color: '#b9ae96', weight: 0.8, fillColor: '#f3efe4', fillOpacity: 1 },
    })));
    land.addTo(map);
    land.eachLayer((l) => l.bringToBack());
    mapElement.dataset.land = 'loaded';
    mapElement.dataset.baseReady = 'yes';
  } catch (e) {
    mapElement.dataset.land = 'failed';
    notices.report('land', 'The coastlines didn’t load (' + e.message + '); the rooms still work');
  }
}

function addOfflineMap(map, mapElement, notices, base) {
  mapElement.dataset.base = 'land';
  map.attributionControl.addAttribution('Land: Natural Earth (public domain)');
  const renderer = L.canvas({ padding: 0.5 }); // many paths, no events
  const graticule = L.layerGroup().addTo(map);
  const redraw = () => drawGraticule(map, graticule, renderer);
  map.on('moveend', redraw);
  redraw();
  addLand(map, renderer, mapElement, notices, base);
}

// `notices`: {report(key, text, options), recover(key)}, the page's status line.
export function addBaseMap(map, settings, mapElement, notices, base = '/map/') {
  map.setMaxZoom(settings.tiles.maxZoom);
  if (settings.tiles.url) addTiles(map, settings.tiles, mapElement, notices);
  else addOfflineMap(map, mapElement, notices, base);
}

// A button on the map (Leaflet's bar look) that runs `onClick`. Clicks on it
// stay with it: Leaflet's own way, which the map clears again.
// `label`: the accessible name, where the text alone does not say it (a symbol).
export function addMapButton(map, { position, className, id, text, title, label, onClick }) {
  const Control = L.Control.extend({
    options: { position },
    onAdd() {
      const box = L.DomUtil.create('div', 'leaflet-bar map-button');
      const button = L.DomUtil.create('button', className, box);
      button.type = 'button';
      button.id = id;
      button.title = title;
      if (label) button.setAttribute('aria-label', label);
      button.textContent = text;
      L.DomEvent.disableClickPropagation(box);
      button.addEventListener('click', onClick);
      return box;
    },
  });
  map.addControl(new Control());
}
