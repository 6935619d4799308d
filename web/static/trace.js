// A job's timeline as Chrome trace-event JSON (the format chrome://tracing and ui.perfetto.dev
// open): one process per job with tracks for its state, its placements (epoch, hosts) and its
// checkpoints; preemptions as instant events; step, loss, accuracy and examples/s as counters.
import {HOLDING, num} from './util.js';

const us = (iso) => Date.parse(iso) * 1000;

export function buildTrace(job, events, points) {
  const pid = num(job.id);
  const te = [
    {ph: 'M', name: 'process_name', pid, args: {name: `job ${job.id} ${job.name || ''} (${job.user})`}},
    {ph: 'M', name: 'thread_name', pid, tid: 1, args: {name: 'state'}},
    {ph: 'M', name: 'thread_name', pid, tid: 2, args: {name: 'placement'}},
    {ph: 'M', name: 'thread_name', pid, tid: 3, args: {name: 'checkpoints'}},
  ];
  const sorted = [...events].sort((a, b) => num(a.seq) - num(b.seq));
  const end = job.end_time ? us(job.end_time) : Date.now() * 1000;
  let placement = null;
  sorted.forEach((e, i) => {
    const ts = us(e.time);
    const until = i + 1 < sorted.length ? us(sorted[i + 1].time) : end;
    te.push({ph: 'X', name: e.to, cat: 'state', pid, tid: 1, ts, dur: Math.max(0, until - ts),
      args: {from: e.from || '', reason: e.reason || '', epoch: num(e.epoch)}});
    if (e.to === 'PREEMPTING') {
      te.push({ph: 'i', s: 'p', name: `preempted: ${e.reason || ''}`, cat: 'preemption', pid,
        tid: 1, ts});
    }
    if (e.to === 'PLACED') placement = {ts, epoch: num(e.epoch), hosts: e.hosts || []};
    if (placement && !HOLDING.has(e.to)) {
      te.push({ph: 'X', name: `epoch ${placement.epoch} on hosts ${placement.hosts.join(',')}`,
        cat: 'placement', pid, tid: 2, ts: placement.ts, dur: Math.max(0, ts - placement.ts),
        args: {hosts: placement.hosts, epoch: placement.epoch}});
      placement = null;
    }
  });
  if (placement) {
    te.push({ph: 'X', name: `epoch ${placement.epoch} on hosts ${placement.hosts.join(',')}`,
      cat: 'placement', pid, tid: 2, ts: placement.ts, dur: Math.max(0, end - placement.ts),
      args: {hosts: placement.hosts, epoch: placement.epoch}});
  }
  let lastCkpt = 0;
  for (const p of points) {
    const ts = us(p.time);
    te.push({ph: 'C', name: 'step', pid, ts, args: {step: num(p.step)}});
    te.push({ph: 'C', name: 'loss', pid, ts, args: {loss: num(p.loss)}});
    te.push({ph: 'C', name: 'accuracy', pid, ts, args: {accuracy: num(p.accuracy)}});
    te.push({ph: 'C', name: 'examples/s', pid, ts, args: {'examples/s': num(p.examples_per_second)}});
    if (num(p.last_checkpoint_step) > lastCkpt) {
      lastCkpt = num(p.last_checkpoint_step);
      te.push({ph: 'i', s: 't', name: `checkpoint at step ${lastCkpt}`, cat: 'checkpoint', pid,
        tid: 3, ts, args: {epoch: num(p.epoch)}});
    }
  }
  return {traceEvents: te, displayTimeUnit: 'ms',
    otherData: {source: 'podsched', job: String(job.id), accelerator: job.accelerator}};
}
