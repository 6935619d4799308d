"""A podsched cluster for tests and benchmarks: podsched, podworkers and optionally the S3
server, either in network namespaces (`netns.Cluster`, one machine per namespace) or all on
127.0.0.1 (`LocalNodes`, for benchmarks that need no network faults).

Layout in namespaces (tests/cluster/cluster_test.py):
  node 0: podsched (HTTP :8470, bus :8471) and the S3 server (Swift + s3api)
  node k (1..W): pod hosts {k-1, k-1+W} — column k-1 of a 2 x W pod, so every v2-32 (2x2
                 hosts) spans two namespaces — each served by its own podworker.

Python standard library only. The contract with podworker / podsched is docs/bus.md.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import netns  # noqa: E402

# Traffic stays on the bridge: never through a proxy from the environment.
_http = urllib.request.build_opener(urllib.request.ProxyHandler({}))
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED", "KILLED"}


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


def wait_for(what, cond, timeout, interval=0.2):
    """Polls cond() until it returns a truthy value; fails naming `what` after timeout s."""
    end = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.time() > end:
            fail("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(interval)


class Binaries:
    def __init__(self, build_dir):
        b = os.path.abspath(build_dir)
        for name in ("podsched", "podctl", "podworker", "podtrain"):
            setattr(self, name, _find_binary(b, name))

def _find_binary(build_dir, name):
    """The target's file in the build tree (its folder is the owning area's business)."""
    for dirpath, dirs, files in os.walk(build_dir):
        dirs[:] = [d for d in dirs if d != "CMakeFiles" and not d.startswith(".")]
        if name in files and os.access(os.path.join(dirpath, name), os.X_OK):
            return os.path.join(dirpath, name)
    fail("%s is not built in %s (ninja -C %s %s)" % (name, build_dir, build_dir, name))


class LocalNode:
    """A 'machine' that is this machine (127.0.0.1): for benchmarks without network faults."""

    def __init__(self, index, procs):
        self.index = index
        self.ip = "127.0.0.1"
        self.ns = None
        self.hostname = os.uname().nodename
        self._procs = procs

    def cmd(self, argv):
        return list(argv)

    def popen(self, argv, log=None, env=None):
        out = open(log, "ab") if log else None
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT if out else None, env=env,
                                 start_new_session=True)
        finally:
            if out:
                out.close()
        self._procs.append(p)
        return p

    def run(self, argv, env=None, timeout=120):
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)


class PodCluster:
    """podsched on node 0, one podworker per other node. `netns=False`: everything on
    127.0.0.1 (ports from `base_port`)."""

    def __init__(self, bins, work, workers=4, use_netns=True, store="s3", config_extra="",
                 heartbeat_timeout_ms=3000, base_port=8470, name="pod", pods=1):
        self.bins = bins
        self.work = work
        self.workers = workers
        # `pods` v2 pods pod0, pod1, ... of 2 x (workers / pods) hosts, one zone: the workers
        # (namespaces) are their columns, pod after pod (a group of namespaces per pod).
        if pods < 1 or workers % pods:
            raise ValueError("%d workers cannot be split into %d pods" % (workers, pods))
        self.pods = pods
        self.cols = workers // pods
        self.use_netns = use_netns
        self.config_extra = config_extra
        self.heartbeat_timeout_ms = heartbeat_timeout_ms
        self.procs = []
        self.cluster = None
        self.sched = None
        self.agents = {}
        self.s3_dir = None
        self.agent_env = {}
        os.makedirs(work, exist_ok=True)
        if use_netns:
            self.cluster = netns.Cluster(workers + 1, name)
            self.nodes = self.cluster.nodes
            self.subnet = self.cluster.subnet
            self.http_port, self.bus_port = 8470, 8471
        else:
            self.nodes = [LocalNode(i, self.procs) for i in range(workers + 1)]
            self.subnet = "127.0.0.0/8"
            self.http_port, self.bus_port = (base_port, base_port + 1) if base_port else free_ports(2)
        self.sched_node = self.nodes[0]
        self.url = "http://%s:%d" % (self.sched_node.ip, self.http_port)
        self.bus = "tcp://%s:%d" % (self.sched_node.ip, self.bus_port)
        self.data_dir = os.path.join(work, "var")
        self.checkpoint_url = None
        try:
            if store == "s3" and s3_available():
                self._start_s3()
            else:
                if store == "s3":
                    print("cluster: no S3 server packages (swift); checkpoints on file:// instead")
                self.checkpoint_url = "file://" + os.path.join(work, "checkpoints")
            # The store is the scheduler's default; the specs use the admin's prefix of it, the
            # only place podsched lets the admin's jobs write checkpoints.
            self.store_url = self.checkpoint_url
            base, _, query = self.store_url.partition("?")
            self.checkpoint_url = base.rstrip("/") + "/users/admin" + ("?" + query if query else "")
            self._write_config()
        except BaseException:
            self.close()
            raise

    # --- processes ------------------------------------------------------------------------------

    def _start_s3(self):
        self.s3_dir = os.path.join(self.work, "s3")
        node = self.sched_node
        env = dict(os.environ, S3_SERVER_BIND="0.0.0.0" if self.use_netns else "127.0.0.1")
        r = node.run([os.path.join(ROOT, "deploy/s3-server.sh"), "start", self.s3_dir], env=env,
                     timeout=200)
        if r.returncode != 0:
            fail("S3 server did not start in %s: %s %s" % (node.ns or "127.0.0.1", r.stdout, r.stderr))
        port = re.search(r"proxy_port=(\d+)", open(os.path.join(self.s3_dir, "run/ports")).read())
        self.s3_endpoint = "http://%s:%s" % (node.ip, port.group(1))
        bucket = "podsched-cluster"
        r = subprocess.run(["aws", "--endpoint-url", self.s3_endpoint, "s3", "mb", "s3://" + bucket],
                           capture_output=True, text=True, env=dict(
                               os.environ, AWS_ACCESS_KEY_ID="test:tester",
                               AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1"))
        if r.returncode != 0 and "BucketAlreadyOwnedByYou" not in r.stderr:
            fail("aws s3 mb on %s: %s" % (self.s3_endpoint, r.stderr))
        # Credentials as on a real cluster (docs/deploy.md): in the agents' environment, which
        # the MPI daemons they start and so the ranks inherit; not in the URL.
        self.checkpoint_url = "s3://%s/ckpt?endpoint=%s&region=us-east-1" % (bucket, self.s3_endpoint)
        self.agent_env = {"AWS_ACCESS_KEY_ID": "test:tester", "AWS_SECRET_ACCESS_KEY": "testing",
                          "AWS_REGION": "us-east-1"}

    def _write_config(self):
        os.makedirs(self.data_dir, exist_ok=True)
        self.config = os.path.join(self.work, "podsched.yaml")
        with open(self.config, "w") as f:
            f.write("""listen: {address: %s, port: %d}
bus:
  address: %s
  heartbeat_interval_ms: 500
  heartbeat_timeout_ms: %d
data_dir: %s
default_checkpoint_url: "%s"
pods: [%s]
scheduler:
  tick_interval_ms: 100
  min_runtime_before_preemption_seconds: 0
  retry_backoff_base_seconds: 1
  default_quota: {on_demand_cores: %d, preemptible_cores: %d}
limits: {requests_per_second: 100000, burst: 100000}
%s""" % (self.sched_node.ip, self.http_port, self.bus, self.heartbeat_timeout_ms, self.data_dir,
         self.store_url, ", ".join(
             "{name: pod%d, generation: v2, host_rows: 2, host_cols: %d, zone: cluster-a}" % (
                 p, self.cols) for p in range(self.pods)),
         # Every host of the fleet: a job of every slice (the default quota is 40 cores).
         8 * 2 * self.workers, 8 * 2 * self.workers, self.config_extra))

    def start_scheduler(self):
        log = os.path.join(self.work, "podsched.log")
        with open(log, "a") as f:
            f.write("=== start %s\n" % time.strftime("%H:%M:%S"))
        self.sched = self.sched_node.popen([self.bins.podsched, "--config", self.config], log=log)
        wait_for("podsched to answer on " + self.url, self._healthy, 30)
        self.token = open(os.path.join(self.data_dir, "admin.token")).read().strip()

    def kill_scheduler(self):
        """kill -9 of podsched (only it: the S3 server beside it stays)."""
        self.sched.send_signal(signal.SIGKILL)
        self.sched.wait()

    def _healthy(self):
        try:
            with _http.open(self.url + "/healthz", timeout=2) as r:
                return r.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def pod_of_worker(self, k):
        """The pod whose hosts worker k (1-based) serves."""
        return "pod%d" % ((k - 1) // self.cols)

    def hosts_of_worker(self, k):
        """Hosts served by worker k (1-based), by its pod's ids: a column of its 2 x C pod."""
        c = (k - 1) % self.cols
        return [c, c + self.cols]

    def worker_of_host(self, h, pod="pod0"):
        return int(pod[3:]) * self.cols + h % self.cols + 1

    def start_worker(self, k):
        """Starts the agents of node k: one podworker per simulated host (see below)."""
        node = self.nodes[k]
        self.agents[k] = []
        for h in self.hosts_of_worker(k):
            # One agent per host, each with its own TMPDIR: OpenMPI's orteds of one job that
            # share a hostname and /tmp race creating their common session directory
            # (/tmp/ompi.HOST.UID/jf.N/0: mkdir "File exists", orte_init fails, mpirun exits
            # 213). podworker starts every host's orted with its own environment, so two hosts
            # served by one agent hit this; separate agents with separate TMPDIRs do not.
            tmp = os.path.join(self.work, "tmp", "h%d" % h)
            os.makedirs(tmp, exist_ok=True)
            agent_id = "agent-%d-h%d" % (k, h)
            argv = [self.bins.podworker, "--bus", self.bus, "--pod", self.pod_of_worker(k),
                    "--hosts", str(h),
                    "--agent-id", agent_id, "--bus-key-file", self.key_files[agent_id],
                    "--advertise", node.ip,
                    "--state-dir", os.path.join(self.work, "worker-%d-h%d" % (k, h)),
                    "--mpi-subnet", self.subnet, "--jobs-as-agent-user"]
            if os.geteuid() == 0:
                argv.append("--allow-root-jobs")
            # Jobs get none of the agent's environment but what is passed by name.
            for name in ["PODSCHED_CLUSTER_RUN"] + sorted(self.agent_env):
                argv += ["--pass-env", name]
            # The marker reaches mpirun, orted and the ranks (they inherit the agent's
            # environment): close() finds whatever is left by it, also on 127.0.0.1 where no
            # namespace bounds it.
            env = dict(MPI_ENV, PODSCHED_CLUSTER_RUN=self.work, TMPDIR=tmp, **self.agent_env)
            self.agents[k].append(node.popen(
                argv, log=os.path.join(self.work, "worker-%d-h%d.log" % (k, h)), env=env))
        return self.agents[k]

    def enroll_agents(self):
        """CURVE is on (the default): every agent is enrolled once, for its one host."""
        hosts = {"agent-%d-h%d" % (k, h): (self.pod_of_worker(k), h)
                 for k in range(1, self.workers + 1) for h in self.hosts_of_worker(k)}
        key_dir = os.path.join(self.work, "keys")
        self.key_files = {i: os.path.join(key_dir, i + ".key") for i in hosts}
        os.makedirs(key_dir, exist_ok=True)
        for i, (pod, h) in hosts.items():
            if not os.path.exists(self.key_files[i]):
                subprocess.run([self.bins.podsched, "--config", self.config, "agent", "enroll",
                                "--out-dir", key_dir, "--agent-id", i, "--hosts", str(h),
                                "--pod", pod], check=True, capture_output=True)

    def start(self):
        self.enroll_agents()
        self.start_scheduler()
        for k in range(1, self.workers + 1):
            self.start_worker(k)
        for p in range(self.pods):
            self.wait_hosts_healthy(range(self.cols * 2), 60, "pod%d" % p)

    def close(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not self.use_netns:
            kill_marked("PODSCHED_CLUSTER_RUN=" + self.work)
        if self.s3_dir:
            self.sched_node.run([os.path.join(ROOT, "deploy/s3-server.sh"), "stop", self.s3_dir])
        if self.cluster:
            self.cluster.close()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    # --- API ------------------------------------------------------------------------------------

    def api(self, method, path, body=None, ok=(200, 201)):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
        try:
            with _http.open(req, timeout=10) as r:
                return json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            if e.code in ok:
                return json.loads(e.read() or b"{}")
            fail("%s %s: HTTP %d %s" % (method, path, e.code, e.read()[:300]))

    def submit(self, accelerator, args, preemptible=False, name="train", command=None, **spec):
        body = {"name": name, "accelerator": accelerator, "preemptible": preemptible,
                "command": command or self.bins.podtrain, "args": list(args),
                "checkpoint_url": self.checkpoint_url, "grace_period_seconds": 20,
                "max_restarts": 10}
        body.update(spec)
        return int(self.api("POST", "/api/v1/jobs", body)["job"]["id"])

    def job(self, jid):
        return _ints(self.api("GET", "/api/v1/jobs/%d" % jid))

    def events(self, jid):
        return [_ints(e) for e in self.api("GET", "/api/v1/jobs/%d/events" % jid).get("events", [])]

    def log_text(self, jid):
        """The job's output: the scheduler's in-memory tail; when that lacks the end of the run
        (e.g. after a scheduler restart), the epoch logs stored under the data dir instead."""
        lines = self.api("GET", "/api/v1/jobs/%d/logs?since=0" % jid).get("lines", [])
        text = "\n".join(l.get("text", "") for l in lines)
        if "params_sha256=" in text:
            return text
        stored = []
        for dirpath, _dirs, files in os.walk(self.data_dir):
            if ("/%d/" % jid) not in dirpath + "/":
                continue
            for f in files:
                m = re.match(r"epoch-(\d+)\.log$", f)
                if m:
                    stored.append((int(m.group(1)), os.path.join(dirpath, f)))
        if not stored:
            return text
        return "\n".join(open(path, errors="replace").read() for _, path in sorted(stored))

    def manifests(self, jid):
        """[(epoch, step)] of the job's committed checkpoints (a `manifest` object exists)."""
        if self.checkpoint_url.startswith("file://"):
            root = os.path.join(self.checkpoint_url[len("file://"):], str(jid))
            keys = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
        else:
            r = subprocess.run(["aws", "--endpoint-url", self.s3_endpoint, "s3", "ls", "--recursive",
                                "%s/%d/" % (self.checkpoint_url.split("?")[0], jid)],
                               capture_output=True,
                               text=True, env=dict(os.environ, **self.agent_env,
                                                   AWS_DEFAULT_REGION="us-east-1"))
            keys = r.stdout.split("\n")
        return sorted({(int(m.group(1)), int(m.group(2))) for k in keys
                       for m in [re.search(r"ckpt-(\d+)-(\d+)/manifest\s*$", k)] if m})

    def params_sha(self, jid):
        m = re.findall(r"params_sha256=([0-9a-f]{64})", self.log_text(jid))
        return m[-1] if m else None

    def hosts(self, pod="pod0"):
        return {h["id"]: _ints(h) for h in self.api("GET", "/api/v1/pods/" + pod).get("hosts", [])}

    def wait_hosts_healthy(self, ids, timeout, pod="pod0"):
        ids = list(ids)
        wait_for("hosts %s of %s healthy" % (ids, pod),
                 lambda: all(self.hosts(pod).get(i, {}).get("healthy") for i in ids), timeout)

    def wait_state(self, jid, states, timeout):
        states = {states} if isinstance(states, str) else set(states)
        j = wait_for("job %d to reach %s" % (jid, "/".join(sorted(states))),
                     lambda: (lambda j: j if j["state"] in states or (
                         j["state"] in TERMINAL and not states & TERMINAL) else None)(self.job(jid)),
                     timeout)
        if j["state"] not in states:
            fail("job %d ended %s (%s) while waiting for %s\n%s" % (
                jid, j["state"], j.get("reason"), "/".join(sorted(states)), self.diagnose(jid)))
        return j

    def committed_step(self, jid, job=None):
        """Newest committed checkpoint step of the job as far as the scheduler knows (its
        progress reports), or its output says (`checkpoint committed ckpt-E-S`)."""
        j = job or self.job(jid)
        steps = [int(x) for x in re.findall(r"checkpoint committed ckpt-\d+-(\d+)",
                                            self.log_text(jid))]
        return max([j.get("last_checkpoint_step", 0) or 0] + steps)

    def wait_running_step(self, jid, step, timeout):
        """Waits until the job RUNS and has committed a checkpoint at or after `step`."""
        def ready():
            j = self.job(jid)
            return j if j["state"] == "RUNNING" and self.committed_step(jid, j) >= step else None
        return wait_for("job %d to checkpoint step >= %d" % (jid, step), ready, timeout)

    # --- processes of jobs ---------------------------------------------------------------------

    def job_processes(self, jid, names=("podtrain",)):
        """[(worker k, pid, comm, epoch)] of the job's processes on every worker node."""
        out = []
        for k in range(1, self.workers + 1):
            node = self.nodes[k]
            pids = node.pids() if self.use_netns else _all_pids()
            for pid in pids:
                try:
                    comm = open("/proc/%d/comm" % pid).read().strip()
                    if comm not in names:
                        continue
                    env = open("/proc/%d/environ" % pid, "rb").read().split(b"\0")
                except OSError:
                    continue
                kv = dict(e.decode(errors="replace").split("=", 1) for e in env if b"=" in e)
                if kv.get("POD_JOB_ID") == str(jid):
                    out.append((k, pid, comm, int(kv.get("POD_EPOCH", "-1"))))
            if not self.use_netns:
                break
        return out

    def diagnose(self, jid=None):
        parts = []
        if jid is not None:
            try:
                for e in self.events(jid):
                    parts.append("  event e%s %s -> %s %s hosts=%s" % (
                        e.get("epoch"), e.get("from"), e.get("to"), e.get("reason"), e.get("hosts")))
                parts.append("  log tail:\n    " + "\n    ".join(self.log_text(jid).split("\n")[-15:]))
            except Exception as ex:  # diagnostics must never hide the failure itself
                parts.append("  (no API: %s)" % ex)
        for name in ["podsched.log"] + sorted(f for f in os.listdir(self.work)
                                              if f.startswith("worker-") and f.endswith(".log")):
            path = os.path.join(self.work, name)
            if os.path.exists(path):
                tail = open(path, errors="replace").read().split("\n")[-12:]
                parts.append("  --- %s:\n    %s" % (name, "\n    ".join(tail)))
        return "\n".join(parts)


def _ints(d):
    """The API prints int64 fields as JSON strings (proto3 JSON): make them ints again."""
    for k in ("id", "epoch", "step", "last_checkpoint_step", "job_id", "seq"):
        if isinstance(d.get(k), str) and d[k].lstrip("-").isdigit():
            d[k] = int(d[k])
    return d


def free_ports(n):
    """n distinct free TCP ports of 127.0.0.1 (held open together so that they differ)."""
    import socket
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def kill_marked(marker):
    """SIGKILL every process whose environment holds `marker` (NAME=VALUE), until none is left."""
    needle = marker.encode()
    for _ in range(20):
        found = []
        for pid in _all_pids():
            if pid == os.getpid():
                continue
            try:
                env = open("/proc/%d/environ" % pid, "rb").read().split(b"\0")
            except OSError:
                continue
            if needle in env:
                found.append(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if not found:
            return
        time.sleep(0.1)


def _all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def s3_available():
    return (shutil.which("aws") is not None and os.path.exists("/usr/bin/swift-proxy-server"))


def reference_sha(podtrain, args, cache_dir):
    """params_sha256 of one process (mpirun -np 1) with the same training flags, no
    checkpoints: the reference every cluster run must match bit for bit."""
    os.makedirs(cache_dir, exist_ok=True)
    key = re.sub(r"[^A-Za-z0-9_.-]", "_", "_".join(args))
    cached = os.path.join(cache_dir, "ref-" + key)
    if os.path.exists(cached):
        return open(cached).read().strip()
    r = subprocess.run(["mpirun", "-np", "1", podtrain] + list(args), capture_output=True,
                       text=True, env=dict(MPI_ENV, POD_CHECKPOINT_URL=""), timeout=600)
    m = re.findall(r"params_sha256=([0-9a-f]{64})", r.stdout)
    if r.returncode != 0 or not m:
        fail("reference run failed (exit %d): %s" % (r.returncode, r.stderr[-500:]))
    with open(cached, "w") as f:
        f.write(m[-1])
    return m[-1]
