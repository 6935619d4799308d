// Agents (admin): the podworkers registered on the worker bus, when this podsched has one.
import {optional} from './api.js';
import {clear, h, note, num} from './util.js';

let root = null;
let timer = null;

export async function mount(el, ctx) {
  root = el;
  root.append(h('h1', {}, 'Agents'), h('div', {id: 'agents'}, 'Loading…'));
  if (ctx.user.role !== 'admin') {
    clear(root.querySelector('#agents')).append(note('Only an admin sees the agents.'));
    return;
  }
  await load();
}

export function unmount() {
  clearTimeout(timer);
  root = null;
}

async function load() {
  const data = await optional('/api/v1/agents');
  if (!root) return;
  const box = clear(root.querySelector('#agents'));
  if (data === null) {
    box.append(note('This podsched has no worker bus yet (GET /api/v1/agents answered 404): ' +
      'jobs are placed but no podworker runs them.'));
    return;
  }
  const agents = data.agents || [];
  box.append(agents.length ? h('div', {class: 'table-wrap'}, h('table', {class: 'table'},
    h('thead', {}, h('tr', {}, ['agent', 'pod', 'hosts', 'address', 'connected',
      'last heartbeat', 'running jobs'].map((t) => h('th', {}, t)))),
    h('tbody', {}, agents.map((a) => h('tr', {},
      h('td', {}, a.agent_id), h('td', {}, a.pod), h('td', {}, (a.hosts || []).join(', ')),
      h('td', {}, a.address),
      h('td', {}, h('span', {class: a.connected ? 'ok' : 'error'}, a.connected ? 'yes' : 'no')),
      h('td', {class: 'num'}, `${(num(a.last_heartbeat_ms_ago) / 1000).toFixed(1)} s ago`),
      h('td', {}, (a.running_jobs || []).map((j) => h('a', {href: `#/job/${j}`}, `#${j} `)))))))) :
    note('No agent has registered.'));
  timer = setTimeout(() => load().catch(() => {}), 5000);
}
