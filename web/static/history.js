// Cluster history for the usage page, computed in the browser: the pod's utilization sampled
// every 15 s (and after job transitions), and preemptions counted per hour from the live stream.
// podsched keeps no history of its own, so the series start when this tab logged in; they are
// kept in sessionStorage so that a reload does not lose them.
import {api} from './api.js';
import {num} from './util.js';

const KEY = 'podsched.history.v1';
const MAX_SAMPLES = 5760;  // 24 h at 15 s
let timer = null;
let pending = null;
let data = load();
const watchers = new Set();

function load() {
  try {
    const d = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    if (d && Array.isArray(d.samples) && d.preemptions) return d;
  } catch { /* fresh start */ }
  return {samples: [], preemptions: {}};
}

function save() {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(data));
  } catch { /* storage full: keep in memory */ }
}

// {t (s), utilization (0..1), on_demand_hosts, preemptible_hosts, hosts}
export function samplePod(pod) {
  let od = 0;
  let pre = 0;
  for (const a of pod.allocations || []) {
    const n = num(a.placement?.rows) * num(a.placement?.cols);
    if (a.preemptible) pre += n; else od += n;
  }
  data.samples.push({t: Date.now() / 1000, utilization: num(pod.utilization),
    on_demand_hosts: od, preemptible_hosts: pre, hosts: num(pod.host_rows) * num(pod.host_cols)});
  if (data.samples.length > MAX_SAMPLES) data.samples.splice(0, data.samples.length - MAX_SAMPLES);
  save();
  for (const fn of watchers) fn();
}

async function sample() {
  try {
    const list = await api('/api/v1/pods');
    if (list?.pods?.length) samplePod(list.pods[0]);
  } catch { /* the banner reports a lost connection */ }
}

export function start() {
  if (timer) return;
  sample();
  timer = setInterval(sample, 15000);
}

export function stop() {
  clearInterval(timer);
  timer = null;
}

export function onEvent(type, ev) {
  if (type !== 'job') return;
  if (ev?.event?.to === 'PREEMPTING') {
    const hour = Math.floor(Date.parse(ev.event.time || new Date().toISOString()) / 3600000);
    data.preemptions[hour] = (data.preemptions[hour] || 0) + 1;
    save();
  }
  if (!pending) pending = setTimeout(() => { pending = null; sample(); }, 1000);
}

export function get() {
  return data;
}

export function watch(fn) {
  watchers.add(fn);
  return () => watchers.delete(fn);
}
