// Small DOM and formatting helpers. Every user-provided string reaches the page through
// textContent (h() below), never through innerHTML, so a job named <img src=x onerror=...> is
// shown as text.

// h('div', {class: 'x', onclick: fn}, 'text', childNode, [more]) -> element.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
export const HOLDING = new Set(['PLACED', 'STARTING', 'RUNNING', 'PREEMPTING']);
export const STATES = ['QUEUED', 'PLACED', 'STARTING', 'RUNNING', 'PREEMPTING', 'SUCCEEDED',
  'FAILED', 'CANCELLED'];

export function num(v) {
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

// A stable, distinct color per job id (golden-angle hues).
export function jobColor(id) {
  const hue = (num(id) * 137.508) % 360;
  return `hsl(${hue.toFixed(0)} 65% 52%)`;
}

export function money(v) {
  return '$' + num(v).toFixed(2);
}

export function age(iso, now = Date.now()) {
  if (!iso) return '';
  const s = Math.max(0, (now - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.floor(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function time(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

export function stateBadge(state) {
  return h('span', {class: `state state-${String(state || '').toLowerCase()}`}, state || '?');
}

export function classLabel(preemptible) {
  return preemptible ? 'preemptible' : 'on-demand';
}

export function note(text, kind = 'note') {
  return h('p', {class: kind}, text);
}
