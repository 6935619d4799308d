#!/usr/bin/python3
"""podsched side by side with Slurm on this machine (docs/benchmarks.md, issue 17). Prints FIGURE
lines. A benchmark, not a test: only its --smoke run is in deploy/check.sh.

  slurm_bench.py --podsched P --podctl C --podworker W [--jobs 300] [--smoke]

1. Trivial jobs end to end: N x /bin/true, each submitted by its own CLI process (`sbatch --wrap`
   / `podctl submit`), from the first submission until every job has ended.
   - Slurm: Debian's slurm-wlm (installed here if missing, with munge), slurmctld and one slurmd
     on 127.0.0.1 with a throwaway configuration: one node of 8 CPUs, oversubscribed so that 8
     jobs run at once, no accounting.
   - podsched: a 2x4-host v2 pod, one podworker per host (8 hosts: 8 v2-8 jobs at once), jobs
     under `launcher: exec` and under mpirun.
2. Submission: the same N CLI calls, timed until the last returns, twice: while the jobs run
   (the submission part of 1: each system also runs the jobs it has), and into a queue where
   nothing runs (Slurm: held jobs, `sbatch -H`; podsched: no agents, so
   the jobs stay queued). The second is the cost of the CLI and the server alone.
3. Where podsched's side spends the machine's CPU per trivial job, from /proc: the agents with
   what they reaped (the job's launcher, ranks and program, the agent's own helpers), and
   podsched (`podworker_cpu_ms_per_job_*`, `podsched_cpu_ms_per_job_*`).
Both systems run one after the other in one run, on the same idle machine; the ratios are
podsched / Slurm.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from bus_harness import Podsched, Worker, fail, quiet_port, wait_for  # noqa: E402


def figure(name, value, unit):
    print("FIGURE %s %s %s" % (name, ("%.3g" % value) if isinstance(value, float) else value, unit),
          flush=True)


# --- Slurm ---------------------------------------------------------------------------------------

def ensure_slurm():
    if all(shutil.which(b) for b in ("slurmctld", "slurmd", "sbatch", "munged")):
        return
    print("installing slurm-wlm and munge (apt-get)", flush=True)
    r = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "slurm-wlm",
                        "munge"], env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        fail("apt-get install slurm-wlm munge: " + r.stderr[-2000:])


class Slurm:
    """munged, slurmctld and slurmd of a throwaway cluster in `work` (ports chosen free)."""

    def __init__(self, work):
        self.work, self.procs = work, []
        munge = os.path.join(work, "munge")
        os.makedirs(munge, mode=0o700)
        key = os.path.join(munge, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(128))
        os.chmod(key, 0o600)
        self.socket = os.path.join(munge, "socket")
        self._spawn("munged", ["munged", "-F", "--force", "--socket=" + self.socket,
                               "--key-file=" + key, "--log-file=" + os.path.join(munge, "log"),
                               "--pid-file=" + os.path.join(munge, "pid"),
                               "--seed-file=" + os.path.join(munge, "seed")])
        wait_for(lambda: os.path.exists(self.socket), "munged's socket", 30)
        host = socket.gethostname()
        for d in ("state", "spool", "log"):
            os.makedirs(os.path.join(work, d))
        self.conf = os.path.join(work, "slurm.conf")
        # Below the ephemeral range (quiet_port): an ephemeral port chosen here could be taken
        # by another test's connection before slurmctld or slurmd binds it.
        ctld = quiet_port()
        d = quiet_port()
        while d == ctld:
            d = quiet_port()
        with open(self.conf, "w") as f:
            f.write("""ClusterName=podschedbench
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld}
SlurmdPort={d}
AuthType=auth/munge
AuthInfo=socket={socket}
CredType=cred/munge
StateSaveLocation={w}/state
SlurmdSpoolDir={w}/spool
SlurmctldPidFile={w}/slurmctld.pid
SlurmdPidFile={w}/slurmd.pid
SlurmctldLogFile={w}/log/slurmctld.log
SlurmdLogFile={w}/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName={host} NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=bench Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
""".format(host=host, ctld=ctld, d=d, socket=self.socket, w=work))
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self._spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
        self._spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", host])

        def idle():
            r = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                               env=self.env)
            return r.returncode == 0 and r.stdout.strip() == "idle"
        wait_for(idle, "Slurm's node to be idle", 60, interval=0.2)

    def _spawn(self, name, argv):
        log = open(os.path.join(self.work, name + ".out"), "w")
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True))

    def submit(self, hold=False):
        subprocess.run(["sbatch", "-Q"] + (["-H"] if hold else []) +
                       ["--wrap=/bin/true", "-o", "/dev/null"], env=self.env, check=True,
                       capture_output=True)

    def pending(self):
        r = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True,
                           env=self.env)
        return len(r.stdout.split()) if r.returncode == 0 else 1 << 30

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


# --- podsched ------------------------------------------------------------------------------------

class PodschedCluster:
    def __init__(self, args, work):
        self.args = args
        self.ps = Podsched(args.podsched, work, 2, 4,
                           bus_extra="  heartbeat_interval_ms: 500\n  heartbeat_timeout_ms: 5000\n")
        self.workers = [Worker(args.podworker, self.ps, work, "h%d" % h, str(h)) for h in range(8)]
        wait_for(lambda: self.ps.metrics().get("podsched_agents_connected") == 8, "8 agents", 60)
        self.spec = {}
        for launcher in ("exec", "mpi"):
            path = os.path.join(work, "true-%s.yaml" % launcher)
            with open(path, "w") as f:
                f.write("name: true\naccelerator: v2-8\ncommand: /bin/true\nlauncher: %s\n"
                        "max_restarts: 0\n" % launcher)
            self.spec[launcher] = path

    def submit(self, launcher):
        subprocess.run([self.args.podctl, "--server", self.ps.url, "--token", self.ps.token,
                        "submit", "--parsable", "-f", self.spec[launcher]], check=True,
                       capture_output=True)

    def pending(self):
        g = self.ps.metrics()
        return sum(v for k, v in g.items() if k.startswith("podsched_jobs{") and
                   not any(s in k for s in ("SUCCEEDED", "FAILED", "CANCELLED")))

    def failed(self):
        return sum(v for k, v in self.ps.metrics().items()
                   if k.startswith("podsched_jobs{") and ("FAILED" in k or "CANCELLED" in k))

    def cpu_s(self):
        """CPU seconds so far of the agents (with the children they reaped: the launchers, ranks
        and programs of their jobs, and the agents' own helpers) and of podsched."""
        def of(pid):
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        return sum(of(w.proc.pid) for w in self.workers), of(self.ps.proc.pid)

    def stop_workers(self):
        for w in self.workers:
            w.stop()
        wait_for(lambda: self.ps.metrics().get("podsched_agents_connected") == 0, "no agents",
                 60)

    def close(self):
        for w in self.workers:
            w.stop()
        self.ps.stop()


def submit_only(submit, n):
    """submissions/s for n calls, one after another."""
    t0 = time.monotonic()
    for _ in range(n):
        submit()
    return n / (time.monotonic() - t0)


def run(submit, pending, n, what):
    """(submissions/s, jobs/s end to end) for n jobs."""
    t0 = time.monotonic()
    for _ in range(n):
        submit()
    t1 = time.monotonic()
    wait_for(lambda: pending() == 0, "%s: all %d jobs to end" % (what, n), 600, interval=0.02)
    t2 = time.monotonic()
    return n / (t1 - t0), n / (t2 - t0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--podsched", required=True)
    p.add_argument("--podctl", required=True)
    p.add_argument("--podworker", required=True)
    p.add_argument("--jobs", type=int, default=300)
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args()
    if os.geteuid() != 0:
        print("SKIP: Slurm's daemons need root here")
        return 77
    n = 20 if args.smoke else args.jobs
    ensure_slurm()
    work = tempfile.mkdtemp(prefix="podsched-slurm-bench-")
    try:
        slurm = Slurm(os.path.join(work, "slurm"))
        try:
            s_submit, s_e2e = run(slurm.submit, slurm.pending, n, "Slurm")
            s_held = submit_only(lambda: slurm.submit(hold=True), n)  # gone with the daemons
        finally:
            slurm.close()
        figure("slurm_sbatch_per_s", s_submit, "jobs/s")
        figure("slurm_trivial_jobs_per_s", s_e2e, "jobs/s")
        os.makedirs(os.path.join(work, "podsched"))
        c = PodschedCluster(args, os.path.join(work, "podsched"))
        try:
            results, cpu = {}, {}
            for launcher in ("exec", "mpi"):
                before = c.failed()
                cpu_before = c.cpu_s()
                results[launcher] = run(lambda: c.submit(launcher), c.pending, n,
                                        "podsched (%s)" % launcher)
                cpu[launcher] = [(a - b) * 1000 / n for a, b in zip(c.cpu_s(), cpu_before)]
                if c.failed() != before:
                    fail("podsched: %d of the trivial jobs did not succeed" % (c.failed() - before))
            c.stop_workers()
            p_queued = submit_only(lambda: c.submit("exec"), n)
        finally:
            c.close()
        for launcher, (submit, e2e) in results.items():
            figure("podsched_trivial_jobs_per_s_%s" % launcher, e2e, "jobs/s")
            figure("podsched_vs_slurm_trivial_jobs_%s" % launcher, e2e / s_e2e, "x")
            # Where podsched's side spends the machine's CPU per job (a job's processes included).
            figure("podworker_cpu_ms_per_job_%s" % launcher, cpu[launcher][0], "ms")
            figure("podsched_cpu_ms_per_job_%s" % launcher, cpu[launcher][1], "ms")
        figure("podctl_submit_per_s", results["exec"][0], "jobs/s")
        figure("podctl_vs_sbatch_submit", results["exec"][0] / s_submit, "x")
        figure("slurm_sbatch_held_per_s", s_held, "jobs/s")
        figure("podctl_submit_queued_per_s", p_queued, "jobs/s")
        figure("podctl_vs_sbatch_submit_nothing_running", p_queued / s_held, "x")
        print("jobs=%d (each by its own CLI process); Slurm: 1 node x 8 CPUs, podsched: 8 hosts"
              % n)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
