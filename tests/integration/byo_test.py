#!/usr/bin/python3
"""Users' own programs under podsched, end to end (tests/integration/byo.cmake): real podsched,
real podworkers, real mpirun or `podworker launch`, and real PyTorch (gloo) and mpi4py jobs.

  byo_test.py PODSCHED PODCTL PODWORKER TEST
  TEST in: torch_ddp, mpi4py, contract_exec, contract_mpi, preempt_file, whole_lines

A 2x4-host v2 pod (8 hosts), one podworker per host. Every wait polls a condition with a
deadline; nothing sleeps and hopes.
"""
import hashlib
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402
from testlib import ok, run_podctl  # noqa: E402

PODSCHED, PODCTL, PODWORKER, TEST = sys.argv[1:5]
JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")
BUS = "  heartbeat_interval_ms: 300\n  heartbeat_timeout_ms: 10000\n"


def podctl(ps, *args, check=True):
    return run_podctl(PODCTL, ps, *args, expect=0 if check else None)


def spec(name, command, *args, launcher="exec", ranks=1, preemptible=False, accelerator="v2-32",
         grace=30, priority=0):
    return {"name": name, "accelerator": accelerator, "preemptible": preemptible,
            "command": command, "args": list(args), "launcher": launcher,
            "ranks_per_host": ranks, "grace_period_seconds": grace, "max_restarts": 0,
            "priority": priority}


def wait_state(ps, job, states, timeout=180):
    return wait_for(lambda: ps.job(job)["state"] in states and ps.job(job),
                    "job %d to be %s" % (job, "/".join(states)), timeout)


def logs(ps, job):
    return podctl(ps, "logs", str(job)).stdout


def hosts_of(ps, job):
    return sorted(int(h) for h in ps.job(job).get("hosts", []))


def ckpt_dir(ps, job):
    return os.path.join(ps.work, "var", "objects", "checkpoints", "users", "admin", "job-%d" % job)


def expect_succeeded(ps, job, what):
    j = wait_state(ps, job, ("SUCCEEDED", "FAILED", "CANCELLED"))
    if j["state"] != "SUCCEEDED":
        fail("%s ended %s (%s):\n%s" % (what, j["state"], j.get("reason"), logs(ps, job)))
    return j


def no_mpirun_noise(ps, job):
    text = logs(ps, job)
    if "setpgid" in text:
        fail("mpirun's setpgid warning reached the job's log:\n" + text)


def test_torch_ddp(ps):
    """PyTorch DDP on a v2-32 (4 hosts, launcher exec): preempted with `podctl preempt`, saved
    with torch.save in its grace period, resumed on other hosts from the saved step, and ends
    with the same parameters as an uninterrupted run."""
    steps = "40"
    job = ps.submit(spec("ddp", "/usr/bin/python3", os.path.join(JOBS, "torch_ddp.py"), steps,
                         "0.15", preemptible=True))
    first = wait_state(ps, job, ("RUNNING",))
    first_hosts = hosts_of(ps, job)
    ok("DDP job RUNNING on hosts %s (every rank up; reason '%s')" % (first_hosts, first["reason"]))
    wait_for(lambda: int(ps.job(job)["step"]) >= 8, "8 steps reported by POD_PROGRESS lines", 180)
    # The other half of the pod is taken, and a job of higher priority waits to take this half:
    # the preempted job can only come back where the first blocker was. (Preemptible blockers:
    # they stay within the on-demand quota and preempt nothing themselves.)
    blocker = ps.submit(spec("blocker-a", "/bin/sleep", "600", launcher="mpi", preemptible=True))
    wait_state(ps, blocker, ("STARTING", "RUNNING"))
    urgent = ps.submit(spec("urgent", "/bin/sleep", "600", launcher="mpi", priority=1000,
                            preemptible=True))
    podctl(ps, "preempt", str(job))
    wait_state(ps, urgent, ("STARTING", "RUNNING"))
    saved = logs(ps, job)
    if "rank 0: preempted, saved step" not in saved:
        fail("the DDP job did not save on SIGTERM:\n" + saved)
    ev = [e for e in ps.events(job) if e["from"] == "PREEMPTING"]
    if not ev or ev[0]["to"] != "QUEUED" or "grace" in ev[0]["reason"]:
        fail("preemption did not end with a clean requeue: %s" % ev)
    ok("preempted: torch.save in the grace period, exit 75, requeued (%s)" % ev[0]["reason"])
    podctl(ps, "cancel", str(blocker))
    wait_state(ps, job, ("RUNNING", "SUCCEEDED"))
    second_hosts = hosts_of(ps, job) or second_hosts_from_events(ps, job)
    if set(second_hosts) & set(first_hosts):
        fail("resumed on %s, overlapping its first hosts %s" % (second_hosts, first_hosts))
    expect_succeeded(ps, job, "the preempted DDP job")
    text = logs(ps, job)
    if "resumed at step" not in text:
        fail("the DDP job did not resume from its checkpoint:\n" + text)
    ok("resumed on other hosts %s from the saved step, succeeded" % second_hosts)
    podctl(ps, "cancel", str(urgent))

    ref = ps.submit(spec("ddp-reference", "/usr/bin/python3", os.path.join(JOBS, "torch_ddp.py"),
                         steps))
    expect_succeeded(ps, ref, "the uninterrupted DDP job")
    a = open(os.path.join(ckpt_dir(ps, job), "final.sha256")).read().strip()
    b = open(os.path.join(ckpt_dir(ps, ref), "final.sha256")).read().strip()
    if a != b:
        fail("parameters differ: preempted run %s, uninterrupted %s" % (a, b))
    ok("the same parameters as an uninterrupted run (sha256 %s...)" % a[:16])
    points = ps.get("/api/v1/jobs/%d/progress" % job).get("points", [])
    if not points or "lr" not in points[-1].get("scalars", {}):
        fail("POD_PROGRESS scalars did not reach the progress series: %s" % points[-1:])
    ok("progress from POD_PROGRESS lines: %d points, scalars %s" % (len(points),
                                                                    points[-1]["scalars"]))


def second_hosts_from_events(ps, job):
    placed = [e for e in ps.events(job) if e["to"] == "PLACED"]
    return sorted(int(h) for h in placed[-1].get("hosts", []))


def test_mpi4py(ps):
    job = ps.submit(spec("mpi4py", "/usr/bin/python3", os.path.join(JOBS, "mpi4py_allreduce.py"),
                         launcher="mpi", ranks=2))
    expect_succeeded(ps, job, "the mpi4py job")
    text = logs(ps, job)
    if text.count("sum 36") != 8:
        fail("expected 8 ranks summing to 36:\n" + text)
    no_mpirun_noise(ps, job)
    ok("mpi4py: 8 ranks on 4 hosts, RANK/WORLD_SIZE/NODE_RANK agree with MPI, allreduce right")


def contract(ps, launcher, accelerator="v2-32"):
    hosts = {"v2-8": 1, "v2-32": 4}[accelerator]
    job = ps.submit(spec("contract-" + launcher, "/usr/bin/python3",
                         os.path.join(JOBS, "contract_check.py"), launcher=launcher, ranks=2,
                         accelerator=accelerator))
    j = expect_succeeded(ps, job, "the contract check (%s, %s)" % (launcher, accelerator))
    text = logs(ps, job)
    if text.count("tf-worker") != 2 * hosts:
        fail("expected %d ranks to report:\n%s" % (2 * hosts, text))
    # Under `launcher: exec` the launcher starts its own host's ranks (node 0: ranks 0 and 1)
    # itself and the others through rsh; mpirun starts every rank through an orted.
    local = sorted(int(m.group(1)) for m in re.finditer(
        r"rank (\d+)/\d+ node .* started-by launch$", text, re.MULTILINE))
    if local != ([0, 1] if launcher == "exec" else []):
        fail("ranks started by the launcher itself: %s, not node 0's:\n%s" % (local, text))
    events = ps.events(job)
    running = [e for e in events if e["to"] == "RUNNING"]
    if not running or running[0]["reason"] != "every rank is running":
        # A job this short may end before a scan sees every rank; then it never was RUNNING.
        if any(e["to"] == "RUNNING" for e in events):
            fail("RUNNING for another reason: %s" % running)
    no_mpirun_noise(ps, job)
    ok("launcher %s, %s: TF_CONFIG, JAX_*, MASTER_*, RANK..., the host's tag, preempt file and"
       " OMPI tmpdir match for %d ranks, no rsh secrets (%s)"
       % (launcher, accelerator, 2 * hosts, j["state"]))


def test_contract_exec(ps):
    contract(ps, "exec")
    contract(ps, "exec", "v2-8")


def test_contract_mpi(ps):
    contract(ps, "mpi")
    # One host: mpirun starts both ranks itself (no orted, no rsh), with the host's variables.
    contract(ps, "mpi", "v2-8")


def test_preempt_file(ps):
    """A job that ignores SIGTERM but watches POD_PREEMPT_FILE checkpoints within its grace."""
    job = ps.submit(spec("watcher", "/bin/sh", os.path.join(JOBS, "preempt_file_watch.sh"),
                         preemptible=True, grace=20))
    wait_state(ps, job, ("RUNNING",))
    ok("a job without progress reports is RUNNING once its ranks are up")
    podctl(ps, "preempt", str(job))
    ev = wait_for(lambda: next((e for e in ps.events(job) if e["from"] == "PREEMPTING"), None),
                  "the end of the preemption", 120)
    if ev["to"] != "QUEUED" or "grace" in ev["reason"]:
        fail("the watcher was not stopped cleanly: %s" % ev)
    expect_succeeded(ps, job, "the watcher")
    text = logs(ps, job)
    if text.count("preempt file seen, deadline") != 4 or text.count("resumed from deadline") != 4:
        fail("every rank should have seen the preempt file and resumed:\n" + text)
    ok("POD_PREEMPT_FILE seen by all 4 ranks, exit 75 in the grace period (%s), resumed"
       % ev["reason"])


def test_whole_lines(ps):
    """Ranks that write lines in pieces: every stored line is one whole line of one rank."""
    for launcher in ("mpi", "exec"):
        job = ps.submit(spec("pieces-" + launcher, "/bin/sh",
                             os.path.join(JOBS, "partial_lines.sh"), launcher=launcher, ranks=2))
        expect_succeeded(ps, job, "the partial-line job")
        lines = [l for l in logs(ps, job).splitlines() if "line" in l]
        whole = [l for l in lines if l.endswith(" begins and ends") and l.count("rank ") == 1]
        if len(lines) != 24 or len(whole) != 24:
            fail("%s: torn lines:\n%s" % (launcher, "\n".join(lines)))
        no_mpirun_noise(ps, job)
        ok("launcher %s: 24 whole lines from 8 ranks, each tagged once" % launcher)


def main():
    test = globals().get("test_" + TEST)
    if test is None:
        fail("unknown test " + TEST)
    with tempfile.TemporaryDirectory(prefix="podsched-byo-") as work:
        ps = Podsched(PODSCHED, work, 2, 4, bus_extra=BUS)
        workers = [Worker(PODWORKER, ps, work, "h%d" % h, str(h)) for h in range(8)]
        try:
            wait_for(lambda: ps.metrics().get("podsched_agents_connected") == 8, "8 agents", 60)
            wait_for(lambda: all(h["healthy"] for h in ps.pod()["hosts"]), "8 healthy hosts", 30)
            test(ps)
        except BaseException:
            for w in workers:
                sys.stderr.write("---- %s\n%s" % (w.log, open(w.log).read()[-3000:]))
            raise
        finally:
            for w in workers:
                w.stop()
            ps.stop()


if __name__ == "__main__":
    main()
