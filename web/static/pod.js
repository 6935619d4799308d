// Pod view: the host grid (2x2 chips per host) colored by job, preemptible work hatched,
// unhealthy and draining hosts marked, a legend, free capacity and the largest placeable slice.
// On a fleet of several pods (#/pod/NAME picks one): a fleet overview above it, one row per pod
// with its zone, hosts free and held by class, unhealthy hosts and the jobs waiting for it, and
// a pod selector.
import {api} from './api.js';
import {classLabel, clear, h, jobColor, note, num, stateBadge} from './util.js';

let root = null;
let refreshTimer = null;
let selected = null;  // job id shown in the detail panel
let podName = null;   // the pod drawn (#/pod/NAME); null: the first
const kMaxListed = 12;  // jobs in the legend and waiting jobs listed; the queue has them all

export async function mount(el, ctx) {
  root = el;
  podName = ctx.args?.[0] ? decodeURIComponent(ctx.args[0]) : null;
  root.append(h('h1', {}, 'Pod'), h('div', {id: 'pod-body'}, 'Loading…'));
  ctx.subscribe((type) => {
    if (type === 'job' || type === 'open') schedule();
  });
  await load();
}

export function unmount() {
  clearTimeout(refreshTimer);
  refreshTimer = null;
  root = null;
}

function schedule() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; load().catch(() => {}); }, 300);
}

async function load() {
  const list = await api('/api/v1/pods');
  if (!root) return;
  const pods = list.pods || [];
  const body = clear(root.querySelector('#pod-body'));
  if (!pods.length) {
    body.append(note('podsched reports no pod.'));
    return;
  }
  const pod = pods.find((p) => p.name === podName) || pods[0];
  if (pods.length > 1) {
    root.querySelector('h1').textContent = 'Fleet';
    body.append(fleetTable(pods, pod), podSelector(pods, pod));
  }
  if (podName && pod.name !== podName) body.append(note(`No pod named ${podName}; showing ${pod.name}.`));
  render(body, pod);
}

// One row per pod: where it is, what it holds, what waits for it. A click draws that pod.
function fleetTable(pods, shown) {
  const row = (p) => {
    const hosts = p.hosts || [];
    const down = hosts.filter((x) => !x.healthy).length;
    const tr = h('tr', {dataset: {pod: p.name}, class: p.name === shown.name ? 'selected' : ''},
      h('td', {}, h('a', {href: `#/pod/${encodeURIComponent(p.name)}`}, p.name)),
      h('td', {}, p.zone || '—'),
      h('td', {}, `${p.generation} ${p.host_rows}x${p.host_cols}`),
      h('td', {class: 'num'}, `${num(p.available_hosts)} / ${hosts.length}`),
      h('td', {class: 'num'}, String(num(p.on_demand_hosts))),
      h('td', {class: 'num'}, String(num(p.preemptible_hosts))),
      h('td', {class: 'num'}, String(down)),
      h('td', {class: 'num'}, String(num(p.pending_total))),
      h('td', {}, p.largest_placeable_type || 'none'));
    return tr;
  };
  const total = (key) => pods.reduce((n, p) => n + num(p[key]), 0);
  const hosts = pods.reduce((n, p) => n + (p.hosts || []).length, 0);
  return h('div', {class: 'table-wrap'},
    h('h2', {}, `Fleet: ${pods.length} pods, ${hosts} hosts, ${total('available_hosts')} free, ` +
      `${total('on_demand_hosts')} held on-demand, ${total('preemptible_hosts')} preemptible`),
    h('table', {class: 'table', id: 'fleet'}, h('thead', {}, h('tr', {},
      ...['pod', 'zone', 'grid', 'free', 'on-demand', 'preemptible', 'unhealthy', 'waiting',
        'largest free'].map((t) => h('th', {}, t)))),
    h('tbody', {}, pods.map(row))));
}

function podSelector(pods, shown) {
  const select = h('select', {id: 'pod-select', 'aria-label': 'pod'},
    pods.map((p) => h('option', {value: p.name, selected: p.name === shown.name},
      `${p.name}${p.zone ? ` (${p.zone})` : ''}`)));
  select.addEventListener('change', () => {
    location.hash = `#/pod/${encodeURIComponent(select.value)}`;
  });
  return h('p', {}, h('label', {}, 'Pod: ', select));
}

function allocationGrid(pod) {
  const byCell = new Map();
  for (const a of pod.allocations || []) {
    const p = a.placement || {};
    for (let r = num(p.row); r < num(p.row) + num(p.rows); r++) {
      for (let c = num(p.col); c < num(p.col) + num(p.cols); c++) {
        byCell.set(`${r % pod.host_rows},${c % pod.host_cols}`, a);
      }
    }
  }
  return byCell;
}

function describe(host, a) {
  const lines = [`host ${host.id} (row ${host.row}, col ${host.col})`];
  if (a) {
    lines.push(num(a.job_id) ? `job ${a.job_id} · ${a.user} · ${a.accelerator}` :
      `another user's ${a.accelerator}`);
    lines.push(`${classLabel(a.preemptible)} · ${a.state}`);
  } else {
    lines.push(host.allocated ? 'held' : 'free');
  }
  if (!host.healthy) lines.push(`UNHEALTHY${host.health_reason ? ': ' + host.health_reason : ''}`);
  if (host.draining) lines.push('draining');
  if (host.agent_id) lines.push(`agent ${host.agent_id}`);
  return lines.join('\n');
}

function render(body, pod) {
  const total = num(pod.host_rows) * num(pod.host_cols);
  const byCell = allocationGrid(pod);
  const unhealthy = (pod.hosts || []).filter((x) => !x.healthy).length;
  const draining = (pod.hosts || []).filter((x) => x.draining).length;
  body.append(h('div', {class: 'cards'},
    card('Pod', `${pod.name} · TPU ${pod.generation}`,
      `${pod.host_rows}x${pod.host_cols} hosts${pod.zone ? ` · ${pod.zone}` : ''}`),
    card('Free hosts', `${num(pod.available_hosts)} / ${total}`,
      `${(100 * num(pod.utilization)).toFixed(0)}% utilized`),
    card('Largest slice placeable now', pod.largest_placeable_type || 'none',
      `fragmentation ${num(pod.fragmentation).toFixed(2)}`),
    card('Hosts out of service', `${unhealthy} unhealthy · ${draining} draining`,
      waiting(num(pod.pending_total) || (pod.pending || []).length))));

  const grid = h('div', {class: 'pod-grid', role: 'grid', 'aria-label': `pod ${pod.name}`});
  grid.style.setProperty('--cols', pod.host_cols);
  const hosts = [...(pod.hosts || [])].sort((x, y) => x.row - y.row || x.col - y.col);
  const jobs = new Map();
  for (const host of hosts) {
    const a = byCell.get(`${host.row},${host.col}`);
    const id = a ? num(a.job_id) : 0;
    const cls = ['host'];
    if (a) cls.push(id ? 'job' : 'other');
    if (a?.preemptible) cls.push('preemptible');
    if (a?.state === 'PREEMPTING') cls.push('leaving');
    if (!host.healthy) cls.push('unhealthy');
    if (host.draining) cls.push('draining');
    if (id && String(id) === selected) cls.push('selected');
    const cell = h('button', {type: 'button', class: cls.join(' '), title: describe(host, a),
      'aria-label': describe(host, a).replaceAll('\n', ', '),
      dataset: {host: host.id, job: id ? String(id) : ''},
      onclick: () => select(id ? String(id) : null, host, a, pod)},
    h('span', {class: 'chip'}), h('span', {class: 'chip'}),
    h('span', {class: 'chip'}), h('span', {class: 'chip'}));
    if (id) {
      cell.style.setProperty('--c', jobColor(id));
      jobs.set(String(id), a);
    }
    grid.append(cell);
  }
  const legend = h('div', {class: 'legend'},
    h('h2', {}, 'Legend'),
    h('ul', {class: 'keys'},
      key('host free', 'host'),
      key('on-demand job', 'host job sample'),
      key('preemptible job (hatched)', 'host job preemptible sample'),
      key("another user's job", 'host other'),
      key('being preempted (faded)', 'host job sample leaving'),
      key('unhealthy (no agent / heartbeat lost)', 'host unhealthy'),
      key('draining', 'host draining')),
    h('p', {class: 'muted'}, 'Each host is a board of 2x2 chips (8 TensorCores). ' +
      'Hover or click a host for its job.'),
    jobs.size ? h('h2', {}, 'Jobs on the pod') : null,
    jobs.size ? h('ul', {class: 'jobs'}, [...jobs].slice(0, kMaxListed).map(([id, a]) => {
      const sw = h('span', {class: `swatch host job${a.preemptible ? ' preemptible' : ''}`});
      sw.style.setProperty('--c', jobColor(id));
      return h('li', {}, sw, h('a', {href: `#/job/${id}`}, `#${id}`),
        ` ${a.user} · ${a.accelerator} · ${classLabel(a.preemptible)} · `, stateBadge(a.state));
    }), jobs.size > kMaxListed ? h('li', {class: 'muted'}, `… and ${jobs.size - kMaxListed} more `,
      h('a', {href: '#/queue'}, '(queue)')) : null) : null);
  body.append(h('div', {class: 'pod-layout'}, h('div', {class: 'grid-wrap'}, grid,
    h('div', {id: 'host-detail', class: 'detail', 'aria-live': 'polite'},
      'Click a host to see its job.')), legend));
  body.append(pendingTable(pod));
}

function waiting(n) {
  return n === 1 ? '1 job waiting' : `${n} jobs waiting`;
}

function card(title, value, sub) {
  return h('div', {class: 'card'}, h('div', {class: 'card-title'}, title),
    h('div', {class: 'card-value'}, value), h('div', {class: 'card-sub'}, sub));
}

function key(label, cls) {
  return h('li', {}, h('span', {class: `swatch ${cls}`}), label);
}

async function select(id, host, a, pod) {
  selected = id;
  for (const el of root.querySelectorAll('.host.selected')) el.classList.remove('selected');
  if (id) {
    for (const el of root.querySelectorAll(`.host[data-job="${CSS.escape(id)}"]`)) {
      el.classList.add('selected');
    }
  }
  const detail = clear(root.querySelector('#host-detail'));
  detail.append(h('div', {class: 'pre'}, describe(host, a)));
  if (!id) return;
  try {
    const job = await api(`/api/v1/jobs/${encodeURIComponent(id)}`);
    if (selected !== id || !root) return;
    detail.append(h('p', {}, h('a', {href: `#/job/${id}`}, `Job #${id}: ${job.name || '(unnamed)'}`),
      ' ', stateBadge(job.state)),
    h('p', {class: 'muted'}, `step ${num(job.step)} · ${job.reason || ''}`));
  } catch { /* not visible to this user */ }
}

function pendingTable(pod) {
  const pending = pod.pending || [];
  if (!pending.length) return h('p', {class: 'muted'}, 'No job is waiting for room.');
  return h('div', {class: 'table-wrap'}, h('h2', {}, `Waiting jobs (${pending.length})`),
    h('table', {class: 'table', id: 'pending'}, h('thead', {}, h('tr', {},
      h('th', {}, 'job'), h('th', {}, 'user'), h('th', {}, 'accelerator'), h('th', {}, 'why'))),
    h('tbody', {}, pending.slice(0, kMaxListed).map((p) => h('tr', {dataset: {job: p.job_id}},
      h('td', {}, num(p.job_id) ? h('a', {href: `#/job/${p.job_id}`}, `#${p.job_id}`) : '—'),
      h('td', {}, p.user), h('td', {}, p.accelerator), h('td', {}, p.reason))),
    pending.length > kMaxListed ? h('tr', {}, h('td', {colspan: 4, class: 'muted'},
      `… and ${pending.length - kMaxListed} more: `, h('a', {href: '#/queue'}, 'see the queue'))) :
      null)));
}
