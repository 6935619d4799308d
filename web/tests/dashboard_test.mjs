// Browser test of the dashboard (ctest label `browser`, tests/integration/web.cmake): starts the
// real podsched on an ephemeral port with a temp data dir, drives Debian's Chromium through
// playwright-core, and saves a screenshot of every page (1280x800 and 390x844) in --out.
//
//   node web/tests/dashboard_test.mjs --podsched build/scheduler/daemon/podsched --out DIR
//        [--podworker PATH --podtrain PATH]
//
// With --podworker and --podtrain (once the worker bus is built) a second phase runs a real
// training job: its own podsched (2x2 hosts), one podworker serving all of them, and podtrain
// under mpirun reporting progress; the dashboard must show its curves, log, checkpoints and agent.
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const PODSCHED = path.resolve(args.podsched || 'build/scheduler/daemon/podsched');
const OUT = path.resolve(args.out || 'web-screenshots');
const CHROMIUM = args.chromium || process.env.CHROMIUM || '/usr/bin/chromium';
fs.mkdirSync(OUT, {recursive: true});
let chromium;
try {
  ({chromium} = await import('playwright-core'));
} catch (e) {
  console.error(`FAIL - playwright-core is not installed: run \`npm ci\` in web/ (deploy/deps.sh ` +
    `does): ${e.message}`);
  process.exit(1);
}
if (!fs.existsSync(CHROMIUM)) {
  console.error(`FAIL - no browser at ${CHROMIUM}: install Debian's chromium (deploy/deps.sh does)`);
  process.exit(1);
}

let failures = 0;
function check(what, cond, detail = '') {
  console.log(`${cond ? 'ok  ' : 'FAIL'} - ${what}${!cond && detail ? ': ' + detail : ''}`);
  if (!cond) failures++;
  return cond;
}

// Polls fn until it returns truthy (deadline in ms); returns the last value.
async function until(fn, ms = 10000, step = 50) {
  const end = Date.now() + ms;
  let v;
  for (;;) {
    try {
      v = await fn();
    } catch {
      v = undefined;
    }
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, step));
  }
}

// --- podsched -----------------------------------------------------------------------------------
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'podsched-web-'));
const ALICE = 'alice-token-for-the-browser-test';
const sha = (s) => execFileSync('sha256sum', {input: s}).toString().split(' ')[0];
let config = `users:
  - {name: alice, token_sha256: ${sha(ALICE)}, role: user}
quotas:
  admin: {on_demand_cores: 512, preemptible_cores: 512}
limits: {requests_per_second: 10000, burst: 10000}
`;
// With the worker bus, jobs wait for agents unless told otherwise (this phase runs none), and the
// bus gets an ephemeral port so that parallel tests do not collide on 8471.
const starter = execFileSync(PODSCHED, ['--init', '--init-file', path.join(work, 'starter.yaml')])
  && fs.readFileSync(path.join(work, 'starter.yaml'), 'utf8');
if (/require_agents/.test(starter)) {
  config += 'bus:\n  require_agents: false\n  address: "tcp://127.0.0.1:*"\n';
}
fs.writeFileSync(path.join(work, 'podsched.yaml'), config);

let proc = null;
let url = '';
const live = [];  // processes of the live phase
async function startPodsched(port = 0) {
  proc = spawn(PODSCHED, ['--config', path.join(work, 'podsched.yaml'), '--data-dir',
    path.join(work, 'var'), '--port', String(port)], {stdio: ['ignore', 'pipe', 'pipe']});
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => fs.appendFileSync(path.join(work, 'podsched.err'), d));
  const m = await until(() => out.match(/^podsched listening on (http\S+)$/m), 15000);
  if (!m) throw new Error('podsched did not start: ' + fs.readFileSync(path.join(work, 'podsched.err')));
  url = m[1];
}
async function stopPodsched() {
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

function raw(method, target, {headers = {}, body} = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({host: u.hostname, port: u.port, method, path: target, headers},
      (res) => {
        let data = '';
        res.on('data', (d) => { data += d; });
        res.on('end', () => resolve({status: res.statusCode, headers: res.headers, body: data}));
      });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}
const TOKEN = () => fs.readFileSync(path.join(work, 'var', 'admin.token'), 'utf8').trim();
async function apiAs(token, method, target, body) {
  const r = await raw(method, target, {headers: {'Authorization': `Bearer ${token}`,
    'Content-Type': 'application/json'}, body: body && JSON.stringify(body)});
  return {status: r.status, json: r.body ? JSON.parse(r.body) : null};
}
async function submit(spec) {
  const r = await apiAs(TOKEN(), 'POST', '/api/v1/jobs', {command: 'podtrain', ...spec});
  if (r.status !== 201) throw new Error(`submit failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.job.id;
}
async function jobState(id) {
  return (await apiAs(TOKEN(), 'GET', `/api/v1/jobs/${id}`)).json.state;
}

const shot = async (p, name) => {
  // Two animation frames: the last DOM change has been laid out and painted.
  await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await p.screenshot({path: path.join(OUT, `${name}.png`), fullPage: true});
};

const XSS = '<img src=x onerror=alert(1)>';
let browser = null;
try {
  await startPodsched();
  const admin = TOKEN();

  // --- static files: types, headers, no traversal (raw requests: no client normalization) -----
  for (const [p, type] of [['/', 'text/html'], ['/app.js', 'text/javascript'],
    ['/style.css', 'text/css'], ['/vendor/uPlot.esm.js', 'text/javascript'],
    ['/vendor/uPlot.min.css', 'text/css']]) {
    const r = await raw('GET', p);
    check(`GET ${p} is ${type}`, r.status === 200 && r.headers['content-type'].startsWith(type),
      `${r.status} ${r.headers['content-type']}`);
    check(`GET ${p} has CSP and nosniff`,
      /default-src 'self'/.test(r.headers['content-security-policy'] || '') &&
      !/unsafe-inline/.test(r.headers['content-security-policy']) &&
      r.headers['x-content-type-options'] === 'nosniff');
  }
  for (const p of ['/../CMakeLists.txt', '/%2e%2e/%2e%2e/CMakeLists.txt', '/..%2f..%2fCMakeLists.txt',
    '/%2E%2E%2F%2E%2E%2FCMakeLists.txt', '//etc/passwd', '/vendor/..%2f..%2fpackage.json',
    '/vendor/../../package.json', '/%252e%252e/package.json', '/..\\..\\CMakeLists.txt',
    '/package.json', '/package-lock.json', '/tests/dashboard_test.mjs',
    '/node_modules/uplot/package.json', '/vendor/package.json', '/etc/passwd', '/.git/config']) {
    const r = await raw('GET', p);
    check(`GET ${p} refused`, (r.status === 400 || r.status === 404) &&
      !/"dependencies"|root:|add_subdirectory|playwright/.test(r.body), `${r.status} ${r.body.slice(0, 80)}`);
  }

  // --- browser --------------------------------------------------------------------------------
  browser = await chromium.launch({executablePath: CHROMIUM, args: ['--headless', '--no-sandbox',
    '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync']});
  const context = await browser.newContext({viewport: {width: 1280, height: 800},
    acceptDownloads: true});
  const page = await context.newPage();
  const consoleErrors = [];
  const dialogs = [];
  // Expected failed loads (Chromium logs every non-2xx fetch as a console error): the session
  // probe before login and the wrong-token login (401), the worker-bus endpoints (404) a podsched
  // without the bus does not have.
  const expected = (u, text) => /Failed to load resource/.test(text) && (
    /\/api\/v1\/(whoami|login)$/.test(u) || /\/api\/v1\/(agents|jobs\/\d+\/progress)$/.test(u));
  const watchConsole = (p) => {
    p.on('console', (m) => {
      if (m.type() !== 'error' || expected(m.location()?.url || '', m.text())) return;
      consoleErrors.push(`${p.url()}: ${m.text()} (${m.location()?.url || ''})`);
    });
    p.on('pageerror', (e) => consoleErrors.push(`${p.url()}: uncaught ${e.message}`));
    p.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  };
  watchConsole(page);

  await page.goto(url + '/');
  await page.waitForSelector('#login:not([hidden])');
  check('the login page shows no navigation', !(await page.isVisible('#nav')) &&
    !(await page.isVisible('#logout')));
  await shot(page, 'login-1280');
  await page.fill('#token', 'definitely-not-the-token');
  await page.click('#login-form button[type=submit]');
  const wrong = await until(async () => (await page.textContent('#login-error')) || '');
  check('a wrong token shows an error', /wrong token/i.test(wrong), wrong);
  check('no session cookie after a wrong token', (await context.cookies()).length === 0);
  await shot(page, 'login-wrong-token-1280');

  await page.fill('#token', admin);
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#nav:not([hidden])');
  check('login shows the user', /admin/.test(await page.textContent('#who')));
  const cookie = (await context.cookies()).find((c) => c.name === 'podsched_session');
  check('session cookie is HttpOnly, SameSite=Strict, Path=/, not Secure on http',
    cookie && cookie.httpOnly && cookie.sameSite === 'Strict' && cookie.path === '/' &&
    !cookie.secure, JSON.stringify(cookie));
  check('the cookie does not hold the token', cookie && !cookie.value.includes(admin));

  // Jobs submitted through the API appear live on the pod map and in the queue.
  await page.waitForSelector('.pod-grid .host');
  const big = await submit({name: 'resnet50-big', accelerator: 'v2-32'});
  const pre = await submit({name: 'gan-sweep', accelerator: 'v2-8', preemptible: true});
  const xss = await submit({name: XSS, accelerator: 'v2-8', preemptible: true});
  const bert = await submit({name: 'bert-large', accelerator: 'v2-128', priority: 10});
  const whole = await submit({name: 'whole-pod', accelerator: 'v2-512'});  // waits: quota
  check('jobs are placed', await until(async () =>
    (await jobState(big)) !== 'QUEUED' && (await jobState(bert)) !== 'QUEUED', 10000));
  const hostsOfBig = await until(async () =>
    (await page.locator(`.pod-grid .host[data-job="${big}"]`).count()) === 4, 10000);
  check('the v2-32 job covers 4 hosts on the pod map without reload', hostsOfBig);
  check('the preemptible job is drawn hatched',
    await page.locator(`.pod-grid .host.preemptible[data-job="${pre}"]`).count() === 1);
  await page.hover(`.pod-grid .host[data-job="${big}"] >> nth=0`);
  const title = await page.getAttribute(`.pod-grid .host[data-job="${big}"] >> nth=0`, 'title');
  check('hovering a host names its job', title && title.includes(`job ${big}`), title);
  await page.click(`.pod-grid .host[data-job="${big}"] >> nth=0`);
  await until(async () => /resnet50-big/.test(await page.textContent('#host-detail')));
  check('clicking a host shows its job', /resnet50-big/.test(await page.textContent('#host-detail')));
  check('a waiting job is listed with its reason', await until(async () =>
    (await page.locator(`#pending tr[data-job="${whole}"]`).count()) === 1 &&
    /quota/i.test(await page.textContent(`#pending tr[data-job="${whole}"]`))));
  check('free capacity and largest slice are shown',
    /Largest slice placeable now/.test(await page.textContent('.cards')));
  await shot(page, 'pod-1280');

  await page.click('#nav a[data-view="queue"]');
  await page.waitForSelector(`#queue tr[data-job="${xss}"]`);
  const xssText = await page.textContent(`#queue tr[data-job="${xss}"] td.name`);
  check('the XSS-named job renders as text', xssText === XSS, xssText);
  check('no <img src=x> element exists', (await page.locator('img[src="x"]').count()) === 0);
  check('every job is listed', (await page.locator('#queue tbody tr').count()) === 5);
  // Live: preempting through the API changes the row without a reload.
  await page.evaluate(() => { window.__noReload = 1; });
  await apiAs(admin, 'POST', `/api/v1/jobs/${pre}/preempt`);
  const livePre = await until(async () => /PREEMPTING|QUEUED|PLACED/.test(
    await page.textContent(`#queue tr[data-job="${pre}"] .state-cell`)) &&
    (await jobState(pre)) !== 'PLACED' &&
    (await page.textContent(`#queue tr[data-job="${pre}"] .state-cell`)).includes(await jobState(pre)));
  check('a preemption through the API shows in the queue live', livePre);
  // Sorting by cost, then filtering by state through the API.
  await page.click('#queue th button:has-text("prio")');
  await page.click('#queue th button:has-text("prio")');
  const firstRow = await page.getAttribute('#queue tbody tr >> nth=0', 'data-job');
  check('sorting by priority (descending) puts bert first', firstRow === String(bert), firstRow);
  await shot(page, 'queue-1280');
  await page.selectOption('#f-class', 'preemptible');
  await until(async () => (await page.locator('#queue tbody tr').count()) === 2);
  check('paging info names the total', /of 2/.test(await page.textContent('#page-info')));
  check('the class filter asks the API', (await page.locator('#queue tbody tr').count()) === 2);
  await page.selectOption('#f-class', '');

  // Job page: preempt with the button, the state changes without reload.
  await page.click(`#queue tr[data-job="${big}"] td.name a`);
  await page.waitForSelector('#btn-preempt');
  check('the job page shows the name', (await page.textContent('#job-name')) === 'resnet50-big');
  await page.click('#btn-preempt');
  await page.click('#btn-preempt');  // confirm
  const preempted = await until(async () =>
    /PREEMPTING|QUEUED/.test(await page.textContent('#job-state')), 10000);
  check('preempt button changes the state without reload', preempted &&
    await page.evaluate(() => window.__noReload === 1));
  check('the timeline shows the preemption', await until(async () =>
    /preempted by admin/.test(await page.textContent('#timeline'))));
  check('progress curves or a clear note', await until(async () =>
    (await page.locator('#charts .uplot').count()) > 0 ||
    /progress/i.test(await page.textContent('#charts'))));
  await shot(page, 'job-1280');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-trace')]);
  const trace = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  check('trace export is Chrome trace-event JSON with states, placement and the preemption',
    Array.isArray(trace.traceEvents) &&
    trace.traceEvents.some((e) => e.ph === 'X' && e.name === 'PLACED') &&
    trace.traceEvents.some((e) => e.ph === 'X' && e.cat === 'placement') &&
    trace.traceEvents.some((e) => e.ph === 'i' && /preempted/.test(e.name)));

  // The worker-bus contract (progress points, log offsets) as docs/bus.md specifies it. Until
  // podworker runs jobs in this test, the browser is answered these two GETs by playwright
  // (everything else is the real podsched): the charts (uPlot under our CSP) and the log
  // follower (since=next_offset) are exercised.
  const t0 = Date.parse((await apiAs(admin, 'GET', `/api/v1/jobs/${big}`)).json.start_time);
  const points = Array.from({length: 40}, (_, i) => ({time: new Date(t0 + i * 25).toISOString(),
    epoch: '1', step: String((i + 1) * 10), total_steps: '400', loss: 2.3 * Math.exp(-i / 12) + 0.1,
    accuracy: 0.1 + 0.85 * (1 - Math.exp(-i / 10)), examples_per_second: 900 + 40 * Math.sin(i),
    last_checkpoint_step: String(Math.floor(i / 10) * 100)}));
  const sinces = [];
  await page.route(`**/api/v1/jobs/${big}/progress`, (route) => route.fulfill({
    contentType: 'application/json', body: JSON.stringify({points})}));
  await page.route(`**/api/v1/jobs/${big}/logs?*`, (route) => {
    const since = new URL(route.request().url()).searchParams.get('since');
    sinces.push(since);
    const lines = since === '0' ?
      [{time: points[0].time, rank: 0, text: 'step 10 loss 2.300 <b>not bold</b>'},
        {time: points[1].time, rank: 1, text: 'step 20 loss 2.120'}] :
      [{time: points[2].time, rank: 0, text: `step 30 after offset ${since}`}];
    return route.fulfill({contentType: 'application/json', body: JSON.stringify({lines,
      note: '', next_offset: String(Number(since) + 64), truncated: false})});
  });
  await page.goto(`${url}/#/pod`);  // leave the job page, so that it mounts again
  await page.waitForSelector('.pod-grid');
  await page.goto(`${url}/#/job/${big}`);
  check('progress points draw two uPlot charts', await until(async () =>
    (await page.locator('#charts .uplot').count()) === 2), await page.textContent('#charts'));
  check('the summary shows step of total from the progress', /400 of 400 \(100%\)/.test(
    await page.textContent('#job-summary')));
  check('the timeline lists the checkpoints from the progress reports',
    /checkpoint committed at step 300/.test(await page.textContent('#timeline')));
  check('the log tail follows next_offset', await until(async () =>
    /after offset 64/.test(await page.textContent('#log')) && sinces.includes('64'), 8000),
  sinces.join(','));
  check('log text is escaped', /<b>not bold<\/b>/.test(await page.textContent('#log')) &&
    (await page.locator('#log b').count()) === 0);
  await shot(page, 'job-progress-1280');
  const [dl2] = await Promise.all([page.waitForEvent('download'), page.click('#export-trace')]);
  const trace2 = JSON.parse(fs.readFileSync(await dl2.path(), 'utf8'));
  check('the trace has loss counters and checkpoint instants',
    trace2.traceEvents.some((e) => e.ph === 'C' && e.name === 'loss') &&
    trace2.traceEvents.some((e) => e.ph === 'i' && /checkpoint at step 300/.test(e.name)));
  await page.unrouteAll();

  // The XSS job's own page.
  await page.goto(`${url}/#/job/${xss}`);
  await page.waitForSelector('#job-name');
  check('the XSS name renders as text on the job page', (await page.textContent('#job-name')) === XSS);
  check('a job of no sweep shows no array or dependency panel',
    await page.locator('#job-sweep').isHidden());

  // A job array (one task at a time) and a job that waits for all of it.
  const sweep = await apiAs(admin, 'POST', '/api/v1/jobs', {name: 'sweep', accelerator: 'v2-8',
    command: 'podtrain', array: '0-2%1'});
  check('an array submits in one call', sweep.status === 201 && sweep.json.array_tasks === 3,
    JSON.stringify(sweep.json));
  const sweepId = sweep.json.job.id;
  const afterSweep = await submit({name: 'after-sweep', accelerator: 'v2-8',
    dependency: `afterok:${sweepId}`});
  await page.goto(`${url}/#/queue`);
  check('the queue names array tasks ARRAYID_INDEX', await until(async () =>
    new RegExp(`#${sweepId}_2`).test(await page.textContent('#queue'))));
  await page.goto(`${url}/#/job/${sweepId}_2`);
  await page.waitForSelector('#array-progress');
  check('a task page names the task and its array', await until(async () =>
    new RegExp(`${sweepId}_2`).test(await page.textContent('#job-array')) &&
    /at most 1 at once/.test(await page.textContent('#job-array'))));
  check("the array's progress counts its tasks by state", await until(async () =>
    /0 of 3 ended/.test(await page.textContent('#array-progress')) &&
    /QUEUED/.test(await page.textContent('#array-progress'))));
  await shot(page, 'job-array-1280');
  await page.goto(`${url}/#/job/${afterSweep}`);
  await page.waitForSelector('#job-deps li');
  const depText = await page.textContent('#job-deps');
  check('the dependency is shown with its state', new RegExp(`afterok:${sweepId}`).test(depText) &&
    /0\/3 ended/.test(depText) && /waiting/.test(depText), depText);
  await apiAs(admin, 'POST', `/api/v1/jobs/${sweepId}/cancel`);
  check('a dependency that can never be met shows so, live', await until(async () =>
    /can never be met/.test(await page.textContent('#job-deps')) &&
    /CANCELLED/.test(await page.textContent('#job-state')), 10000));
  check('the reason names the task that ended', /dependency never satisfied/.test(
    await page.textContent('#job-summary')));

  await page.click('#nav a[data-view="usage"]');
  await page.waitForSelector('#quotas tbody tr');
  check('usage lists quota and cost per user', /admin/.test(await page.textContent('#quotas')) &&
    /\$/.test(await page.textContent('#quotas')));
  check('utilization over time and preemptions per hour are charted', await until(async () =>
    (await page.locator('#util-chart .uplot').count()) === 1 &&
    (await page.locator('#preempt-chart .uplot').count()) === 1, 15000));
  await shot(page, 'usage-1280');
  await page.click('#nav a[data-view="agents"]');
  await page.waitForSelector('#agents .note, #agents table');
  await shot(page, 'agents-1280');

  // Narrow (phone) width: every page, no horizontal scrolling of the page.
  const phone = await browser.newContext({viewport: {width: 390, height: 844},
    storageState: await context.storageState()});
  const narrow = await phone.newPage();
  watchConsole(narrow);
  for (const [view, sel] of [['pod', '.pod-grid .host'], ['queue', '#queue tbody tr'],
    [`job/${big}`, '#job-name'], ['usage', '#quotas'], ['agents', '#agents']]) {
    await narrow.goto(`${url}/#/${view}`);
    await narrow.waitForSelector(sel);
    const name = view.split('/')[0];
    await shot(narrow, `${name}-390`);
    const overflow = await narrow.evaluate(() =>
      document.documentElement.scrollWidth - document.documentElement.clientWidth);
    check(`${name} fits 390 px wide`, overflow <= 1, `${overflow}px too wide`);
  }
  await phone.close();

  // A plain user sees the pod (others' hosts as held, not by whom) and only their own jobs.
  const other = await browser.newContext({viewport: {width: 1280, height: 800}});
  const alice = await other.newPage();
  watchConsole(alice);
  await alice.goto(url + '/');
  await alice.fill('#token', ALICE);
  await alice.click('#login-form button[type=submit]');
  await alice.waitForSelector('.pod-grid .host');
  check("a user sees others' jobs as anonymous held hosts", await until(async () =>
    (await alice.locator('.pod-grid .host.other').count()) >= 4 &&
    (await alice.locator('.pod-grid .host.job').count()) === 0));
  check('a user has no agents link', !(await alice.isVisible('#nav a[data-view="agents"]')));
  await shot(alice, 'pod-as-user-1280');
  await alice.click('#nav a[data-view="queue"]');
  await alice.waitForSelector('#queue tbody tr');
  check("a user's queue holds only their jobs", /No jobs match/.test(
    await alice.textContent('#queue tbody')));
  await other.close();

  check('no dialog fired (XSS)', dialogs.length === 0, dialogs.join('; '));
  check('no console errors on any page', consoleErrors.length === 0, consoleErrors.join('\n'));

  // CSRF (after the console check: the refusal is logged): a cookie request without the custom header is refused.
  const csrf = await page.evaluate(async (id) =>
    (await fetch(`/api/v1/jobs/${id}/cancel`, {method: 'POST'})).status, bert);
  check('cookie POST without X-Requested-With is refused (403)', csrf === 403, String(csrf));
  check('the job was not cancelled by it', (await jobState(bert)) !== 'CANCELLED');

  // Paging through the API: 60 more jobs (69 with the sweep's four), 25 per page.
  await Promise.all(Array.from({length: 60}, (_, i) =>
    submit({name: `sweep-${i}`, accelerator: 'v2-8', preemptible: true})));
  await page.click('#nav a[data-view="queue"]');
  await page.waitForSelector('#queue tbody tr');
  await page.selectOption('#f-size', '25');
  await until(async () => /jobs 1–25 of 69/.test(await page.textContent('#page-info')));
  check('the first page of 25 names the total', /jobs 1–25 of 69/.test(
    await page.textContent('#page-info')), await page.textContent('#page-info'));
  await page.click('#next');
  await until(async () => /jobs 26–50 of 69/.test(await page.textContent('#page-info')));
  await page.click('#next');
  await until(async () => /jobs 51–69 of 69/.test(await page.textContent('#page-info')));
  check('Next pages through the API to the last page',
    /jobs 51–69 of 69/.test(await page.textContent('#page-info')) &&
    (await page.locator('#queue tbody tr').count()) === 19 && await page.isDisabled('#next'));
  await page.click('#prev');
  await until(async () => /jobs 26–50/.test(await page.textContent('#page-info')));
  check('Prev goes back', /jobs 26–50/.test(await page.textContent('#page-info')));
  await page.selectOption('#f-size', '100');

  // Logout clears the session.
  await page.click('#logout');
  await page.waitForSelector('#login:not([hidden])');
  const after = await page.evaluate(async () => (await fetch('/api/v1/whoami')).status);
  check('logout ends the session', after === 401, String(after));

  // A lost connection shows a banner; after a restart the old session is gone: log in again.
  await page.fill('#token', admin);
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#nav:not([hidden])');
  await page.waitForSelector('.pod-grid .host');
  const port = new URL(url).port;
  await stopPodsched();
  check('a lost connection shows a banner', await until(async () =>
    /lost/.test(await page.textContent('#banner')) && await page.isVisible('#banner'), 10000));
  await shot(page, 'connection-lost-1280');
  await startPodsched(Number(port));
  check('after the restart the page asks to log in again', await until(async () =>
    await page.isVisible('#login') && /session ended/i.test(await page.textContent('#login-error')),
  20000));
  if (args.podworker && args.podtrain) await livePhase();
} catch (e) {
  check('test ran to the end', false, e.stack || String(e));
} finally {
  if (browser) await browser.close().catch(() => {});
  await stopPodsched().catch(() => {});
  for (const p of live) await stopProcess(p).catch(() => {});
  fs.rmSync(work, {recursive: true, force: true});
}

// --- with agents: a real podworker runs a real podtrain -----------------------------------------
async function stopProcess(p) {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 10000);
  await exited;
  clearTimeout(t);
}

async function livePhase() {
  const dir = path.join(work, 'live');
  fs.mkdirSync(dir);
  // A fleet of two: the agent's pod, and a v2-8 device no agent serves (unhealthy: "no agent").
  fs.writeFileSync(path.join(dir, 'podsched.yaml'), `pods:
  - {name: pod0, generation: v2, host_rows: 2, host_cols: 2, zone: us-central1-b}
  - {name: dev-0, generation: v2, host_rows: 1, host_cols: 1, zone: us-central1-f}
bus:
  address: "tcp://127.0.0.1:*"
  heartbeat_interval_ms: 300
  heartbeat_timeout_ms: 3000
limits: {requests_per_second: 10000, burst: 10000}
`);
  const ps = spawn(PODSCHED, ['--config', path.join(dir, 'podsched.yaml'), '--data-dir',
    path.join(dir, 'var'), '--port', '0'], {stdio: ['ignore', 'pipe', 'pipe']});
  live.push(ps);
  let out = '';
  ps.stdout.on('data', (d) => { out += d; });
  ps.stderr.on('data', (d) => fs.appendFileSync(path.join(dir, 'podsched.err'), d));
  const started = await until(() => {
    const u = out.match(/^podsched listening on (http\S+)$/m);
    const b = out.match(/^podsched bus on (tcp\S+)$/m);
    return u && b && {url: u[1], bus: b[1]};
  }, 15000);
  if (!check('live: podsched with the bus starts', started)) return;
  const token = fs.readFileSync(path.join(dir, 'var', 'admin.token'), 'utf8').trim();
  const env = {...process.env, OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1'};
  // The bus uses CURVE by default: the agent is enrolled first.
  const keyFile = path.join(dir, 'agent-a.key');
  execFileSync(PODSCHED, ['--config', path.join(dir, 'podsched.yaml'), '--data-dir',
    path.join(dir, 'var'), 'agent', 'enroll', '--agent-id', 'agent-a', '--out', keyFile]);
  // Jobs run as the agent's own account (as in deploy/up.sh); as root that must be allowed.
  const asAgent = ['--jobs-as-agent-user', ...(process.getuid() === 0 ? ['--allow-root-jobs'] : [])];
  const worker = spawn(path.resolve(args.podworker), ['--bus', started.bus, '--pod', 'pod0',
    '--hosts', '0-3', '--agent-id', 'agent-a', '--state-dir', path.join(dir, 'worker'),
    '--bus-key-file', keyFile, ...asAgent],
  {stdio: ['ignore', fs.openSync(path.join(dir, 'worker.log'), 'a'),
    fs.openSync(path.join(dir, 'worker.log'), 'a')], env});
  live.push(worker);
  const call = async (method, target, body) => {
    const res = await fetch(started.url + target, {method, body: body && JSON.stringify(body),
      headers: {'Authorization': `Bearer ${token}`, 'Content-Type': 'application/json'}});
    return res.json();
  };
  check('live: the agent makes every host healthy', await until(async () =>
    (await call('GET', '/api/v1/pods/pod0')).hosts.every((x) => x.healthy), 30000));
  const job = (await call('POST', '/api/v1/jobs', {name: 'mlp-live', accelerator: 'v2-8',
    command: path.resolve(args.podtrain), args: ['--steps', '240', '--progress-every', '10',
      '--checkpoint-every', '80', '--min-step-ms', '25'], max_restarts: 0})).job.id;

  const ctx = await browser.newContext({viewport: {width: 1280, height: 800}});
  const pg = await ctx.newPage();
  const errors = [];
  pg.on('console', (m) => {
    if (m.type() === 'error' && !/\/api\/v1\/whoami$/.test(m.location()?.url || '')) {
      errors.push(m.text());
    }
  });
  pg.on('pageerror', (e) => errors.push(e.message));
  await pg.goto(started.url + '/');
  await pg.fill('#token', token);
  await pg.click('#login-form button[type=submit]');
  await pg.waitForSelector('.pod-grid .host');
  check('live: the pod map names the agent of a host', /agent agent-a/.test(
    await pg.getAttribute('.pod-grid .host >> nth=0', 'title')));
  // The fleet: an overview row per pod, and a selector that draws the other pod.
  check('live: the fleet overview lists both pods with their zones', await until(async () =>
    (await pg.locator('#fleet tbody tr').count()) === 2 &&
    /dev-0[\s\S]*us-central1-f/.test(await pg.textContent('#fleet')), 10000),
  await pg.textContent('#pod-body'));
  await pg.selectOption('#pod-select', 'dev-0');
  check('live: the selector draws the device, its one host without an agent', await until(async () =>
    /#\/pod\/dev-0$/.test(pg.url()) && (await pg.locator('.pod-grid .host').count()) === 1 &&
    /no agent/.test(await pg.getAttribute('.pod-grid .host >> nth=0', 'title')), 10000));
  await shot(pg, 'fleet-live-1280');
  await pg.goto(`${started.url}/#/job/${job}`);
  await pg.waitForSelector('#job-name');
  check('live: the job runs and ends (state changes arrive live)', await until(async () =>
    /SUCCEEDED/.test(await pg.textContent('#job-state')), 120000),
  await pg.textContent('#job-state'));
  check('live: real progress reports draw the loss/accuracy and examples/s charts',
    await until(async () => (await pg.locator('#charts .uplot').count()) === 2, 10000),
    await pg.textContent('#charts'));
  check('live: the summary reaches step 240', await until(async () =>
    /240 of 240/.test(await pg.textContent('#job-summary')), 10000),
  await pg.textContent('#job-summary'));
  check('live: checkpoints appear in the timeline', /checkpoint committed at step \d+/.test(
    await pg.textContent('#timeline')));
  check("live: the log tail shows podtrain's output", await until(async () =>
    (await pg.textContent('#log')).trim().length > 0, 10000));
  await shot(pg, 'job-live-1280');
  await pg.click('#nav a[data-view="agents"]');
  await pg.waitForSelector('#agents table');
  check('live: the agents page lists the connected agent',
    /agent-a[\s\S]*yes/.test(await pg.textContent('#agents table')));
  await shot(pg, 'agents-live-1280');
  check('live: no console errors', errors.length === 0, errors.join('\n'));
  await ctx.close();
}
console.log(`screenshots in ${OUT}`);
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
