"""Shared helpers for the bus tests and benchmarks: a real podsched on ephemeral ports in a temp
dir (HTTP and bus), podworker processes, HTTP calls and /metrics parsing. Every wait is polling of
a condition with a deadline."""
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from testlib import TIMEOUT, fail, wait_for  # noqa: E402 (beside this file)


# The test's users have no Unix accounts: every job runs as the account of the test (root in
# CI, which must be allowed explicitly). tests/integration/accounts_test.py runs jobs as users.
AGENT_USER_FLAGS = ["--jobs-as-agent-user"] + (["--allow-root-jobs"] if os.geteuid() == 0 else [])

def quiet_port():
    """A free TCP port of 127.0.0.1 below the kernel's ephemeral range (ip_local_port_range). Only
    a bind that names a port there takes it, so podsched's bus keeps its port across a restart
    while other tests open connections: an ephemeral bus port was taken by one of them between a
    stop and the next start (jobdb_quarantine_integration, 2026-12-07)."""
    try:
        low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    pick = random.SystemRandom()
    for _ in range(200):
        port = pick.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    fail("no free port of 127.0.0.1 below %d" % low)


class Process:
    """A child process the tests start, kill -9 and stop (SIGTERM, SIGKILL after 10 s)."""
    proc = None

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


class Podsched(Process):
    """podsched --port 0 with the bus on a port no connection takes (quiet_port); `config` is
    YAML text appended to a one-pod configuration. CURVE is on, as by default (Worker enrols each agent); curve=False
    for test clients that speak plain ZeroMQ (bench_bus). `limits`: more keys of the limits
    mapping (", max_connections: 200"); `scheduler`: more keys of the scheduler mapping.
    `pods`: a whole `pods` list in YAML (a fleet) instead of the one pod0 of the grid given."""

    def __init__(self, binary, work, pod_rows=2, pod_cols=4, bus_extra="", extra="",
                 generation="v2", curve=True, limits="", scheduler="", pods=None):
        self.binary, self.work, self.curve = binary, work, curve
        self.data_dir = os.path.join(work, "var")
        if not curve:
            bus_extra = "  curve: off\n" + bus_extra
        self.config = os.path.join(work, "podsched.yaml")
        with open(self.config, "w") as f:
            f.write("pods: %s\n" % (pods or "[{name: pod0, generation: %s, host_rows: %d, "
                                               "host_cols: %d}]" % (generation, pod_rows, pod_cols)))
            f.write("bus:\n  address: \"tcp://127.0.0.1:*\"\n" + bus_extra)
            f.write("limits: {requests_per_second: 100000, burst: 100000%s}\n" % limits)
            f.write("scheduler: {min_runtime_before_preemption_seconds: 0, "
                    "retry_backoff_base_seconds: 1%s}\n" % scheduler + extra)
        self.proc = None
        self.bus = "tcp://127.0.0.1:%d" % quiet_port()  # kept by every restart (start)
        self.start()

    def start(self):
        self.out_path = os.path.join(self.work, "podsched.out")
        self.err = open(os.path.join(self.work, "podsched.err"), "a")
        # A restart keeps the bus endpoint: the agents stay connected to it.
        bus = ["--bus", self.bus] if self.bus else []
        self.proc = subprocess.Popen(
            [self.binary, "--config", self.config, "--data-dir", os.path.join(self.work, "var"),
             "--port", "0"] + bus, stdout=open(self.out_path, "w"), stderr=self.err)

        def ready():
            if self.proc.poll() is not None:
                fail("podsched exited: " + open(os.path.join(self.work, "podsched.err")).read())
            text = open(self.out_path).read()
            url = re.search(r"^podsched listening on (http\S+)$", text, re.M)
            bus = re.search(r"^podsched bus on (tcp\S+)$", text, re.M)
            return url and bus and (url.group(1), bus.group(1))
        self.url, self.bus = wait_for(ready, "podsched to listen", 30)
        self.token = open(os.path.join(self.work, "var", "admin.token")).read().strip()


    def enroll(self, agent_id, hosts=None, pod=None):
        """`podsched agent enroll` (for `hosts`, e.g. "0-1", of `pod` when given): the agent's
        key file (work/ID.key, kept across restarts)."""
        path = os.path.join(self.work, agent_id + ".key")
        if not os.path.exists(path):
            subprocess.run([self.binary, "--config", self.config, "--data-dir", self.data_dir,
                            "agent", "enroll", "--agent-id", agent_id, "--out", path] +
                           (["--hosts", hosts] if hosts else []) + (["--pod", pod] if pod else []),
                           check=True, capture_output=True)
        return path

    def call(self, method, path, body=None, token=None):
        """One API call with the admin token, or with `token` (a user's)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + (token or self.token),
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                text = r.read().decode()
                return r.status, (json.loads(text) if text.startswith(("{", "[")) else text)
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def get(self, path):
        status, body = self.call("GET", path)
        if status != 200:
            fail("GET %s: %s %s" % (path, status, body))
        return body

    def job(self, job_id):
        return self.get("/api/v1/jobs/%d" % job_id)

    def events(self, job_id):
        return self.get("/api/v1/jobs/%d/events" % job_id).get("events", [])

    def submit(self, spec):
        status, body = self.call("POST", "/api/v1/jobs", spec)
        if status != 201:
            fail("submit: %s %s" % (status, body))
        return int(body["job"]["id"])

    def metrics(self):
        status, text = self.call("GET", "/metrics")
        out = {}
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
        return out

    def pod(self):
        return self.get("/api/v1/pods/pod0")


class Worker(Process):
    """One podworker serving `hosts` (e.g. "0-1") of `pod`; `enrolled_pod`: the pod its key
    is enrolled for, when it is not `pod` (an agent that names a pod it was not enrolled for)."""

    def __init__(self, binary, podsched, work, agent_id, hosts, extra=(),
                 user_flags=AGENT_USER_FLAGS, pod="pod0", enrolled_pod=None):
        self.binary, self.agent_id, self.hosts, self.pod = binary, agent_id, hosts, pod
        self.enrolled_pod = enrolled_pod or pod
        self.user_flags = list(user_flags)
        self.state = os.path.join(work, "worker-" + agent_id)
        self.log = os.path.join(work, "worker-%s.log" % agent_id)
        self.podsched, self.extra = podsched, list(extra)
        self.start()

    def start(self):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        keys = []
        if self.podsched.curve and "--bus-key-file" not in self.extra:
            keys = ["--bus-key-file",
                    self.podsched.enroll(self.agent_id, self.hosts, self.enrolled_pod)]
        elif "--bus-key-file" not in self.extra:
            keys = ["--insecure-bus"]  # a root agent refuses plain TCP without it
        self.proc = subprocess.Popen(
            [self.binary, "--bus", self.podsched.bus, "--pod", self.pod, "--hosts", self.hosts,
             "--agent-id", self.agent_id, "--state-dir", self.state] + keys + self.user_flags +
            self.extra,
            stdout=open(self.log, "a"), stderr=subprocess.STDOUT, env=env,
            start_new_session=True)

