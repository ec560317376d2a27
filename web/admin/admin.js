// The admin page: log in; find a room on the map, in the list or by id; read its latest messages;
// remove a message or all of a sender's (in the room or everywhere); change or remove the room;
// find sessions by nickname, rename or end one, ban it; ban a nickname and lift bans; read the audit
// log. Every change asks for confirmation and an optional reason (the audit log keeps it). User text
// only goes into the page through `textContent`. `window.geochatAdmin` is for tests and the console.
import { addBaseMap, loadSettings } from './map/basemap.js';
import { explain, query, request, segment, session } from './client.js';
import { confirmChange } from './confirm.js';

const $ = (id) => document.getElementById(id);
const MAP_FILES = new URL('map/', window.location.href).pathname;
const LATEST_MESSAGES = 50;
const REMOVAL_BATCH = 500; // as geochat-admin: small batches keep polls fast meanwhile (docs/benchmarks.md)

// ------------------------------------------------------------------ the status line

const status = {
  show(text, kind = 'info') {
    const line = $('status');
    line.textContent = text;
    line.className = kind;
  },
  error(error) { this.show(explain(error), 'error'); },
};

// Asks for confirmation (and the reason) first; then runs `work(answer)` as `act` does.
async function confirmThen(button, question, work) {
  const answer = await confirmChange(question);
  if (answer) await act(button, () => work(answer));
}

// Runs `work` with `button` disabled; its failure goes to the status line.
async function act(button, work) {
  if (button) button.disabled = true;
  try {
    return await work();
  } catch (error) {
    status.error(error);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// A list asked for again before its answer came shows only the latest answer:
// `const turn = rooms.next(); … if (!rooms.isLatest(turn)) return;`.
function latestOnly() {
  let asked = 0;
  return { next: () => ++asked, isLatest: (turn) => turn === asked };
}
const roomsAsked = latestOnly();
const sessionsAsked = latestOnly();
const bansAsked = latestOnly();
const auditAsked = latestOnly();

// ------------------------------------------------------------------ small DOM helpers

function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell === undefined || cell === null ? '' : String(cell);
    tr.append(td);
  }
  return tr;
}

function button(text, label, onClick, className = '') {
  const b = element('button', text, { type: 'button', 'aria-label': label });
  if (className) b.className = className;
  b.addEventListener('click', () => onClick(b));
  return b;
}

const when = (ms) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '');
// A session id is a bearer secret: the page shows its first six characters, as the audit log does.
const shortSession = (id) => id.slice(0, 6) + '…';

// Normalized Mercator (x east from the antimeridian, y south from the north edge, both 0–1) → degrees.
function degrees(x, y) {
  return { latitude: Math.atan(Math.sinh(Math.PI * (1 - 2 * y))) * 180 / Math.PI, longitude: x * 360 - 180 };
}

// ------------------------------------------------------------------ logging in and out

function showConsole(loggedIn) {
  $('login-section').hidden = loggedIn;
  $('console').hidden = !loggedIn;
  $('logout').hidden = !loggedIn;
  $('who').textContent = loggedIn ? 'Logged in as ' + session.name : '';
  document.body.dataset.state = loggedIn ? 'in' : 'out';
  // Leaflet measures its box when made: only once the console shows.
  if (loggedIn && !map) setUpMap();
}

async function logIn(event) {
  event.preventDefault();
  await act($('login-go'), async () => {
    const name = $('login-name').value.trim();
    const answer = await request('POST', 'login', { name, password: $('login-password').value });
    $('login-password').value = '';
    session.keep(answer.token, answer.name);
    showConsole(true);
    status.show('Logged in as ' + answer.name + ' until ' + when(answer.expiresAtMs));
    await start();
  });
}

async function logOut() {
  await act($('logout'), async () => {
    try {
      await request('POST', 'logout');
    } finally {
      session.forget();
      closeRoom();
      showConsole(false);
    }
    status.show('Logged out: the token is revoked on every gateway');
    $('login-name').focus();
  });
}

session.whenLoggedOut((why) => {
  showConsole(false);
  status.show(why, 'error');
});

// ------------------------------------------------------------------ rooms: the list and the map

let map = null;
let pins = null;

function setUpMap() {
  map = L.map('map', { worldCopyJump: true, zoomControl: true }).setView([20, 0], 2);
  pins = L.layerGroup().addTo(map);
  loadSettings(MAP_FILES).then((settings) => addBaseMap(map, settings, $('map'), {
    report: (key, text) => status.show(text, 'error'),
    recover: () => {},
  }, MAP_FILES));
}

function showRooms(rooms, caption) {
  $('rooms-caption').textContent = caption;
  const body = $('rooms-table').tBodies[0];
  body.replaceChildren();
  pins.clearLayers();
  const places = [];
  for (const room of rooms) {
    const open = button(room.topic || '(no topic)', 'Open room ' + room.id + ': ' + room.topic,
      () => openRoom(room.id));
    open.className = 'link';
    const tr = row([String(room.id), open, String(room.z), when(room.lastVisitedAtMs), String(room.members),
      String(room.messages ?? '')]);
    tr.dataset.room = String(room.id);
    body.append(tr);
    if (room.lobby) continue;
    const { latitude, longitude } = degrees(room.x, room.y);
    places.push([latitude, longitude]);
    const pin = L.marker([latitude, longitude], {
      title: 'Room ' + room.id + ': ' + room.topic, alt: 'Room ' + room.id + ': ' + room.topic, keyboard: true,
    });
    pin.on('click', () => openRoom(room.id));
    pin.on('add', () => {
      const icon = pin.getElement();
      if (!icon) return;
      icon.dataset.room = String(room.id);
      icon.setAttribute('role', 'button');
      icon.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          openRoom(room.id);
        }
      });
    });
    pins.addLayer(pin);
  }
  if (places.length) map.fitBounds(places, { maxZoom: 12, padding: [30, 30] });
}

async function findRooms(event) {
  if (event) event.preventDefault();
  const q = $('rooms-query').value.trim();
  const turn = roomsAsked.next();
  await act(event && event.submitter, async () => {
    const answer = await request('GET', 'rooms' + query({ q, limit: 200 }));
    if (!roomsAsked.isLatest(turn)) return;
    showRooms(answer.rooms, q ? `Rooms whose topic contains “${q}” or whose id is it` : 'Most recently visited rooms');
    $('rooms-section').dataset.shown = q;
    if (q) status.show(answer.rooms.length + ' room' + (answer.rooms.length === 1 ? '' : 's') + ' found');
  });
}

// ------------------------------------------------------------------ one room: facts, changes, messages

let openedRoom = null;

function closeRoom() {
  openedRoom = null;
  $('room-detail').hidden = true;
  $('room-none').hidden = false;
  $('room-head').textContent = 'Room';
  delete $('room-section').dataset.room;
}

function fact(list, term, value) {
  list.append(element('dt', term), element('dd', value));
}

function showRoom(room) {
  openedRoom = room;
  const { latitude, longitude } = degrees(room.x, room.y);
  $('room-head').textContent = 'Room ' + room.id + ': ' + room.topic;
  const facts = $('room-facts');
  facts.replaceChildren();
  fact(facts, 'Place', room.lobby ? 'the lobby (everywhere)' : latitude.toFixed(5) + ', ' + longitude.toFixed(5));
  fact(facts, 'Zoom level', String(room.z));
  fact(facts, 'Made', when(room.createdAtMs));
  fact(facts, 'Last visit', when(room.lastVisitedAtMs));
  fact(facts, 'Members', String(room.members));
  fact(facts, 'Messages', String(room.messages ?? 0));
  fact(facts, 'Here now', (room.participants || []).join(', ') || 'nobody');
  $('edit-topic').value = room.topic;
  $('edit-latitude').value = room.lobby ? '' : latitude.toFixed(6);
  $('edit-longitude').value = room.lobby ? '' : longitude.toFixed(6);
  $('edit-zoom').value = String(room.z);
  $('edit-reason').value = '';
  for (const control of $('room-edit').elements) control.disabled = room.lobby;
  $('room-remove').disabled = room.lobby;
  $('room-none').hidden = true;
  $('room-detail').hidden = false;
  $('room-section').dataset.room = String(room.id);
}

async function openRoom(id, { focus = true } = {}) {
  await act(null, async () => {
    const answer = await request('GET', 'rooms/' + segment(id));
    showRoom(answer.room);
    await loadMessages();
    if (focus) {
      $('room-head').tabIndex = -1;
      $('room-head').focus();
    }
  });
}

async function openRoomById(event) {
  event.preventDefault();
  const id = $('room-id').value.trim();
  if (!/^[0-9]+$/.test(id) || Number(id) < 1) {
    status.show('A room id is a positive whole number', 'error');
    return;
  }
  await openRoom(id);
}

async function changeRoom(event) {
  event.preventDefault();
  const room = openedRoom;
  if (!room) return;
  const change = {};
  const topic = $('edit-topic').value.trim();
  if (topic !== room.topic) change.topic = topic;
  const { latitude, longitude } = degrees(room.x, room.y);
  const newLatitude = Number($('edit-latitude').value);
  const newLongitude = Number($('edit-longitude').value);
  if ($('edit-latitude').value.trim() === '' || $('edit-longitude').value.trim() === ''
      || !Number.isFinite(newLatitude) || !Number.isFinite(newLongitude)) {
    status.show('Give the latitude and the longitude as decimal degrees', 'error');
    return;
  }
  if (Math.abs(newLatitude - latitude) > 1e-6 || Math.abs(newLongitude - longitude) > 1e-6) {
    change.latitude = newLatitude;
    change.longitude = newLongitude;
  }
  const zoom = Number($('edit-zoom').value);
  if (zoom !== room.z) change.zoom = zoom;
  if (!Object.keys(change).length) {
    status.show('Nothing to change: the room is as the form shows');
    return;
  }
  const reason = $('edit-reason').value.trim();
  if (reason) change.reason = reason;
  await act($('room-save'), async () => {
    await request('PATCH', 'rooms/' + segment(room.id), change);
    status.show('Room ' + room.id + ' changed');
    await openRoom(room.id, { focus: false });
    await findRooms();
  });
}

async function removeRoom() {
  const room = openedRoom;
  if (!room) return;
  await confirmThen($('room-remove'), {
    title: 'Remove room ' + room.id + '?',
    text: `“${room.topic}” goes with its ${room.messages ?? 0} messages and ${room.members} memberships; `
      + 'its id is never used again. This cannot be undone.',
    confirm: 'Remove the room',
  }, async (answer) => {
    await request('DELETE', 'rooms/' + segment(room.id) + query({ reason: answer.reason }));
    closeRoom();
    status.show('Room ' + room.id + ' removed');
    await findRooms();
  });
}

function messageItem(room, message) {
  const item = element('li');
  item.dataset.id = String(message.id);
  const line = element('p');
  line.append(element('span', '#' + message.id, { class: 'id' }), ' ', element('time', when(message.addedAt)), ' ',
    element('strong', message.nick, { class: 'nick' }), ' ', element('span', message.text, { class: 'text' }));
  const who = `message ${message.id} by ${message.nick}`;
  const actions = element('p', null, { class: 'actions' });
  actions.append(
    button('Remove', 'Remove ' + who, (b) => removeMessage(room, message, b), 'danger'),
    button('Remove sender’s messages here', `Remove every message of the sender of ${who} in this room`,
      (b) => removeSendersMessages(room, message, true, b)),
    button('…everywhere', `Remove every message of the sender of ${who} in every room`,
      (b) => removeSendersMessages(room, message, false, b)),
  );
  item.append(line, actions);
  return item;
}

async function loadMessages() {
  const room = openedRoom;
  if (!room) return;
  await act($('messages-refresh'), async () => {
    const answer = await request('GET', 'rooms/' + segment(room.id) + '/transcript' + query({ latest: LATEST_MESSAGES }));
    const list = $('messages');
    list.replaceChildren(...answer.messages.map((m) => messageItem(room, m)));
    if (!answer.messages.length) list.append(element('li', 'No messages', { class: 'empty' }));
    $('room-section').dataset.messagesLoaded = String(Date.now());
  });
}

async function removeMessage(room, message, origin) {
  await confirmThen(origin, {
    title: 'Remove message ' + message.id + '?',
    text: `${message.nick}: “${message.text}”. It disappears from every phone, page and transcript.`,
    confirm: 'Remove the message',
  }, async (answer) => {
    const removed = await request('DELETE',
      'rooms/' + segment(room.id) + '/messages/' + segment(message.id) + query({ reason: answer.reason }));
    status.show(removed.removed ? 'Message ' + message.id + ' removed' : 'Message ' + message.id + ' was removed already');
    await loadMessages();
  });
}

// A sender's messages go in batches (the API takes at most 10,000 a request); the start is fixed
// once, so a message they post meanwhile is either removed or kept, never half.
async function removeSendersMessages(room, message, inThisRoom, origin) {
  const where = inThisRoom ? 'in this room' : 'in every room';
  await confirmThen(origin, {
    title: `Remove every message of ${message.nick} ${where}?`,
    text: `Every message of the session that wrote message ${message.id}, ${where}, from the first one on.`,
    confirm: 'Remove their messages',
  }, async (answer) => {
    const body = {
      senderOf: { room: room.id, id: message.id }, sinceMs: 0, limit: REMOVAL_BATCH,
      ...(inThisRoom ? { room: room.id } : {}), ...(answer.reason ? { reason: answer.reason } : {}),
    };
    let total = 0;
    for (;;) {
      const removed = await request('POST', 'messages/removals', body);
      total += removed.removed;
      if (!removed.more) break;
      status.show(`Removing… ${total} so far`);
    }
    status.show(`${total} message${total === 1 ? '' : 's'} of ${message.nick} removed ${where}`);
    await loadMessages();
  });
}

// ------------------------------------------------------------------ sessions

async function findSessions(event) {
  if (event) event.preventDefault();
  const turn = sessionsAsked.next();
  await act(event && event.submitter, async () => {
    const nick = $('sessions-nick').value.trim();
    const answer = await request('GET', 'sessions' + query({ nick, limit: 100 }));
    if (!sessionsAsked.isLatest(turn)) return;
    const body = $('sessions-table').tBodies[0];
    body.replaceChildren(...answer.sessions.map(sessionRow));
    if (event) status.show(answer.sessions.length + ' live session' + (answer.sessions.length === 1 ? '' : 's'));
  });
}

function sessionRow(s) {
  const actions = element('span', null, { class: 'actions' });
  actions.append(
    button('Rename', 'Rename ' + s.nick, (b) => renameSession(s, b)),
    button('End', 'End the session of ' + s.nick, (b) => endSession(s, b), 'danger'),
    button('Ban', 'Ban the session of ' + s.nick, (b) => banSession(s, b), 'danger'),
  );
  const tr = row([s.nick, element('code', shortSession(s.id)), when(s.lastSeenAtMs), s.banned ? 'yes' : 'no',
    actions]);
  tr.dataset.nick = s.nick;
  return tr;
}

async function renameSession(s, origin) {
  await confirmThen(origin, {
    title: 'Rename ' + s.nick + '?',
    text: 'The session keeps its rooms; a nickname in use gets a suffix, as a phone’s rename does.',
    confirm: 'Rename',
    value: { label: 'New nickname', initial: '' },
  }, async (answer) => {
    const changed = await request('PUT', 'sessions/' + segment(s.id),
      { nick: answer.value, ...(answer.reason ? { reason: answer.reason } : {}) });
    status.show(s.nick + ' is now ' + changed.nick);
    await findSessions();
  });
}

async function endSession(s, origin) {
  await confirmThen(origin, {
    title: 'End the session of ' + s.nick + '?',
    text: 'Its next request, on every gateway, is refused as an unknown session; the phone starts again.',
    confirm: 'End the session',
  }, async (answer) => {
    await request('DELETE', 'sessions/' + segment(s.id) + query({ reason: answer.reason }));
    status.show('The session of ' + s.nick + ' is ended');
    await findSessions();
  });
}

async function banSession(s, origin) {
  await confirmThen(origin, {
    title: 'Ban the session of ' + s.nick + '?',
    text: 'Every command of this session is refused on every gateway until the ban is lifted.',
    confirm: 'Ban the session',
  }, async (answer) => {
    await request('POST', 'bans', { session: s.id, ...(answer.reason ? { reason: answer.reason } : {}) });
    status.show('The session of ' + s.nick + ' is banned');
    await Promise.all([findSessions(), loadBans()]);
  });
}

// ------------------------------------------------------------------ bans

async function loadBans() {
  const turn = bansAsked.next();
  const answer = await request('GET', 'bans');
  if (!bansAsked.isLatest(turn)) return;
  const body = $('bans-table').tBodies[0];
  body.replaceChildren(...answer.bans.map((ban) => {
    const who = ban.target.kind === 'session' ? shortSession(ban.target.value) : ban.target.value;
    const tr = row([ban.target.kind, who, ban.reason, ban.by, when(ban.atMs),
      button('Lift', 'Lift the ban on ' + ban.target.kind + ' ' + who, (b) => liftBan(ban, who, b))]);
    tr.dataset.ban = ban.target.kind + ':' + ban.target.value;
    return tr;
  }));
}

async function banNick(event) {
  event.preventDefault();
  const nick = $('ban-nick').value.trim();
  const reason = $('ban-reason').value.trim();
  await act(event.submitter, async () => {
    await request('POST', 'bans', { nick, ...(reason ? { reason } : {}) });
    $('ban-nick').value = '';
    $('ban-reason').value = '';
    status.show('The nickname ' + nick + ' is banned');
    await loadBans();
  });
}

async function liftBan(ban, who, origin) {
  await act(origin, async () => {
    await request('DELETE', 'bans/' + segment(ban.target.kind) + '/' + segment(ban.target.value));
    status.show('The ban on ' + ban.target.kind + ' ' + who + ' is lifted');
    await loadBans();
  });
}

// ------------------------------------------------------------------ the audit log

async function loadAudit(event) {
  if (event) event.preventDefault();
  const turn = auditAsked.next();
  await act(event && event.submitter, async () => {
    const action = $('audit-action').value.trim();
    const answer = await request('GET', 'audit' + query({ limit: 100, action }));
    if (!auditAsked.isLatest(turn)) return;
    const body = $('audit-table').tBodies[0];
    body.replaceChildren(...answer.entries.map((entry) => {
      const tr = row([when(entry.atMs), entry.actor, entry.action, entry.target, entry.outcome, entry.detail,
        entry.source || '']);
      tr.dataset.action = entry.action;
      return tr;
    }));
    $('audit-section').dataset.loaded = String(Date.now());
  });
}

// ------------------------------------------------------------------ start

async function start() {
  await Promise.all([findRooms(), findSessions(), act(null, loadBans), loadAudit()]);
}

function wire() {
  $('login-form').addEventListener('submit', logIn);
  $('logout').addEventListener('click', logOut);
  $('rooms-find').addEventListener('submit', findRooms);
  $('room-open').addEventListener('submit', openRoomById);
  $('room-edit').addEventListener('submit', changeRoom);
  $('room-remove').addEventListener('click', removeRoom);
  $('messages-refresh').addEventListener('click', loadMessages);
  $('sessions-find').addEventListener('submit', findSessions);
  $('ban-form').addEventListener('submit', banNick);
  $('audit-find').addEventListener('submit', loadAudit);
}

wire();
window.geochatAdmin = { map: () => map, openRoom, session };
showConsole(!!session.token);
if (session.token) start();
else $('login-name').focus();
