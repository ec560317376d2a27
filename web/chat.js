// Rooms you are in: each keeps its event stream (Server-Sent Events) and counts what you have not read;
// the panel shows one of them, with older messages on scroll. Text only ever goes in through textContent.
import { API, ApiError, api, auth, humanError, isNetworkError, link } from './api.js';

const HISTORY = 50; // messages shown on opening a room
const OLDER_PAGE = 50; // messages per "older" page
const MAX_JOINED = 8; // rooms followed at once (each holds a push stream)
const HEARTBEAT_MS = 20000; // a sign of life, well inside the 60 s presence timeout
const RETRY_MAX_MS = 30000;
const STREAM_GRACE_MS = 3000; // a stream that reconnects within this is not reported
const JOINED_KEY = 'geochat.joined';

const timeOf = (iso) => {
  const d = new Date(iso);
  return isNaN(d) ? '' : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
};

class Convo {
  constructor(id, room) {
    this.id = id;
    this.room = room || { id, topic: 'Room ' + id };
    this.joined = false;
    this.source = null;
    this.stream = 'none';
    this.messages = new Map(); // id -> message
    this.firstId = null;
    this.lastId = 0;
    this.participants = [];
    this.unread = 0;
    this.readId = 0; // the newest message read
    this.failures = 0;
    this.started = false;
    this.noOlder = false;
    this.loadingOlder = false;
    this.viewedAt = 0;
  }

  get hasOlder() {
    return !this.noOlder && this.firstId !== null && this.firstId > 1;
  }
}

export class Chats {
  // el: the panel's elements; hooks: {rooms, notices, announce(text), changed({push}), roomLoaded(room)}
  constructor(el, hooks) {
    this.el = el;
    this.hooks = hooks;
    this.convos = new Map();
    this.current = null; // the convo the panel shows
    el.messages.addEventListener('scroll', () => this.onScroll());
    el.olderLoad.addEventListener('click', () => this.current && this.loadOlder(this.current));
    document.addEventListener('visibilitychange', () => this.current && this.markRead(this.current));
    setInterval(() => this.heartbeat(), HEARTBEAT_MS);
  }

  // ------------------------------------------------------------------ state for the rest of the page

  get shownId() {
    return this.current ? this.current.id : null;
  }

  unread(id) {
    const c = this.convos.get(id);
    return c ? c.unread : 0;
  }

  get unreadTotal() {
    let total = 0;
    for (const c of this.convos.values()) total += c.unread;
    return total;
  }

  joinedConvos() {
    return [...this.convos.values()].filter((c) => c.joined);
  }

  persist() {
    const joined = this.joinedConvos().map((c) => ({ id: c.id, readId: c.readId, topic: c.room.topic }));
    sessionStorage.setItem(JOINED_KEY, JSON.stringify(joined));
  }

  changed(options = {}) {
    this.renderJoined();
    this.hooks.changed(options);
  }

  // ------------------------------------------------------------------ opening, closing, joining

  convo(id) {
    let c = this.convos.get(id);
    if (!c) {
      c = new Convo(id, this.hooks.rooms.rooms.get(id));
      this.convos.set(id, c);
    }
    return c;
  }

  // Shows a room in the panel (joining it when signed in). push: a new history entry for it.
  async open(id, { push = true, focus = true } = {}) {
    this.hooks.notices.recover('gone');
    this.hooks.notices.recover('room');
    if (this.current && this.current.id === id) {
      if (focus) this.focusInput();
      return this.current.room;
    }
    const c = this.convo(id);
    this.current = c;
    c.viewedAt = Date.now();
    this.renderPanel();
    this.changed({ push });
    if (c.room.latitude === undefined) await this.loadRoom(c);
    if (this.convos.get(id) !== c) return null; // gone meanwhile
    if (auth.session && !c.joined) await this.join(c);
    else if (!auth.session) this.hooks.notices.info('Choose a nickname to join and talk');
    if (!c.started) this.start(c);
    if (focus && this.current === c) this.focusInput();
    return c.room;
  }

  async loadRoom(c) {
    try {
      c.room = await api('GET', '/rooms/' + c.id);
      this.hooks.roomLoaded(c.room);
      if (this.current === c) this.renderTitle();
      this.changed();
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) this.gone(c, 'That room no longer exists');
      else this.hooks.notices.report('room', humanError(e, 'Room not loaded'), { network: isNetworkError(e) });
    }
  }

  // Closes the panel; a room you are in stays followed (its unread count goes on).
  hide({ push = true } = {}) {
    const c = this.current;
    if (!c) return;
    this.current = null;
    if (!c.joined) this.drop(c);
    this.renderPanel();
    this.changed({ push });
  }

  async leave(id) {
    const c = this.convos.get(id);
    if (!c) return;
    const wasJoined = c.joined;
    if (this.current === c) this.current = null;
    this.drop(c);
    this.renderPanel();
    this.changed({ push: true });
    if (!wasJoined || !auth.session) return;
    try {
      await api('POST', '/rooms/' + id + '/leave');
      this.hooks.notices.recover('leave');
    } catch (e) {
      this.hooks.notices.report('leave', humanError(e, 'Leaving failed'), { network: isNetworkError(e) });
    }
  }

  drop(c) {
    this.stop(c);
    this.convos.delete(c.id);
    this.persist();
  }

  async join(c) {
    try {
      await api('POST', '/rooms/' + c.id + '/join');
      c.joined = true;
      this.hooks.notices.recover('join');
      this.keepWithinCap(c);
      this.persist();
      this.changed();
    } catch (e) {
      if (e instanceof ApiError && e.code === 'no_such_chat') this.gone(c, 'That room no longer exists');
      else this.hooks.notices.report('join', humanError(e, 'Joining failed'), { network: isNetworkError(e) });
    }
  }

  // At most MAX_JOINED rooms followed: the one looked at longest ago is left.
  keepWithinCap(keep) {
    const joined = this.joinedConvos().filter((c) => c !== keep && c !== this.current);
    if (joined.length < MAX_JOINED) return;
    joined.sort((a, b) => a.viewedAt - b.viewedAt);
    const oldest = joined[0];
    this.hooks.notices.info('Left “' + oldest.room.topic + '”: at most ' + MAX_JOINED + ' rooms at a time');
    this.leave(oldest.id);
  }

  // Signed in (or again): join the room on show; signed out: no room is joined any more.
  sessionChanged() {
    if (!auth.session) {
      for (const c of this.convos.values()) c.joined = false;
      this.persist();
      this.changed();
      return;
    }
    if (this.current && !this.current.joined) this.join(this.current);
  }

  gone(c, text) {
    this.hooks.notices.report('gone', text);
    if (this.current === c) this.current = null;
    this.drop(c);
    this.hooks.rooms.forget(c.id);
    this.renderPanel();
    this.changed({ push: false });
  }

  // Rooms followed before a reload of this tab: followed again (their unread counts from what was read).
  restore() {
    let saved = [];
    try {
      saved = JSON.parse(sessionStorage.getItem(JOINED_KEY) || '[]');
    } catch (e) {
      saved = [];
    }
    if (!auth.session || !Array.isArray(saved)) return;
    for (const s of saved.slice(0, MAX_JOINED)) {
      if (!Number.isInteger(s.id) || this.convos.has(s.id)) continue;
      const c = this.convo(s.id);
      if (typeof s.topic === 'string' && c.room.latitude === undefined) c.room.topic = s.topic;
      c.readId = Number(s.readId) || 0;
      c.joined = true; // so that the page follows it while the join below goes out
      this.join(c);
      this.start(c);
    }
    this.changed();
  }

  // ------------------------------------------------------------------ leaving with the tab, coming back

  // pagehide: leave every room (a closed tab is not left listed for a minute); the list stays in
  // sessionStorage, so a reload follows the same rooms again.
  exitPage() {
    for (const c of this.convos.values()) {
      if (c.joined && auth.session) {
        fetch(API + '/rooms/' + c.id + '/leave', { method: 'POST', keepalive: true, headers: auth.header() })
          .catch(() => {});
      }
      this.stop(c, { keepStarted: true });
    }
  }

  // pageshow from the back-forward cache: as before the pagehide.
  resumePage() {
    for (const c of this.convos.values()) {
      if (c.joined && auth.session) this.join(c);
      this.listen(c);
    }
  }

  // The browser is online again: streams that gave up start again now.
  reconnect() {
    for (const c of this.convos.values()) {
      if (!c.started) continue;
      if (!c.source || c.source.readyState === EventSource.CLOSED) {
        clearTimeout(c.retryTimer);
        this.listen(c);
      }
    }
  }

  // Any request with the session is a sign of life: it keeps you listed in every room you are in.
  async heartbeat() {
    const target = (this.current && this.current.joined) ? this.current : this.joinedConvos()[0];
    if (!auth.session || !target) return;
    try {
      const out = await api('GET', '/rooms/' + target.id + '/participants');
      this.hooks.notices.recover('presence');
      if (out && out.participants) this.setParticipants(target, out.participants);
    } catch (e) {
      if (isNetworkError(e)) this.hooks.notices.report('presence', humanError(e, 'Not in touch'), { network: true });
    }
  }

  // ------------------------------------------------------------------ history and the stream

  async start(c) {
    c.started = true;
    const fresh = c.readId === 0;
    try {
      const out = await api('GET', '/rooms/' + c.id + '/messages?after=0&limit=' + HISTORY);
      if (this.convos.get(c.id) !== c) return;
      // A room followed before a reload counts what came since it was last read, quietly.
      for (const m of (out && out.messages) || []) this.add(c, m, { live: !fresh, quiet: true });
      if (fresh) c.readId = c.lastId;
      if (!out || !out.messages || out.messages.length < HISTORY) c.noOlder = true;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'no_such_chat') { this.gone(c, 'That room no longer exists'); return; }
      this.hooks.notices.report('history', humanError(e, 'Messages not loaded'), { network: isNetworkError(e) });
    }
    this.markRead(c);
    this.listen(c);
  }

  listen(c) {
    this.stop(c, { keepStarted: true });
    if (this.convos.get(c.id) !== c) return;
    const url = API + '/rooms/' + c.id + '/events' + (c.lastId ? '?after=' + c.lastId : '');
    const source = new EventSource(url);
    c.source = source;
    this.setStream(c, 'connecting');
    source.addEventListener('open', () => this.opened(c, source));
    source.addEventListener('message', (ev) => this.onEvent(c, source, ev, (data) => this.add(c, data, { live: true })));
    source.addEventListener('participants', (ev) => this.onEvent(c, source, ev, (data) => this.setParticipants(c, data.participants || [])));
    source.addEventListener('removed', (ev) => this.onEvent(c, source, ev, (data) => this.removeMessages(c, data.ids || [])));
    source.addEventListener('gone', () => { if (c.source === source) this.gone(c, '“' + c.room.topic + '” is gone'); });
    source.addEventListener('error', (ev) => this.streamError(c, source, ev));
  }

  opened(c, source) {
    if (c.source !== source) return;
    c.failures = 0;
    clearTimeout(c.graceTimer);
    link.ok(); // an answer: the gateway is there
    this.setStream(c, 'open');
    if (c === this.current) this.hooks.notices.recover('stream');
  }

  onEvent(c, source, ev, use) {
    if (c.source !== source) return;
    try {
      use(JSON.parse(ev.data));
    } catch (e) {
      this.hooks.notices.report('stream', 'A live update could not be read (' + e.message + ')');
    }
  }

  streamError(c, source, ev) {
    if (c.source !== source) return;
    if (ev.data) { // a problem document the server sent before ending the stream
      try {
        this.hooks.notices.report('stream', 'Live updates paused: ' + (JSON.parse(ev.data).detail || 'refused'));
      } catch (e) { /* not a problem document: reported below as an interruption */ }
    }
    this.setStream(c, 'retrying');
    clearTimeout(c.graceTimer);
    c.graceTimer = setTimeout(() => {
      if (c.source !== source || c.stream === 'open') return;
      link.fail();
      if (c === this.current) this.hooks.notices.report('stream', 'Live updates interrupted; reconnecting…', { network: true });
    }, STREAM_GRACE_MS);
    if (source.readyState === EventSource.CLOSED) {
      // The browser gave up (an error status, not a stream): try again from the last id, later and later.
      c.failures += 1;
      const wait = Math.min(RETRY_MAX_MS, 2000 * 2 ** (c.failures - 1));
      clearTimeout(c.retryTimer);
      c.retryTimer = setTimeout(() => { if (this.convos.get(c.id) === c) this.listen(c); }, wait);
    }
  }

  stop(c, { keepStarted = false } = {}) {
    if (c.source) c.source.close();
    c.source = null;
    clearTimeout(c.retryTimer);
    clearTimeout(c.graceTimer);
    if (!keepStarted) c.started = false;
    this.setStream(c, 'none');
  }

  setStream(c, state) {
    c.stream = state;
    if (c === this.current) {
      link.setStream(state);
      if (state === 'none') delete this.el.chat.dataset.live; else this.el.chat.dataset.live = state;
    }
  }

  // ------------------------------------------------------------------ messages

  add(c, m, { live, quiet = false }) {
    if (!m || typeof m.id !== 'number' || (m.room !== undefined && Number(m.room) !== c.id)) return;
    if (c.messages.has(m.id)) return;
    c.messages.set(m.id, m);
    c.lastId = Math.max(c.lastId, m.id);
    c.firstId = c.firstId === null ? m.id : Math.min(c.firstId, m.id);
    this.hooks.rooms.noteActivity(c.id, Date.parse(m.addedAt) || Date.now());
    if (live) this.countUnread(c, m, quiet);
    if (c === this.current) this.showMessage(m);
  }

  // An operator removed them (`event: removed`; on resuming, those removed while away): off the screen.
  removeMessages(c, ids) {
    for (const id of ids) {
      if (typeof id !== 'number' || !c.messages.delete(id)) continue;
      if (c !== this.current) continue;
      const li = this.el.messages.querySelector('.message[data-message-id="' + id + '"]');
      if (li) li.remove();
    }
  }

  countUnread(c, m, quiet) {
    const mine = auth.nick && m.nick === auth.nick;
    if (mine || m.id <= c.readId) return;
    const looking = c === this.current && !document.hidden;
    if (looking) {
      c.readId = m.id;
      if (!quiet) this.hooks.announce(m.nick + ': ' + m.text);
      this.persist();
      return;
    }
    c.unread += 1;
    if (!quiet && c.unread === 1 && c !== this.current) this.hooks.announce('New message in ' + c.room.topic);
    this.changed();
  }

  markRead(c) {
    if (c !== this.current || document.hidden) return;
    if (c.unread === 0 && c.readId >= c.lastId) return;
    c.unread = 0;
    c.readId = c.lastId;
    this.persist();
    this.changed();
  }

  messageElement(m) {
    const li = document.createElement('li');
    li.className = 'message';
    if (auth.nick && m.nick === auth.nick) li.classList.add('mine');
    li.dataset.messageId = String(m.id);
    const time = document.createElement('time');
    time.className = 'time';
    time.textContent = timeOf(m.addedAt);
    if (m.addedAt) time.dateTime = m.addedAt;
    const nick = document.createElement('span');
    nick.className = 'nick';
    nick.textContent = m.nick;
    const text = document.createElement('span');
    text.className = 'text';
    text.textContent = m.text;
    li.append(time, nick, text);
    return li;
  }

  // In id order: history, live messages and older pages arrive in any order.
  showMessage(m) {
    const list = this.el.messages;
    const li = this.messageElement(m);
    let before = null;
    for (let n = list.lastElementChild; n; n = n.previousElementSibling) {
      if (Number(n.dataset.messageId) < m.id) break;
      before = n;
    }
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    const mine = auth.nick && m.nick === auth.nick;
    list.insertBefore(li, before);
    if (!before && (atBottom || mine)) list.scrollTop = list.scrollHeight;
  }

  async loadOlder(c) {
    if (!c.hasOlder || c.loadingOlder) return;
    c.loadingOlder = true;
    this.renderOlder();
    const list = this.el.messages;
    const before = c.firstId;
    const after = Math.max(0, before - 1 - OLDER_PAGE);
    try {
      const out = await api('GET', '/rooms/' + c.id + '/transcript?after=' + after + '&limit=' + (before - 1 - after));
      const older = ((out && out.messages) || []).filter((m) => m.id < before);
      const height = list.scrollHeight, top = list.scrollTop;
      for (const m of older) this.add(c, m, { live: false });
      if (c === this.current) list.scrollTop = top + (list.scrollHeight - height); // keep what was in view
      if (older.length === 0 || after === 0) c.noOlder = true;
      this.hooks.notices.recover('older');
    } catch (e) {
      this.hooks.notices.report('older', humanError(e, 'Older messages not loaded'), { network: isNetworkError(e) });
    } finally {
      c.loadingOlder = false;
      this.renderOlder();
    }
  }

  onScroll() {
    const c = this.current;
    if (c && this.el.messages.scrollTop < 60) this.loadOlder(c);
  }

  // ------------------------------------------------------------------ talking

  async say(text) {
    const c = this.current;
    if (!c) return false;
    try {
      const m = await api('POST', '/rooms/' + c.id + '/messages', { text });
      if (!c.joined) { // saying joins
        c.joined = true;
        this.persist();
        this.changed();
      }
      this.add(c, m, { live: false });
      this.hooks.notices.recover('say');
      return true;
    } catch (e) {
      this.hooks.notices.report('say', humanError(e, 'Message not sent'), { network: isNetworkError(e) });
      return false;
    }
  }

  setParticipants(c, list) {
    c.participants = list;
    if (c === this.current) this.renderParticipants();
  }

  // ------------------------------------------------------------------ the panel

  focusInput() {
    if (auth.session && document.activeElement !== this.el.nick) this.el.sayText.focus();
  }

  renderPanel() {
    const c = this.current;
    this.el.chat.hidden = !c;
    if (!c) {
      delete this.el.chat.dataset.roomId;
      delete this.el.chat.dataset.live;
      link.setStream('none');
      this.el.messages.replaceChildren();
      this.el.participants.replaceChildren();
      this.hooks.rooms.markActive();
      return;
    }
    this.el.chat.dataset.roomId = String(c.id);
    this.setStream(c, c.stream);
    this.renderTitle();
    this.el.messages.replaceChildren(...[...c.messages.values()].sort((a, b) => a.id - b.id).map((m) => this.messageElement(m)));
    this.el.messages.scrollTop = this.el.messages.scrollHeight;
    this.renderParticipants();
    this.renderOlder();
    this.hooks.rooms.markActive();
    this.markRead(c);
  }

  renderTitle() {
    if (this.current) this.el.chatTitle.textContent = this.current.room.topic;
  }

  renderParticipants() {
    const c = this.current;
    this.el.participants.replaceChildren(...(c ? c.participants : []).map((name) => {
      const li = document.createElement('li');
      li.textContent = name;
      return li;
    }));
  }

  renderOlder() {
    const c = this.current;
    this.el.older.hidden = !(c && c.hasOlder);
    this.el.olderLoad.disabled = !!(c && c.loadingOlder);
    this.el.olderLoad.textContent = c && c.loadingOlder ? 'Loading older messages…' : 'Show older messages';
  }

  renderJoined() {
    const joined = this.joinedConvos().sort((a, b) => b.unread - a.unread || a.room.topic.localeCompare(b.room.topic));
    const list = this.el.joinedList;
    const focused = list.contains(document.activeElement) ? document.activeElement.dataset.roomId : null;
    this.el.joinedSection.hidden = joined.length === 0;
    list.replaceChildren(...joined.map((c) => this.joinedItem(c)));
    const again = focused && list.querySelector('[data-room-id="' + focused + '"]');
    if (again) again.focus();
  }

  joinedItem(c) {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'room-item';
    button.dataset.roomId = String(c.id);
    if (c === this.current) button.setAttribute('aria-current', 'true');
    const topic = document.createElement('span');
    topic.className = 'topic';
    topic.textContent = c.room.topic;
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.textContent = c.unread ? String(c.unread) : '';
    badge.hidden = !c.unread;
    button.append(topic, badge);
    button.setAttribute('aria-label', c.room.topic + (c.unread ? ', ' + c.unread + ' unread' : ''));
    button.addEventListener('click', () => this.open(c.id));
    li.append(button);
    return li;
  }
}
