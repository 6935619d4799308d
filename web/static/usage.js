// Quotas and usage per user with cost by class; cluster utilization over time and preemptions per
// hour from GET /api/v1/stats (podsched samples the pod every 10 s and keeps 24 h, in memory).
import uPlot from '/vendor/uPlot.esm.js';
import {allJobs, api} from './api.js';
import {clear, h, money, note, num} from './util.js';

let root = null;
let charts = [];
let statsTimer = null;

export async function mount(el, ctx) {
  root = el;
  root.append(h('h1', {}, 'Usage'),
    h('section', {class: 'panel'}, h('h2', {}, 'Quotas, usage and cost per user'),
      h('div', {id: 'quota-table'}, 'Loading…')),
    h('section', {class: 'panel'}, h('h2', {}, 'Cluster utilization'),
      h('div', {id: 'util-chart'})),
    h('section', {class: 'panel'}, h('h2', {}, 'Preemptions per hour'),
      h('div', {id: 'preempt-chart'})));
  ctx.subscribe((type) => {
    if (type === 'open') loadQuotas().catch(() => {});
    if (type === 'job' || type === 'open') scheduleStats(1000);
  });
  await Promise.all([loadQuotas(), loadStats()]);
}

export function unmount() {
  clearTimeout(statsTimer);
  for (const c of charts) c.destroy();
  charts = [];
  root = null;
}

function scheduleStats(ms) {
  clearTimeout(statsTimer);
  statsTimer = setTimeout(() => loadStats().catch(() => {}), ms);
}

function meter(used, limit) {
  const m = h('meter', {min: 0, max: Math.max(1, limit), value: used,
    title: `${used} of ${limit} cores`});
  return h('span', {class: 'meter'}, m, ` ${used} / ${limit}`);
}

async function loadQuotas() {
  const [quotas, jobs] = await Promise.all([api('/api/v1/quotas'), allJobs()]);
  if (!root) return;
  const cost = new Map();
  for (const j of jobs.jobs) {
    const c = cost.get(j.user) || {od: 0, pre: 0, n: 0};
    if (j.preemptible) c.pre += num(j.cost_usd); else c.od += num(j.cost_usd);
    c.n += 1;
    cost.set(j.user, c);
  }
  const box = clear(root.querySelector('#quota-table'));
  const rows = quotas.quotas || [];
  let sumOd = 0;
  let sumPre = 0;
  let sumEgress = 0;
  box.append(h('div', {class: 'table-wrap'}, h('table', {class: 'table', id: 'quotas'},
    h('thead', {}, h('tr', {}, h('th', {}, 'user'), h('th', {}, 'on-demand cores'),
      h('th', {}, 'preemptible cores'), h('th', {}, 'jobs'), h('th', {}, 'cost on-demand'),
      h('th', {}, 'cost preemptible'), h('th', {}, 'egress, all time'), h('th', {}, 'total'))),
    h('tbody', {}, rows.map((q) => {
      const c = cost.get(q.user) || {od: 0, pre: 0, n: 0};
      sumOd += c.od;
      sumPre += c.pre;
      sumEgress += num(q.egress_usd);  // the user's whole history, kept by podsched
      return h('tr', {}, h('td', {}, q.user),
        h('td', {}, meter(num(q.on_demand_cores_used), num(q.on_demand_cores))),
        h('td', {}, meter(num(q.preemptible_cores_used), num(q.preemptible_cores))),
        h('td', {class: 'num'}, c.n), h('td', {class: 'num'}, money(c.od)),
        h('td', {class: 'num'}, money(c.pre)), h('td', {class: 'num egress'}, money(num(q.egress_usd))),
        h('td', {class: 'num'}, money(c.od + c.pre)));
    })),
    h('tfoot', {}, h('tr', {}, h('th', {colspan: 4}, 'all users'),
      h('th', {class: 'num'}, money(sumOd)), h('th', {class: 'num'}, money(sumPre)),
      h('th', {class: 'num'}, money(sumEgress)), h('th', {class: 'num'}, money(sumOd + sumPre)))))),
  jobs.truncated ? note(`Costs cover the first ${jobs.jobs.length} of ${jobs.total} jobs.`) : '',
  h('p', {class: 'muted'}, 'Cost: the slice price of its class (v2-8: $4.50/h on-demand, ' +
    '$1.35/h preemptible) times the time it held hosts, plus egress: checkpoints moved ' +
    'between a job\'s store and another zone it ran in. The egress column is each user\'s ' +
    'whole history, including jobs podsched has forgotten; the costs are the listed jobs\'.'));
}

async function loadStats() {
  const stats = await api('/api/v1/stats');
  if (!root) return;
  for (const c of charts) c.destroy();
  charts = [];
  const width = Math.max(260, Math.min(900, root.clientWidth - 24 || 900));
  const s = (stats.utilization || []).map((x) => ({...x, t: Date.parse(x.time) / 1000}));
  const util = clear(root.querySelector('#util-chart'));
  const span = s.length ? s[s.length - 1].t - s[0].t : 0;
  if (s.length < 2 || span < 1) {
    util.append(note('Collecting samples (podsched takes one every 10 s)…'));
  } else {
    charts.push(new uPlot({width, height: 220,
      scales: {x: {time: true, range: [s[0].t, s[0].t + Math.max(span, 60)]}, y: {range: [0, 100]}},
      series: [{}, {label: 'held %', stroke: '#2471a3', width: 2},
        {label: 'on-demand %', stroke: '#1e8449'},
        {label: 'preemptible %', stroke: '#b9770e', dash: [6, 4]}],
      axes: [{}, {label: '% of hosts'}]},
    [s.map((x) => x.t), s.map((x) => 100 * num(x.utilization)),
      s.map((x) => (100 * num(x.on_demand_hosts)) / Math.max(1, num(x.hosts))),
      s.map((x) => (100 * num(x.preemptible_hosts)) / Math.max(1, num(x.hosts)))], util));
  }
  util.append(h('p', {class: 'muted'},
    `Share of the pod's hosts held by jobs, since podsched started (${new Date(stats.since)
      .toLocaleString()}).`));
  const pre = clear(root.querySelector('#preempt-chart'));
  const counts = new Map((stats.preemptions_per_hour || []).map((x) =>
    [Math.floor(Date.parse(x.hour) / 3600000), num(x.count)]));
  if (!counts.size) {
    pre.append(note('No preemption since podsched started.'));
  } else {
    const hours = [...counts.keys()].sort((a, b) => a - b);
    const xs = [];
    for (let hr = hours[0]; hr <= hours[hours.length - 1]; hr++) xs.push(hr);
    charts.push(new uPlot({width, height: 180,
      scales: {x: {range: [xs[0] * 3600 - 1800, xs[xs.length - 1] * 3600 + 5400]}},
      series: [{}, {label: 'preemptions', stroke: '#c0392b', fill: 'rgba(192,57,43,0.25)',
        paths: uPlot.paths.bars({size: [0.6, 60]}), points: {show: false}}],
      axes: [{}, {label: 'per hour'}]},
    [xs.map((x) => x * 3600 + 1800), xs.map((x) => counts.get(x) || 0)], pre));  // mid-hour
  }
  scheduleStats(10000);
}
