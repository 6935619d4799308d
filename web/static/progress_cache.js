// The newest progress report per job seen on the live stream (for the queue's "step of total").
const latest = new Map();

export function rememberProgress(jobId, point) {
  if (point) latest.set(String(jobId), point);
}

export function latestProgress(jobId) {
  return latest.get(String(jobId));
}
