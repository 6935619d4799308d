// The dashboard's API client: same-origin fetch with the session cookie, plus the CSRF header
// podsched requires for state-changing requests authenticated by the cookie.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onUnauthenticated = () => {};
export function setUnauthenticatedHandler(fn) {
  onUnauthenticated = fn;
}

export async function api(path, {method = 'GET', body, quiet401 = false} = {}) {
  const headers = {'X-Requested-With': 'podsched-dashboard', 'Accept': 'application/json'};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method, headers, credentials: 'same-origin', cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data?.code || '', data?.message || res.statusText);
    if (res.status === 401 && !quiet401) onUnauthenticated(err);
    throw err;
  }
  return data;
}

// Optional endpoints (added with the worker bus): resolves to null on 404 instead of failing.
export async function optional(path) {
  try {
    return await api(path);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405)) return null;
    throw e;
  }
}

// Every page of GET /api/v1/jobs (up to maxPages of 500), for aggregates.
export async function allJobs(query = '', maxPages = 20) {
  const jobs = [];
  let token = '';
  let total = 0;
  for (let i = 0; i < maxPages; i++) {
    const q = new URLSearchParams(query);
    q.set('page_size', '500');
    if (token) q.set('page_token', token);
    const page = await api('/api/v1/jobs?' + q);
    jobs.push(...(page.jobs || []));
    total = page.total || 0;
    token = page.next_page_token || '';
    if (!token) return {jobs, total, truncated: false};
  }
  return {jobs, total, truncated: true};
}
