// Queue: jobs with state, user, accelerator, class, priority, progress, restarts, age, reason and
// cost. Filters (state, class, user) and paging go to the API (pages of up to 500 by id, so
// 10,000 jobs are 20 pages); sorting and the name filter apply to the page shown.
import {api, optional} from './api.js';
import {STATES, age, classLabel, clear, h, money, num, stateBadge} from './util.js';
import {latestProgress, rememberProgress} from './progress_cache.js';

const COLUMNS = [
  ['id', 'id', (j) => num(j.id)],
  ['name', 'name', (j) => j.name || ''],
  ['state', 'state', (j) => STATES.indexOf(j.state)],
  ['user', 'user', (j) => j.user],
  ['accelerator', 'accel.', (j) => num(String(j.accelerator).split('-')[1])],
  ['class', 'class', (j) => (j.preemptible ? 1 : 0)],
  ['priority', 'prio', (j) => num(j.priority)],
  ['progress', 'progress', (j) => num(j.step)],
  ['restarts', 'restarts', (j) => num(j.restarts)],
  ['age', 'age', (j) => -Date.parse(j.submit_time || 0)],
  ['reason', 'pending reason', (j) => j.reason || ''],
  ['cost', 'cost', (j) => num(j.cost_usd)],
];

let root = null;
let q = null;
let page = null;
let refreshTimer = null;
let ageTimer = null;
let progressApi = true;  // false once GET .../progress answered 404 (no worker bus)
const kMaxProgressFetches = 50;

function defaults() {
  return {state: '', cls: '', user: '', pageSize: 100, tokens: [''], text: '', sort: 'id', dir: 1};
}

export async function mount(el, ctx) {
  root = el;
  q ||= defaults();
  const admin = ctx.user.role === 'admin';
  const stateSel = h('select', {id: 'f-state', 'aria-label': 'state',
    onchange: (e) => { q.state = e.target.value; reset(); }},
  h('option', {value: ''}, 'any state'), STATES.map((s) => h('option', {value: s}, s)));
  stateSel.value = q.state;
  const clsSel = h('select', {id: 'f-class', 'aria-label': 'class',
    onchange: (e) => { q.cls = e.target.value; reset(); }},
  h('option', {value: ''}, 'any class'), h('option', {value: 'on-demand'}, 'on-demand'),
  h('option', {value: 'preemptible'}, 'preemptible'));
  clsSel.value = q.cls;
  const sizeSel = h('select', {id: 'f-size', 'aria-label': 'page size',
    onchange: (e) => { q.pageSize = Number(e.target.value); reset(); }},
  [25, 100, 500].map((n) => h('option', {value: n}, `${n} per page`)));
  sizeSel.value = String(q.pageSize);
  const user = admin ? h('input', {id: 'f-user', type: 'search', placeholder: 'user',
    'aria-label': 'user', value: q.user,
    onchange: (e) => { q.user = e.target.value.trim(); reset(); }}) : null;
  const text = h('input', {id: 'f-text', type: 'search', placeholder: 'name filter (page)',
    'aria-label': 'name filter', value: q.text,
    oninput: (e) => { q.text = e.target.value; render(); }});
  root.append(h('h1', {}, 'Queue'),
    h('div', {class: 'toolbar'}, stateSel, clsSel, user, text, sizeSel),
    h('div', {class: 'pager'},
      h('button', {type: 'button', id: 'prev', onclick: prev}, '‹ Prev'),
      h('span', {id: 'page-info'}),
      h('button', {type: 'button', id: 'next', onclick: next}, 'Next ›')),
    h('div', {class: 'table-wrap'}, h('table', {class: 'table queue', id: 'queue'})));
  ctx.subscribe((type, ev) => {
    if (type === 'open') return schedule();
    if (!page || !ev?.job) return;
    const i = page.jobs.findIndex((j) => String(j.id) === String(ev.job.id));
    if (i >= 0) {
      page.jobs[i] = ev.job;
      render();
    }
    if (type !== 'job') return;
    if (i < 0 || (q.state && ev.job.state !== q.state)) schedule();  // new or leaving the filter
  });
  ageTimer = setInterval(render, 15000);  // ages move on without events
  await load();
}

export function unmount() {
  clearInterval(ageTimer);
  clearTimeout(refreshTimer);
  refreshTimer = null;
  root = null;
}

function schedule() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; load().catch(() => {}); }, 1000);
}

function reset() {
  q.tokens = [''];
  load();
}

function next() {
  if (!page?.next_page_token) return;
  q.tokens.push(page.next_page_token);
  load();
}

function prev() {
  if (q.tokens.length <= 1) return;
  q.tokens.pop();
  load();
}

async function load() {
  const params = new URLSearchParams({page_size: String(q.pageSize)});
  if (q.state) params.set('state', q.state);
  if (q.cls) params.set('class', q.cls);
  if (q.user) params.set('user', q.user);
  const token = q.tokens[q.tokens.length - 1];
  if (token) params.set('page_token', token);
  const data = await api('/api/v1/jobs?' + params);
  if (!root) return;
  page = {jobs: data.jobs || [], next_page_token: data.next_page_token || '',
    total: num(data.total)};
  render();
  loadProgress();
}

// The newest progress report of the active jobs shown (for "step / total").
async function loadProgress() {
  if (!progressApi) return;
  const active = page.jobs.filter((j) => j.state === 'RUNNING' || j.state === 'PREEMPTING')
    .slice(0, kMaxProgressFetches);
  await Promise.all(active.map(async (j) => {
    const data = await optional(`/api/v1/jobs/${encodeURIComponent(j.id)}/progress`)
      .catch(() => undefined);
    if (data === null) progressApi = false;
    const points = data?.points || [];
    if (points.length) rememberProgress(j.id, points[points.length - 1]);
  }));
  render();
}

function progressText(j) {
  const p = latestProgress(j.id);
  const step = Math.max(num(j.step), num(p?.step));
  const total = num(p?.total_steps);
  return total ? `${step} / ${total}` : (step ? `step ${step}` : '—');
}

function render() {
  if (!root || !page) return;
  const table = clear(root.querySelector('#queue'));
  const first = (q.tokens.length - 1) * q.pageSize;
  root.querySelector('#page-info').textContent = page.total ?
    `jobs ${first + 1}–${first + page.jobs.length} of ${page.total}` : 'no jobs';
  root.querySelector('#prev').disabled = q.tokens.length <= 1;
  root.querySelector('#next').disabled = !page.next_page_token;
  const col = COLUMNS.find((c) => c[0] === q.sort) || COLUMNS[0];
  const needle = q.text.toLowerCase();
  const rows = page.jobs.filter((j) => !needle || String(j.name).toLowerCase().includes(needle))
    .sort((a, b) => {
      const x = col[2](a);
      const y = col[2](b);
      return (x < y ? -1 : x > y ? 1 : num(a.id) - num(b.id)) * q.dir;
    });
  table.append(h('thead', {}, h('tr', {}, COLUMNS.map(([key, label]) => h('th', {
    class: key === q.sort ? (q.dir > 0 ? 'sorted asc' : 'sorted desc') : '',
    'aria-sort': key === q.sort ? (q.dir > 0 ? 'ascending' : 'descending') : 'none'},
  h('button', {type: 'button', class: 'sort', onclick: () => {
    q.dir = q.sort === key ? -q.dir : 1;
    q.sort = key;
    render();
  }}, label))))));
  const now = Date.now();
  table.append(h('tbody', {}, rows.length ? rows.map((j) => h('tr', {dataset: {job: j.id}},
    h('td', {}, h('a', {href: `#/job/${j.id}`}, `#${num(j.array_id) ? j.task_name : j.id}`)),
    h('td', {class: 'name'}, h('a', {href: `#/job/${j.id}`}, j.name || '(unnamed)')),
    h('td', {class: 'state-cell'}, stateBadge(j.state)),
    h('td', {}, j.user),
    h('td', {}, j.accelerator),
    h('td', {}, classLabel(j.preemptible)),
    h('td', {class: 'num'}, num(j.priority)),
    h('td', {class: 'num'}, progressText(j)),
    h('td', {class: 'num'}, num(j.restarts)),
    h('td', {class: 'num'}, age(j.submit_time, now)),
    h('td', {class: 'reason'}, j.reason || ''),
    h('td', {class: 'num'}, money(j.cost_usd)))) :
    h('tr', {}, h('td', {colspan: COLUMNS.length, class: 'muted'}, 'No jobs match.'))));
}
