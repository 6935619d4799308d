// The dashboard's shell: login/logout, the hash router (#/pod, #/queue, #/job/ID, #/usage,
// #/agents) and the live event stream with reconnection.
import {api, ApiError, setUnauthenticatedHandler} from './api.js';
import {clear, h} from './util.js';
import {rememberProgress} from './progress_cache.js';
import * as podView from './pod.js';
import * as queueView from './queue.js';
import * as jobView from './job.js';
import * as usageView from './usage.js';
import * as agentsView from './agents.js';

const $ = (id) => document.getElementById(id);
const state = {user: null, current: null, stream: null, retry: 0, retryTimer: null};
const listeners = new Set();

// Views subscribe to stream events: fn(type, data) with type 'job' | 'progress' | 'open'.
function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function emit(type, data) {
  for (const fn of [...listeners]) {
    try {
      fn(type, data);
    } catch (e) {
      console.warn('stream listener failed', e);
    }
  }
}

function banner(text, kind = 'warn') {
  const b = $('banner');
  b.textContent = text || '';
  b.className = `banner ${kind}`;
  b.hidden = !text;
}

// --- login ---------------------------------------------------------------------------------

function showLogin(message = '') {
  stopStream();
  state.user = null;
  listeners.clear();
  $('nav').hidden = true;
  $('logout').hidden = true;
  $('who').textContent = '';
  clear($('view'));
  $('login').hidden = false;
  $('login-error').textContent = message;
  $('token').focus();
}

async function login(ev) {
  ev.preventDefault();
  const token = $('token').value.trim();
  $('login-error').textContent = '';
  try {
    const user = await api('/api/v1/login', {method: 'POST', body: {token}, quiet401: true});
    $('token').value = '';
    await enter(user);
  } catch (e) {
    $('login-error').textContent = e instanceof ApiError && e.status === 401 ?
      'Wrong token. Use the token podsched printed at first start (var/admin.token) or your own.' :
      `Login failed: ${e.message}`;
  }
}

async function logout() {
  try {
    await api('/api/v1/logout', {method: 'POST'});
  } finally {
    banner('');
    location.hash = '#/pod';
    showLogin('Logged out.');
  }
}

async function enter(user) {
  state.user = user;
  $('login').hidden = true;
  $('nav').hidden = false;
  $('logout').hidden = false;
  $('who').textContent = `${user.name} (${user.role})`;
  for (const a of document.querySelectorAll('#nav a[data-view="agents"]')) {
    a.hidden = user.role !== 'admin';
  }
  startStream();
  route();
}

// --- live stream -----------------------------------------------------------------------------

function stopStream() {
  clearTimeout(state.retryTimer);
  if (state.stream) state.stream.close();
  state.stream = null;
}

function startStream() {
  if (state.stream) state.stream.close();
  const es = new EventSource('/api/v1/events/stream');
  state.stream = es;
  es.addEventListener('open', () => {
    const wasLost = state.retry > 0;
    state.retry = 0;
    if (wasLost) {
      banner('Live updates reconnected.', 'ok');
      setTimeout(() => { if (state.retry === 0) banner(''); }, 3000);
      emit('open', null);  // the stream has no replay: views reload their data
    }
  });
  for (const type of ['job', 'progress']) {
    es.addEventListener(type, (e) => {
      let data;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      if (type === 'progress') rememberProgress(data.job?.id, data.progress);
      emit(type, data);
    });
  }
  es.addEventListener('error', () => {
    // Closed streams are reopened by us (EventSource gives up after a non-200 answer).
    es.close();
    if (state.stream !== es) return;
    state.stream = null;
    state.retry += 1;
    const delay = Math.min(10, 2 ** Math.min(state.retry - 1, 4));
    banner(`Connection to podsched lost; reconnecting in ${delay} s…`, 'warn');
    state.retryTimer = setTimeout(reconnect, delay * 1000);
  });
}

async function reconnect() {
  try {
    await api('/api/v1/whoami', {quiet401: true});
    startStream();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      banner('');
      showLogin('Your session ended (podsched restarted, the session expired, or its token was ' +
                'revoked or its user disabled). Log in again.');
      return;
    }
    state.retry += 1;
    const delay = Math.min(10, 2 ** Math.min(state.retry - 1, 4));
    banner(`Connection to podsched lost; reconnecting in ${delay} s…`, 'warn');
    state.retryTimer = setTimeout(reconnect, delay * 1000);
  }
}

// --- router ----------------------------------------------------------------------------------

const views = {pod: podView, queue: queueView, job: jobView, usage: usageView,
  agents: agentsView};

function route() {
  if (!state.user) return;
  const parts = (location.hash || '#/pod').replace(/^#\/?/, '').split('/');
  const name = views[parts[0]] ? parts[0] : 'pod';
  if (state.current?.unmount) state.current.unmount();
  listeners.clear();
  const root = clear($('view'));
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.view === name ||
                                 (name === 'job' && a.dataset.view === 'queue'));
  }
  const view = views[name];
  state.current = view;
  view.mount(root, {args: parts.slice(1), user: state.user, subscribe}).catch((e) => {
    if (e instanceof ApiError && e.status === 401) return;
    root.append(h('p', {class: 'error'}, `Could not load this page: ${e.message}`));
  });
}

async function boot() {
  $('login-form').addEventListener('submit', login);
  $('logout').addEventListener('click', logout);
  window.addEventListener('hashchange', route);
  setUnauthenticatedHandler(() => showLogin('Your session ended. Log in again.'));
  try {
    await enter(await api('/api/v1/whoami', {quiet401: true}));
  } catch {
    showLogin();
  }
}

boot();
