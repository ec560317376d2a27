// The JSON API client (/api/v1), the session, the connection's health, and errors in words people read.
export const API = '/api/v1';

export class ApiError extends Error {
  constructor(status, detail, code, retryAfter) {
    super(detail);
    this.name = 'ApiError';
    this.status = status; // 0: no answer at all (network)
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

// ------------------------------------------------------------------ the session (the tab's, in sessionStorage)

const SESSION_KEY = 'geochat.session';
const NICK_KEY = 'geochat.nick';

export const auth = {
  session: sessionStorage.getItem(SESSION_KEY),
  nick: sessionStorage.getItem(NICK_KEY),
  listeners: new Set(),
  set(session, nick) {
    this.session = session;
    this.nick = nick;
    if (session) {
      sessionStorage.setItem(SESSION_KEY, session);
      sessionStorage.setItem(NICK_KEY, nick);
    } else {
      sessionStorage.removeItem(SESSION_KEY);
      sessionStorage.removeItem(NICK_KEY);
    }
    for (const listener of this.listeners) listener();
  },
  header() {
    return this.session ? { Authorization: 'Bearer ' + this.session } : {};
  },
};

// ------------------------------------------------------------------ the connection's health

const OFFLINE_AFTER_MS = 8000; // failing this long (or the browser says offline): "offline"

// live: the last request got an answer and the open room's stream (if any) is open;
// reconnecting: a request just failed, or the stream is (re)connecting; offline: failing for a while.
export const link = {
  failingSince: null,
  stream: 'none', // the open room's event stream: none | connecting | open | retrying
  wasLive: false,
  last: null,
  shown: null,
  listeners: new Set(),
  timer: null,
  ok() {
    this.failingSince = null;
    this.changed();
  },
  fail() {
    if (this.failingSince === null) {
      this.failingSince = Date.now();
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.changed(), OFFLINE_AFTER_MS + 50);
    }
    this.changed();
  },
  setStream(state) {
    this.stream = state;
    this.changed();
  },
  get state() {
    if (!navigator.onLine) return 'offline';
    if (this.failingSince !== null && Date.now() - this.failingSince >= OFFLINE_AFTER_MS) return 'offline';
    if (this.failingSince !== null || this.stream === 'connecting' || this.stream === 'retrying') return 'reconnecting';
    return 'live';
  },
  changed() {
    const state = this.state;
    const shown = state + (this.stream === 'open' ? '+stream' : ''); // "Live" with a stream, "Online" without
    if (shown === this.shown) return;
    const previous = this.last;
    this.last = state;
    this.shown = shown;
    for (const listener of this.listeners) listener(state, previous);
    if (state === 'live') this.wasLive = true;
  },
};

// ------------------------------------------------------------------ requests

async function readJSON(response) {
  const type = response.headers.get('Content-Type') || '';
  if (!type.includes('json')) return null;
  try {
    return await response.json();
  } catch (e) {
    return null;
  }
}

// 502 and 504 come from a proxy in front of a gateway that does not answer.
const isGatewayAway = (status) => status === 502 || status === 504;

export async function api(method, path, body, options = {}) {
  const headers = { Accept: 'application/json', ...auth.header() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(API + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal, keepalive: !!options.keepalive,
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    link.fail();
    throw new ApiError(0, e.message, 'network');
  }
  if (isGatewayAway(response.status)) link.fail(); else link.ok();
  if (response.status === 204) return null;
  const data = await readJSON(response);
  if (!response.ok) {
    if (response.status === 401 && auth.session) auth.set(null, null); // the session ended
    const detail = (data && (data.detail || data.title)) || response.statusText;
    const retryAfter = Number(response.headers.get('Retry-After')) || 0;
    throw new ApiError(response.status, detail, data && data.code, retryAfter);
  }
  return data;
}

// ------------------------------------------------------------------ errors in words

const capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);

function reason(err) {
  if (!(err instanceof ApiError)) return 'something went wrong in this page (' + ((err && err.message) || err) + ')';
  if (err.status === 0 || isGatewayAway(err.status)) return 'GeoChat can’t be reached; check your connection';
  if (err.status === 401) return 'your session ended; choose your nickname again';
  if (err.code === 'no_such_chat' || (err.status === 404 && !err.code)) return 'that room no longer exists';
  if (err.status === 429) return 'too many requests; wait ' + (err.retryAfter ? err.retryAfter + ' s' : 'a moment') + ' and try again';
  if (err.status === 503) return 'GeoChat is busy; try again in a moment';
  if (err.status >= 500) return 'GeoChat had a problem (' + err.status + '); try again';
  return err.message || 'the request was refused (' + err.status + ')';
}

// "Message not sent: GeoChat can't be reached; check your connection"
export function humanError(err, doing) {
  const why = reason(err);
  return capitalize(doing ? doing + ': ' + why : why);
}

export function isNetworkError(err) {
  return err instanceof ApiError && (err.status === 0 || isGatewayAway(err.status));
}
