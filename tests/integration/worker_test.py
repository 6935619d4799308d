#!/usr/bin/python3
"""podsched + real podworkers + real mpirun + podprobe, end to end (tests/integration/worker.cmake).

  worker_test.py PODSCHED PODCTL PODWORKER PODPROBE TEST
  TEST in: success, preempt, grace, on_demand, agent_loss, restart

A 2x4-host v2 pod (8 hosts), one podworker per host (agent h<N> serves host N), so a v2-32 (2x2
hosts) runs under mpirun across four agents. Every wait polls a condition with a deadline.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402

PODSCHED, PODCTL, PODWORKER, PODPROBE, TEST = sys.argv[1:6]
BUS = ("  heartbeat_interval_ms: 300\n  heartbeat_timeout_ms: 2000\n"
       "  reconcile_timeout_ms: 10000\n")


def ok(what):
    print("ok - " + what, flush=True)


def podctl(ps, *args, check=True):
    r = subprocess.run([PODCTL, "--server", ps.url, "--token", ps.token] + list(args),
                       capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        fail("podctl %s: %d %s %s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


def probe(name, *args, preemptible=False, grace=10, accelerator="v2-32"):
    return {"name": name, "accelerator": accelerator, "preemptible": preemptible,
            "command": PODPROBE, "args": list(args), "grace_period_seconds": grace,
            "max_restarts": 5}


def state(ps, job):
    return ps.job(job)["state"]


def wait_state(ps, job, states, timeout=120):
    return wait_for(lambda: state(ps, job) in states and ps.job(job),
                    "job %d to be %s" % (job, "/".join(states)), timeout)


def wait_event(ps, job, pred, what, timeout=120):
    return wait_for(lambda: next((e for e in ps.events(job) if pred(e)), None), what, timeout)


def placements(ps, job):
    return [e for e in ps.events(job) if e["to"] == "PLACED"]


def started(ps, job):
    """The job's processes run: STARTING or RUNNING at its current epoch."""
    return wait_state(ps, job, ("STARTING", "RUNNING"))


def cluster(work):
    ps = Podsched(PODSCHED, work, 2, 4, bus_extra=BUS)
    workers = {h: Worker(PODWORKER, ps, work, "h%d" % h, str(h)) for h in range(8)}
    wait_for(lambda: ps.metrics().get("podsched_agents_connected") == 8, "8 agents", 60)
    wait_for(lambda: all(h["healthy"] for h in ps.pod()["hosts"]), "8 healthy hosts", 30)
    return ps, workers


def test_success(ps, workers):
    job = ps.submit(probe("hello"))
    j = wait_state(ps, job, ("SUCCEEDED", "FAILED"))
    if j["state"] != "SUCCEEDED":
        fail("job ended %s: %s" % (j["state"], j["reason"]))
    ok("v2-32 over four agents SUCCEEDED")
    out = wait_for(lambda: (lambda r: "podprobe: world=4 sum=6" in r.stdout and r.stdout)(
        podctl(ps, "logs", str(job))), "the output in podctl logs", 30)
    for rank in range(4):
        if "rank %d on host" % rank not in out:
            fail("rank %d missing from the logs:\n%s" % (rank, out))
    ok("its output is in podctl logs (4 ranks, all-reduce sum 6)")
    agents = podctl(ps, "agents").stdout
    if agents.count("connected") != 8:
        fail("podctl agents:\n" + agents)
    ok("podctl agents lists 8 connected agents")


def test_preempt(ps, workers):
    job = ps.submit(probe("preempt-me", "--run-seconds", "120", "--progress-every-ms", "200",
                          preemptible=True))
    first = started(ps, job)
    wait_state(ps, job, ("RUNNING",))  # progress arrived
    podctl(ps, "preempt", str(job))
    wait_event(ps, job, lambda e: e["from"] == "PREEMPTING" and e["to"] == "QUEUED",
               "PREEMPTING -> QUEUED")
    ev = wait_event(ps, job, lambda e: e["to"] == "PLACED" and int(e["epoch"]) ==
                    int(first["epoch"]) + 1, "a relaunch with epoch + 1")
    ok("preempted, requeued and relaunched with epoch %s" % ev["epoch"])
    logs = podctl(ps, "logs", str(job)).stdout
    if "podprobe: preempted" not in logs:
        fail("the program did not report SIGTERM:\n" + logs)
    ok("the program saw SIGTERM and exited as preempted (75)")
    reason = [e for e in ps.events(job) if e["from"] == "PREEMPTING"][0]["reason"]
    if "grace" in reason:
        fail("a program that honoured SIGTERM was killed after grace: " + reason)
    podctl(ps, "cancel", str(job))
    wait_state(ps, job, ("CANCELLED",))


def test_grace(ps, workers):
    job = ps.submit(probe("stubborn", "--run-seconds", "120", "--ignore-sigterm",
                          preemptible=True, grace=2))
    started(ps, job)
    podctl(ps, "preempt", str(job))
    ev = wait_event(ps, job, lambda e: e["from"] == "PREEMPTING" and e["to"] == "QUEUED",
                    "PREEMPTING -> QUEUED")
    if "grace" not in ev["reason"]:
        fail("reason does not say grace: " + ev["reason"])
    ok("ignoring SIGTERM: killed after the grace period (%s)" % ev["reason"])
    podctl(ps, "cancel", str(job))
    wait_state(ps, job, ("CANCELLED",))


def test_on_demand(ps, workers):
    a = ps.submit(probe("pre-a", "--run-seconds", "120", preemptible=True))
    b = ps.submit(probe("pre-b", "--run-seconds", "120", preemptible=True))
    started(ps, a)
    started(ps, b)
    od = ps.submit(probe("urgent", "--run-seconds", "1"))
    j = wait_state(ps, od, ("SUCCEEDED", "FAILED"), 180)
    if j["state"] != "SUCCEEDED":
        fail("on-demand job ended %s: %s" % (j["state"], j["reason"]))
    victims = [v for v in (a, b) if any(e["to"] == "PREEMPTING" for e in ps.events(v))]
    if len(victims) != 1:
        fail("expected exactly one preempted victim, got %s" % victims)
    reason = [e for e in ps.events(victims[0]) if e["to"] == "PREEMPTING"][0]["reason"]
    if "on-demand" not in reason:
        fail("victim's reason: " + reason)
    placed = [e for e in ps.events(od) if e["to"] == "PLACED"][0]
    freed = [e for e in ps.events(victims[0]) if e["from"] == "PREEMPTING"][0]
    if int(placed["seq"]) < int(freed["seq"]):
        fail("the on-demand job was placed before the victim's hosts were free")
    ok("on-demand preempted job %d (%s) and started after its hosts were free" % (victims[0],
                                                                                 reason))
    for v in (a, b):
        podctl(ps, "cancel", str(v), check=False)


def test_agent_loss(ps, workers):
    job = ps.submit(probe("survivor", "--run-seconds", "120"))
    first = started(ps, job)
    hosts = [int(h) for h in first["hosts"]]
    victim = hosts[-1]
    workers[victim].kill9()
    host = wait_for(lambda: next((h for h in ps.pod()["hosts"] if int(h["id"]) == victim and
                                  h["health_reason"] == "heartbeat lost"), None),
                    "host %d unhealthy after the heartbeat timeout" % victim, 30)
    ok("agent of host %d killed: host unhealthy (%s)" % (victim, host["health_reason"]))
    ev = wait_event(ps, job, lambda e: e["to"] == "PLACED" and int(e["epoch"]) >
                    int(first["epoch"]), "relaunch elsewhere")
    if victim in [int(h) for h in ev["hosts"]]:
        fail("relaunched on the dead host: %s" % ev["hosts"])
    requeue = [e for e in ps.events(job) if e["to"] == "QUEUED" and e.get("from")]
    if not any("host %d failed" % victim in e["reason"] for e in requeue):
        fail("no requeue naming the host: %s" % requeue)
    started(ps, job)
    ok("job requeued and relaunched on hosts %s" % ev["hosts"])
    podctl(ps, "cancel", str(job))
    wait_state(ps, job, ("CANCELLED",))


def test_restart(ps, workers):
    job = ps.submit(probe("through-restart", "--run-seconds", "12", "--progress-every-ms",
                          "300"))
    first = started(ps, job)
    ps.kill9()
    ps.start()
    ok("podsched killed with -9 and restarted while job %d ran" % job)
    j = wait_state(ps, job, ("SUCCEEDED", "FAILED"), 120)
    if j["state"] != "SUCCEEDED":
        fail("ended %s: %s" % (j["state"], j["reason"]))
    placed = placements(ps, job)
    if len(placed) != 1 or int(j["epoch"]) != int(first["epoch"]):
        fail("launched more than once: %s" % placed)
    ok("adopted after the restart, launched once (epoch %s), SUCCEEDED" % j["epoch"])


def main():
    tests = {"success": test_success, "preempt": test_preempt, "grace": test_grace,
             "on_demand": test_on_demand, "agent_loss": test_agent_loss,
             "restart": test_restart}
    with tempfile.TemporaryDirectory(prefix="worker-test-") as work:
        ps, workers = None, {}
        try:
            ps, workers = cluster(work)
            tests[TEST](ps, workers)
            if not ps.alive():
                fail("podsched died")
        except SystemExit:
            for name in sorted(os.listdir(work)):
                if name.endswith((".log", ".err")):
                    print("--- " + name)
                    print(open(os.path.join(work, name)).read()[-3000:])
            raise
        finally:
            for w in workers.values():
                w.stop()
            if ps:
                ps.stop()


main()
