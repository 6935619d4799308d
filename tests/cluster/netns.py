"""Hosts as Linux network namespaces for the multi-node cluster tests (tests/cluster).

A `Cluster` creates N network namespaces, each with its own address on a private bridge
(10.77.X.0/24, X unique per run) and its own hostname, runs processes inside them, cuts and
restores their links, and always removes everything it created: namespaces (after SIGKILLing
every process in them), the bridge, the veth pairs. Cleanup runs from `close()` (try/finally or
`with`), from atexit, and from SIGINT/SIGTERM/SIGHUP handlers; a sweep at start removes what an
earlier run left behind when that run's process is gone (names carry the creator's pid).

Python standard library only; needs root (`require_root()` exits 77 = ctest skip otherwise).

Why per-namespace hostnames: namespaces share /dev/shm, and OpenMPI's shared-memory transport
keys its segments by hostname; two namespaces with one hostname collide and ranks crash
(shared/notes/build-and-mpi-facts.md). Every process started here runs under `unshare --uts`
with the namespace's hostname.
"""

import atexit
import os
import re
import signal
import subprocess
import sys
import time

PREFIX = "pscl"  # every resource name starts with this (sweep key)
SKIP = 77

_live = []  # clusters not yet closed, for atexit / signal cleanup


def require_root():
    if os.geteuid() != 0:
        print("SKIP: the cluster tests create network namespaces and need root "
              "(run as root or with sudo; CI does)")
        sys.exit(SKIP)
    for tool in ("ip", "unshare", "hostname"):
        if subprocess.run(["sh", "-c", "command -v " + tool], capture_output=True).returncode:
            print("SKIP: needs %s (iproute2, util-linux; deploy/deps.sh installs them)" % tool)
            sys.exit(SKIP)


def sh(*args, check=True, quiet=False):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r.stdout


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def ns_pids(ns):
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _kill_ns_processes(ns, deadline_s=10):
    """SIGKILL every process in the namespace until none is left (children may be forking)."""
    end = time.time() + deadline_s
    while True:
        pids = ns_pids(ns)
        if not pids:
            return True
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.time() > end:
            return False
        time.sleep(0.05)


def sweep_stale(prefix=PREFIX):
    """Removes namespaces, bridges and veths of earlier runs whose creator process is gone."""
    removed = []
    names = sh("ip", "netns", "list", check=False).split("\n")
    for line in names:
        name = line.split(" ")[0]
        m = re.match(r"^%s-(\d+)-\d+$" % prefix, name)
        if m and not _pid_alive(int(m.group(1))):
            _kill_ns_processes(name)
            sh("ip", "netns", "del", name, check=False)
            removed.append(name)
    links = sh("ip", "-o", "link", "show", check=False)
    for m in re.finditer(r"^\d+: (%s(\d+)[a-z]\w*)[@:]" % prefix, links, re.M):
        if not _pid_alive(int(m.group(2))):
            sh("ip", "link", "del", m.group(1), check=False)
            removed.append(m.group(1))
    return removed


def _used_subnets():
    out = sh("ip", "-o", "-4", "addr", "show", check=False)
    return {int(m.group(1)) for m in re.finditer(r"inet 10\.77\.(\d+)\.", out)}


class Node:
    def __init__(self, cluster, index):
        self.cluster = cluster
        self.index = index
        self.ns = "%s-%d-%d" % (PREFIX, cluster.pid, index)
        self.veth = "%s%dv%d" % (PREFIX, cluster.pid, index)  # root side (<= 15 chars)
        self.ip = "%s.%d" % (cluster.net, index + 1)
        self.hostname = "%s-n%d" % (cluster.name, index)

    def cmd(self, argv):
        """argv wrapped to run in this namespace under its own hostname (UTS namespace)."""
        return ["ip", "netns", "exec", self.ns, "unshare", "--uts", "--",
                "sh", "-c", 'hostname "$0" && exec "$@"', self.hostname] + list(argv)

    def popen(self, argv, log=None, env=None, **kw):
        """Starts argv in this namespace; output to the file `log` (appended) or inherited."""
        out = open(log, "ab") if log else None
        try:
            p = subprocess.Popen(self.cmd(argv), stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT if out else None, env=env,
                                 start_new_session=True, **kw)
        finally:
            if out:
                out.close()
        self.cluster.procs.append(p)
        return p

    def run(self, argv, env=None, timeout=120):
        return subprocess.run(self.cmd(argv), capture_output=True, text=True, env=env,
                              timeout=timeout)

    def can_connect(self, ip, port, timeout=1.0):
        """True when a TCP connection from this namespace to ip:port succeeds (no ping here)."""
        code = ("import socket,sys\ntry:\n socket.create_connection((sys.argv[1], int(sys.argv[2])),"
                " timeout=float(sys.argv[3]))\nexcept OSError:\n sys.exit(1)")
        return self.run(["/usr/bin/python3", "-c", code, ip, str(port), str(timeout)]).returncode == 0

    def pids(self):
        return ns_pids(self.ns)

    def kill_all(self):
        """kill -9 of everything running in this namespace (the host 'crashes')."""
        return _kill_ns_processes(self.ns)

    def cut(self):
        """Cuts the link: packets to and from this namespace are dropped; TCP connections are
        not reset (as when a cable is pulled or a switch port dies)."""
        sh("ip", "link", "set", self.veth, "down")

    def restore(self):
        sh("ip", "link", "set", self.veth, "up")


class Cluster:
    """N namespaces on one bridge. The root namespace gets .254 on the bridge so the test can
    reach services inside (HTTP API, S3)."""

    def __init__(self, n, name="pod"):
        require_root()
        self.pid = os.getpid()
        self.name = name
        self.procs = []
        self.nodes = []
        self.closed = False
        stale = sweep_stale()
        if stale:
            print("netns: removed leftovers of earlier runs: " + " ".join(stale))
        used = _used_subnets()
        x = next((x for x in [20 + (self.pid + i) % 230 for i in range(230)] if x not in used),
                 None)
        if x is None:
            raise RuntimeError("no free 10.77.X.0/24 subnet")
        self.net = "10.77.%d" % x
        self.subnet = self.net + ".0/24"
        self.gateway = self.net + ".254"
        self.bridge = "%s%dbr" % (PREFIX, self.pid)
        _live.append(self)
        _install_handlers()
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
            sh("ip", "addr", "add", self.gateway + "/24", "dev", self.bridge)
            sh("ip", "link", "set", self.bridge, "up")
            for i in range(n):
                self._add_node(i)
        except BaseException:
            self.close()
            raise

    def _add_node(self, i):
        node = Node(self, i)
        self.nodes.append(node)
        sh("ip", "netns", "add", node.ns)
        sh("ip", "link", "add", node.veth, "type", "veth", "peer", "name", "eth0", "netns", node.ns)
        sh("ip", "link", "set", node.veth, "master", self.bridge)
        sh("ip", "link", "set", node.veth, "up")
        ex = ["ip", "netns", "exec", node.ns]
        sh(*ex, "ip", "addr", "add", node.ip + "/24", "dev", "eth0")
        sh(*ex, "ip", "link", "set", "eth0", "up")
        sh(*ex, "ip", "link", "set", "lo", "up")

    def close(self):
        if self.closed:
            return
        self.closed = True
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for node in self.nodes:
            if not _kill_ns_processes(node.ns):
                print("netns: processes left in %s: %s" % (node.ns, node.pids()), file=sys.stderr)
            sh("ip", "netns", "del", node.ns, check=False)
            sh("ip", "link", "del", node.veth, check=False)
        sh("ip", "link", "del", self.bridge, check=False)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self in _live:
            _live.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _cleanup_all():
    for c in list(_live):
        c.close()


_handlers_installed = False


def _install_handlers():
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(_cleanup_all)

    def on_signal(signum, _frame):
        _cleanup_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)


if __name__ == "__main__":
    # Self-check: python3 netns.py [N] — creates N namespaces, pings across, cuts one link,
    # checks hostnames, and removes everything. `netns.py --sweep` only removes leftovers.
    if sys.argv[1:] == ["--sweep"]:
        require_root()
        print("removed:", " ".join(sweep_stale()) or "nothing")
        sys.exit(0)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with Cluster(n, "selfcheck") as c:
        a, b = c.nodes[0], c.nodes[1]
        b.popen(["/usr/bin/python3", "-m", "http.server", "-b", b.ip, "8000"],
                log="/dev/null")
        end = time.time() + 10
        while not a.can_connect(b.ip, 8000):
            assert time.time() < end, "no TCP across namespaces"
            time.sleep(0.1)
        assert a.run(["hostname"]).stdout.strip() == a.hostname
        assert b.run(["hostname"]).stdout.strip() == b.hostname
        b.cut()
        assert not a.can_connect(b.ip, 8000), "cut link still passes"
        b.restore()
        end = time.time() + 10
        while not a.can_connect(b.ip, 8000):
            assert time.time() < end, "restored link does not pass"
            time.sleep(0.1)
        a.popen(["sleep", "600"])
        end = time.time() + 10  # `ip netns exec` needs a moment before sleep runs inside
        while not a.pids():
            assert time.time() < end, "process not in namespace"
            time.sleep(0.05)
        print("netns: %d namespaces on %s ok" % (n, c.subnet))
    assert not any(l.startswith("%s-%d-" % (PREFIX, os.getpid()))
                   for l in sh("ip", "netns", "list").split("\n")), "namespace left"
    print("netns: cleaned up")
