// Job page: summary, its array and dependencies (sweeps), spec, events timeline, progress charts (loss, accuracy, examples/s; uPlot),
// live log tail, cancel / preempt, and the export of the timeline as Chrome trace-event JSON.
import uPlot from '/vendor/uPlot.esm.js';
import {api, optional} from './api.js';
import {rememberProgress} from './progress_cache.js';
import {buildTrace} from './trace.js';
import {HOLDING, TERMINAL, age, classLabel, clear, h, money, note, num, stateBadge, time}
  from './util.js';

let root = null;
let ctx = null;
let id = null;
let job = null;
let events = [];
let points = [];      // progress points, oldest first
let progressApi = true;
let charts = [];
let logTimer = null;
let logOffset = 0;
let refreshTimer = null;
let actionMessage = '';  // the outcome of the last button, kept across re-renders

export async function mount(el, context) {
  root = el;
  ctx = context;
  id = context.args[0];
  actionMessage = '';
  points = [];
  events = [];
  logOffset = 0;
  job = await api(`/api/v1/jobs/${encodeURIComponent(id)}`);
  if (!root) return;
  root.append(h('div', {id: 'job-head'}), h('div', {id: 'job-summary'}),
    h('section', {class: 'panel', id: 'job-sweep', hidden: true}),
    h('section', {class: 'panel'}, h('h2', {}, 'Training progress'), h('div', {id: 'charts'})),
    h('section', {class: 'panel'}, h('h2', {}, 'Timeline'), h('div', {id: 'timeline'})),
    h('section', {class: 'panel'}, h('h2', {}, 'Log (live tail)'),
      h('p', {id: 'log-note', class: 'muted'}), h('pre', {id: 'log', class: 'log'})),
    h('section', {class: 'panel'}, h('h2', {}, 'Spec'), h('pre', {id: 'spec', class: 'spec'})));
  renderHead();
  renderSummary();
  renderSweep();
  root.querySelector('#spec').textContent = JSON.stringify(job.spec || {}, null, 2);
  context.subscribe(onStream);
  await Promise.all([loadEvents(), loadProgress()]);
  pollLogs();
}

export function unmount() {
  clearTimeout(logTimer);
  clearTimeout(refreshTimer);
  for (const c of charts) c.destroy();
  charts = [];
  root = null;
}

// Whether a stream frame about another job changes this page's array or dependency view.
function touchesSweep(other) {
  if (!other || String(other.id) === String(job.id)) return false;
  if (num(job.array_id) && String(other.array_id) === String(job.array_id)) return true;
  return (job.dependencies || []).some((d) => {
    const target = d.dependency.split(':')[1] || '';
    const [array, index] = target.split('_');
    return String(other.id) === array || String(other.array_id) === array &&
      (index === undefined || String(other.array_index) === index);
  });
}

function onStream(type, ev) {
  if (type === 'open') return refresh();
  if (type === 'job' && touchesSweep(ev?.job)) return refresh();
  if (String(ev?.job?.id) !== String(job.id)) return;
  if (type === 'job') {
    // Stream frames carry no spec and no sweep details: keep the last full reply's.
    job = {...ev.job, spec: job.spec, dependencies: job.dependencies, array: job.array};
    renderHead();
    renderSummary();
    if (ev.event) {
      events.push(ev.event);
      renderTimeline();
    }
    if (TERMINAL.has(job.state)) pollLogs();
  } else if (type === 'progress' && ev.progress) {
    points.push(ev.progress);
    rememberProgress(id, ev.progress);
    renderSummary();
    renderCharts();
    if (num(ev.progress.last_checkpoint_step) > num(points[points.length - 2]?.last_checkpoint_step)) {
      renderTimeline();
    }
  }
}

function refresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    try {
      job = await api(`/api/v1/jobs/${encodeURIComponent(id)}`);
      if (!root) return;
      renderHead();
      renderSummary();
      renderSweep();
      await Promise.all([loadEvents(), loadProgress()]);
    } catch { /* banner shows the connection */ }
  }, 200);
}

function renderHead() {
  const head = clear(root.querySelector('#job-head'));
  const active = !TERMINAL.has(job.state);
  head.append(h('div', {class: 'job-title'},
    h('h1', {}, h('span', {class: 'muted'},
      `Job #${job.id} ${num(job.array_id) ? `(${job.task_name}) ` : ''}`), h('span', {id: 'job-name'},
      job.name || '(unnamed)')),
    h('span', {id: 'job-state'}, stateBadge(job.state))),
  h('div', {class: 'actions'},
    confirmButton('Preempt', 'preempt', active && job.state !== 'PREEMPTING',
      'Checkpoint and requeue this job'),
    confirmButton('Cancel', 'cancel', active, 'Stop this job for good'),
    h('button', {type: 'button', id: 'export-trace', onclick: exportTrace,
      title: 'Download the timeline as Chrome trace-event JSON (open it in ui.perfetto.dev)'},
    'Export trace (Perfetto)'),
    h('span', {id: 'action-msg', class: 'muted', role: 'status'}, actionMessage)));
}

// A button that asks once more before acting (no window.confirm: dialogs block tests and users).
function confirmButton(label, verb, enabled, title) {
  const b = h('button', {type: 'button', id: `btn-${verb}`, class: 'danger', title,
    disabled: !enabled});
  b.textContent = label;
  let armed = null;
  b.addEventListener('click', async () => {
    if (!armed) {
      b.textContent = `Really ${verb}?`;
      b.classList.add('armed');
      armed = setTimeout(() => { armed = null; b.textContent = label; b.classList.remove('armed'); },
        4000);
      return;
    }
    clearTimeout(armed);
    armed = null;
    b.disabled = true;
    const msg = root.querySelector('#action-msg');
    actionMessage = '';
    try {
      job = {...await api(`/api/v1/jobs/${encodeURIComponent(id)}/${verb}`, {method: 'POST'}),
        spec: job.spec};
      actionMessage = `${verb} requested`;
      renderHead();
      renderSummary();
    } catch (e) {
      actionMessage = msg.textContent = `${verb} failed: ${e.message}`;
      b.disabled = false;
      b.textContent = label;
    }
  });
  return b;
}

function renderSummary() {
  const s = clear(root.querySelector('#job-summary'));
  const rows = [
    ['user', job.user], ['accelerator', job.accelerator], ['class', classLabel(job.preemptible)],
    ['priority', num(job.priority)], ['epoch', num(job.epoch)], ['restarts', num(job.restarts)],
    ['preemptions', num(job.preemptions)], ['step', stepText()],
    ['last checkpoint', `step ${Math.max(num(job.last_checkpoint_step),
      num(points[points.length - 1]?.last_checkpoint_step))}`], ['cost so far', money(job.cost_usd)],
    ['checkpoints in', job.checkpoint_store ?
      `${job.checkpoint_store}${job.checkpoint_zone ? ` (zone ${job.checkpoint_zone})` : ''}` : '—'],
    ['egress', num(job.egress_bytes) > 0 ? `${money(job.egress_usd)} for ` +
      `${(num(job.egress_bytes) / 2 ** 30).toFixed(2)} GiB across zones` : '—'],
    ['submitted', `${time(job.submit_time)} (${age(job.submit_time)} ago)`],
    ['started', time(job.start_time) || '—'], ['ended', time(job.end_time) || '—'],
    ['pod', job.pod || '—'], ['hosts', (job.hosts || []).join(', ') || '—'],
    ['reason', job.reason || '—'],
  ];
  s.append(h('dl', {class: 'summary'}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])));
}

// The job's array (its tasks by state) and its dependencies with their state; hidden when the
// job has neither.
function renderSweep() {
  const panel = clear(root.querySelector('#job-sweep'));
  const deps = job.dependencies || [];
  const array = num(job.array_id) ? job.array : null;
  panel.hidden = !array && deps.length === 0;
  if (panel.hidden) return;
  panel.append(h('h2', {}, array ? 'Array and dependencies' : 'Dependencies'));
  if (array) {
    const states = Object.entries(array.tasks_by_state || {}).sort(([a], [b]) => a.localeCompare(b));
    const ended = ['SUCCEEDED', 'FAILED', 'CANCELLED']
      .reduce((n, st) => n + num(array.tasks_by_state?.[st]), 0);
    panel.append(h('p', {id: 'job-array'}, 'Task ', h('b', {}, job.task_name), ' of array ',
      h('a', {href: `#/job/${array.array_id}`}, `#${array.array_id}`),
      ` (${array.expression}, ${num(array.tasks)} tasks`,
      num(array.throttle) ? `, at most ${num(array.throttle)} at once)` : ')'),
    h('p', {id: 'array-progress'}, `${ended} of ${num(array.tasks)} ended: `,
      states.map(([st, n]) => [stateBadge(st), ` ${n} `])));
  }
  if (deps.length) {
    panel.append(h('ul', {id: 'job-deps'}, deps.map((d) => {
      const target = d.dependency.split(':')[1];
      return h('li', {'data-verdict': d.verdict}, h('a', {href: `#/job/${target}`}, d.dependency),
        ' — ', d.target_state, ' — ', d.verdict === 'met' ? 'met' :
          d.verdict === 'never' ? 'can never be met' : 'waiting');
    })));
  }
}

// "120 of 400 (30%) · loss 0.412 · accuracy 0.871" once progress reports arrived.
function stepText() {
  const p = points[points.length - 1];
  const step = Math.max(num(job.step), num(p?.step));
  if (!p) return String(step);
  const total = num(p.total_steps);
  const parts = [total ? `${step} of ${total} (${Math.floor((100 * step) / total)}%)` : `${step}`];
  parts.push(`loss ${num(p.loss).toFixed(3)}`, `accuracy ${num(p.accuracy).toFixed(3)}`);
  return parts.join(' · ');
}

async function loadEvents() {
  const data = await api(`/api/v1/jobs/${encodeURIComponent(id)}/events`);
  events = data.events || [];
  if (root) renderTimeline();
}

// Checkpoints the job reported: the first progress point after the last checkpoint step grew.
function checkpoints() {
  const out = [];
  let last = 0;
  for (const p of points) {
    if (num(p.last_checkpoint_step) > last) {
      last = num(p.last_checkpoint_step);
      out.push({time: p.time, step: last, epoch: num(p.epoch)});
    }
  }
  return out;
}

function renderTimeline() {
  const t = clear(root.querySelector('#timeline'));
  if (!events.length) return t.append(note('No events yet.'));
  const items = [...events.map((e) => ({at: Date.parse(e.time), e})),
    ...checkpoints().map((c) => ({at: Date.parse(c.time), c}))].sort((a, b) => a.at - b.at);
  t.append(h('ol', {class: 'timeline'}, items.map(({e, c}) => (c ?
    h('li', {class: 'ev ev-checkpoint'}, h('time', {datetime: c.time}, time(c.time)),
      ` checkpoint committed at step ${c.step}`,
      h('span', {class: 'muted'}, ` epoch ${c.epoch}`)) :
    h('li', {class: `ev ev-${String(e.to).toLowerCase()}`},
      h('time', {datetime: e.time}, time(e.time)), ' ',
      e.from ? [stateBadge(e.from), ' → '] : 'submitted → ', stateBadge(e.to),
      num(e.epoch) ? h('span', {class: 'muted'}, ` epoch ${e.epoch}`) : null,
      (e.hosts || []).length ? h('span', {class: 'muted'}, ` on hosts ${e.hosts.join(', ')}${e.pod ? ` of pod ${e.pod}` : ''}` +
        (e.more_slices || []).map((s) => `, hosts ${(s.hosts || []).join(', ')} of pod ${s.pod}`).join('')) :
        null,
      e.reason ? h('div', {class: 'reason'}, e.reason) : null)))));
}

async function loadProgress() {
  const data = await optional(`/api/v1/jobs/${encodeURIComponent(id)}/progress`);
  progressApi = data !== null;
  points = data?.points || [];
  if (points.length) rememberProgress(id, points[points.length - 1]);
  if (!root) return;
  renderSummary();
  renderCharts();
  renderTimeline();
}

function chartBox(title) {
  return h('div', {class: 'chart'}, h('h3', {}, title));
}

function renderCharts() {
  const box = clear(root.querySelector('#charts'));
  for (const c of charts) c.destroy();
  charts = [];
  if (!progressApi) {
    return box.append(note('Progress curves need the worker bus: this podsched has no ' +
      'GET /api/v1/jobs/{id}/progress (answered 404).'));
  }
  if (!points.length) {
    return box.append(note(HOLDING.has(job.state) || job.state === 'QUEUED' ?
      'No progress reports yet: they appear once the job runs and reports steps.' :
      'This job sent no progress reports.'));
  }
  const steps = points.map((p) => num(p.step));
  const width = Math.max(260, Math.min(560, box.clientWidth - 8 || 560));
  const loss = chartBox('Loss and accuracy by step');
  const speed = chartBox('Examples per second by step');
  box.append(loss, speed);
  const opts = (series, axes) => ({width, height: 200, series: [{label: 'step'}, ...series],
    axes: [{label: 'step'}, ...axes], scales: {x: {time: false}}, legend: {live: true}});
  charts.push(new uPlot(opts([
    {label: 'loss', stroke: '#c0392b', width: 2, scale: 'loss'},
    {label: 'accuracy', stroke: '#2471a3', width: 2, scale: 'acc'},
  ], [{scale: 'loss', label: 'loss'}, {scale: 'acc', side: 1, label: 'accuracy', grid: {show: false}}]),
  [steps, points.map((p) => num(p.loss)), points.map((p) => num(p.accuracy))], loss));
  charts.push(new uPlot(opts([
    {label: 'examples/s', stroke: '#1e8449', width: 2},
  ], [{label: 'examples/s'}]), [steps, points.map((p) => num(p.examples_per_second))], speed));
}

async function pollLogs() {
  clearTimeout(logTimer);
  if (!root) return;
  try {
    const data = await api(`/api/v1/jobs/${encodeURIComponent(id)}/logs?since=${logOffset}`);
    if (!root) return;
    const pre = root.querySelector('#log');
    const lines = data.lines || [];
    const next = num(data.next_offset);
    const text = lines.map((l) => `${l.time ? time(l.time) + ' ' : ''}[${num(l.rank)}] ${l.text}`);
    if (next > 0) {
      if (lines.length) pre.textContent += text.join('\n') + '\n';
      logOffset = next;
    } else {
      pre.textContent = text.length ? text.join('\n') + '\n' : '';  // no offsets: whole tail
    }
    const stick = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 40;
    if (stick) pre.scrollTop = pre.scrollHeight;
    root.querySelector('#log-note').textContent = [data.truncated ? 'older output dropped;' : '',
      data.note || (pre.textContent ? '' : 'no output yet')].join(' ').trim();
  } catch (e) {
    if (root) root.querySelector('#log-note').textContent = `log unavailable: ${e.message}`;
  }
  if (root && !TERMINAL.has(job.state)) logTimer = setTimeout(pollLogs, 2000);
}

function exportTrace() {
  const trace = buildTrace(job, events, points);
  const blob = new Blob([JSON.stringify(trace)], {type: 'application/json'});
  const url = URL.createObjectURL(blob);
  const a = h('a', {href: url, download: `podsched-job-${job.id}-trace.json`});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
