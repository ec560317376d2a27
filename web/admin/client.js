// The admin API client: the page's base (the API is `../` of the page, so any path prefix works),
// the operator's bearer token (this tab only: sessionStorage, never a cookie), and errors in words.
const TOKEN_KEY = 'geochat-admin-token';
const NAME_KEY = 'geochat-admin-name';

export const apiBase = new URL('../', window.location.href).pathname;

// A refused or failed request: the HTTP status (0: no answer), the API's code and its message.
export class Failure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onLoggedOut = () => {};

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY); },
  get name() { return sessionStorage.getItem(NAME_KEY) || ''; },
  keep(token, name) {
    sessionStorage.setItem(TOKEN_KEY, token);
    sessionStorage.setItem(NAME_KEY, name);
  },
  forget() {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(NAME_KEY);
  },
  // Called when the server refuses the token (expired, revoked): the page shows the login again.
  whenLoggedOut(callback) { onLoggedOut = callback; },
};

// `path` is relative to the API (`rooms/42`); its values must be encoded by the caller (`segment`).
export async function request(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (session.token) headers.Authorization = 'Bearer ' + session.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(apiBase + path, {
      method, headers, cache: 'no-store', credentials: 'omit',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new Failure(0, 'network', 'The gateway did not answer; is it running?');
  }
  let answer = null;
  try {
    answer = await response.json();
  } catch (e) {
    answer = null;
  }
  if (!response.ok) {
    const error = (answer && answer.error) || {};
    const failure = new Failure(response.status, error.code || 'http_' + response.status,
      error.message || 'the server answered ' + response.status);
    if (response.status === 401 && path !== 'login') {
      session.forget();
      onLoggedOut('Your login has ended (' + failure.message + '); log in again.');
    }
    throw failure;
  }
  return answer;
}

// One path segment, encoded.
export const segment = (value) => encodeURIComponent(String(value));

// `?name=value&…` of the values that are set.
export function query(values) {
  const pairs = Object.entries(values).filter(([, v]) => v !== undefined && v !== null && v !== '');
  return pairs.length ? '?' + pairs.map(([k, v]) => k + '=' + encodeURIComponent(String(v))).join('&') : '';
}

// What the operator reads when a request fails.
export function explain(error) {
  if (error instanceof Failure) {
    if (error.status === 503) return 'A service did not answer; try again (' + error.message + ')';
    if (error.status === 429) return 'Too many attempts: ' + error.message;
    return error.message.charAt(0).toUpperCase() + error.message.slice(1);
  }
  return 'Something went wrong in the page: ' + (error && error.message ? error.message : String(error));
}
