// Finding a place: the operator's Nominatim-compatible geocoder (off unless set), and the browser's
// own idea of where you are ("locate me").
import { addMapButton } from './basemap.js';

const SEARCH_LIMIT = 5;
const LOCATE_ZOOM = 14;

// ------------------------------------------------------------------ place search

function parsePlaces(data) {
  if (!Array.isArray(data)) return [];
  return data.map((p) => {
    const lat = Number(p.lat), lon = Number(p.lon);
    const box = Array.isArray(p.boundingbox) ? p.boundingbox.map(Number) : null; // [south, north, west, east]
    const bounds = box && box.length === 4 && box.every(Number.isFinite)
      ? L.latLngBounds([box[0], box[2]], [box[1], box[3]]) : null;
    return { name: String(p.display_name || lat + ', ' + lon), lat, lon, bounds };
  }).filter((p) => Number.isFinite(p.lat) && Number.isFinite(p.lon));
}

async function geocode(url, query) {
  const q = new URLSearchParams({ format: 'jsonv2', q: query, limit: String(SEARCH_LIMIT) });
  const response = await fetch(url + (url.includes('?') ? '&' : '?') + q, { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error('the place search answered ' + response.status);
  return parsePlaces(await response.json());
}

function goTo(map, place) {
  if (place.bounds && place.bounds.isValid() && !place.bounds.getNorthEast().equals(place.bounds.getSouthWest())) {
    map.fitBounds(place.bounds, { maxZoom: Math.min(map.getMaxZoom(), 17), animate: false });
  } else {
    map.setView([place.lat, place.lon], Math.min(map.getMaxZoom(), 16), { animate: false });
  }
}

// el: {form, query, results}; notices: the status line.
export function setUpPlaceSearch(settings, map, el, notices) {
  if (!settings.geocoder.url) return; // off: the form stays hidden
  el.form.hidden = false;
  const close = () => { el.results.hidden = true; el.results.replaceChildren(); };
  const choose = (place) => {
    goTo(map, place);
    close();
    notices.info('Showing ' + place.name);
    map.getContainer().focus();
  };
  el.form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const query = el.query.value.trim();
    if (!query) return;
    try {
      const places = await geocode(settings.geocoder.url, query);
      notices.recover('search');
      if (places.length === 0) { close(); notices.info('No place found for “' + query + '”'); return; }
      showResults(el.results, places, choose);
      goTo(map, places[0]);
    } catch (e) {
      notices.report('search', 'Place search failed: ' + (e.message || e) + '; try again');
    }
  });
  el.form.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') close(); });
}

function showResults(list, places, choose) {
  list.replaceChildren(...places.map((place) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = place.name;
    button.addEventListener('click', () => choose(place));
    li.append(button);
    return li;
  }));
  list.hidden = false;
}

// ------------------------------------------------------------------ locate me

const LOCATE_ERRORS = {
  1: 'Your location is blocked for this page: allow it in the browser’s site settings, or search for a place',
  2: 'Your location isn’t available right now',
  3: 'Finding your location took too long; try again',
};

function locate(map, notices, marker) {
  if (!('geolocation' in navigator) || !window.isSecureContext) {
    notices.report('locate', 'This browser can’t tell the page where you are (it needs a secure, https page)');
    return;
  }
  notices.info('Finding your location…');
  navigator.geolocation.getCurrentPosition((position) => {
    const { latitude, longitude, accuracy } = position.coords;
    notices.recover('locate');
    map.setView([latitude, longitude], Math.max(map.getZoom(), LOCATE_ZOOM), { animate: false });
    marker.setLatLng([latitude, longitude]).setRadius(Math.max(accuracy || 0, 10)).addTo(map);
    map.getContainer().dataset.located = latitude.toFixed(5) + ',' + longitude.toFixed(5);
    notices.info('Showing where you are (within ' + Math.round(accuracy || 0) + ' m)');
  }, (error) => {
    notices.report('locate', LOCATE_ERRORS[error.code] || 'Your location isn’t available');
  }, { enableHighAccuracy: false, timeout: 15000, maximumAge: 60000 });
}

export function addLocateControl(map, notices) {
  const marker = L.circle([0, 0], { radius: 10, color: '#2b7a0b', weight: 2, fillOpacity: 0.15, interactive: false });
  addMapButton(map, {
    position: 'topleft', className: 'locate', id: 'locate', text: '◎', title: 'Show where I am',
    label: 'Show where I am', onClick: () => locate(map, notices, marker),
  });
}
