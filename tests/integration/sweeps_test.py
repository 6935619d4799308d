#!/usr/bin/python3
"""Job arrays and dependencies end to end (tests/integration/worker.cmake): a real podsched, one
real podworker per host of a 2x4 v2 pod, jobs under real mpirun, submitted with podctl.

  sweeps_test.py PODSCHED PODCTL PODWORKER

- an array of 6 with %2 throttle: every task SUCCEEDS, sees POD_ARRAY_ID / POD_ARRAY_INDEX, and
  the job events never show more than 2 tasks holding hosts at once;
- a failing parent: its afterok child ends CANCELLED with the reason (never placed), its
  afternotok child runs;
- cancel of one task (ARRAYID_INDEX) and of a whole array;
- kill -9 and restart of podsched: a waiting dependency and an array's throttle survive;
- bad input is refused by podctl or the server with a clear error.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402
from testlib import ok, print_logs, run_podctl  # noqa: E402

PODSCHED, PODCTL, PODWORKER = sys.argv[1:4]
HOLDING = ("PLACED", "STARTING", "RUNNING", "PREEMPTING")
ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")


def podctl(ps, *args, expect=0):
    return run_podctl(PODCTL, ps, *args, expect=expect)


def tasks(ps, array):
    return ps.get("/api/v1/jobs?page_size=500&array=%d" % array)["jobs"]


def wait_ended(ps, jobs, timeout=180):
    return wait_for(lambda: all(ps.job(j)["state"] in ENDED for j in jobs) and
                    [ps.job(j) for j in jobs], "jobs %s to end" % jobs, timeout)


def most_holding_at_once(ps, jobs):
    """Replays the jobs' transitions in commit order: the most that held hosts at once."""
    events = sorted((int(e["seq"]), e) for j in jobs for e in ps.events(j))
    holding, most = set(), 0
    for _, e in events:
        if e["to"] in HOLDING:
            holding.add(e["job_id"])
        else:
            holding.discard(e["job_id"])
        most = max(most, len(holding))
    return most


def test_throttled_array(ps):
    out = podctl(ps, "submit", "--parsable", "--accelerator", "v2-8", "--array", "0-5%2",
                 "--env", "SWEEP=lr", "--name", "sweep", "--",
                 "/bin/sh", "-c", "echo task=$POD_ARRAY_ID/$POD_ARRAY_INDEX sweep=$SWEEP; sleep 1")
    array = int(out.stdout.strip())  # --parsable: the id alone
    listed = tasks(ps, array)
    if [t["array_index"] for t in listed] != [0, 1, 2, 3, 4, 5]:
        fail("array tasks: %s" % listed)
    ids = [int(t["id"]) for t in listed]
    # podctl wait follows a task named ARRAYID_INDEX on the live stream until it ends.
    podctl(ps, "wait", "-q", "%d_5" % array)
    ok("podctl wait %d_5 returned 0 when the last task SUCCEEDED" % array)
    ended = wait_ended(ps, ids)
    bad = [(j["task_name"], j["state"], j["reason"]) for j in ended if j["state"] != "SUCCEEDED"]
    if bad:
        fail("tasks did not succeed: %s" % bad)
    ok("an array of 6 with %%2: every task SUCCEEDED (%s_0 .. %s_5)" % (array, array))
    most = most_holding_at_once(ps, ids)
    if most > 2:
        fail("%d tasks held hosts at once (throttle 2)" % most)
    # 8 free hosts: without the throttle all 6 would have started together.
    ok("never more than 2 tasks held hosts at once (at most %d, from the events)" % most)
    logs = wait_for(lambda: (lambda r: "task=" in r.stdout and r.stdout)(
        podctl(ps, "logs", "%d_4" % array)), "task 4's output", 30)
    if "task=%d/4 sweep=lr" % array not in logs:
        fail("task 4 did not get its POD_ARRAY_ID/POD_ARRAY_INDEX and --env: %r" % logs)
    ok("task %d_4 saw POD_ARRAY_ID=%d POD_ARRAY_INDEX=4 and --env SWEEP" % (array, array))
    describe = podctl(ps, "describe", "%d_4" % array).stdout
    if "6 SUCCEEDED" not in describe or "at most 2 at once" not in describe:
        fail("describe of a task shows no array progress:\n" + describe)
    ok("podctl describe ARRAYID_INDEX shows the array's progress")


def test_failing_parent(ps, work):
    spec = os.path.join(work, "parent.yaml")
    with open(spec, "w") as f:
        f.write("name: parent\naccelerator: v2-8\nmax_restarts: 0\n"
                "command: [/bin/sh, -c, 'sleep 3; exit 3']\n")
    parent = int(podctl(ps, "submit", "--parsable", "-f", spec).stdout)
    after_ok = int(podctl(ps, "submit", "--parsable", "--accelerator", "v2-8", "--dependency",
                          "afterok:%d" % parent, "--", "/bin/true").stdout)
    after_not_ok = int(podctl(ps, "submit", "--parsable", "--accelerator", "v2-8",
                              "-d", "afternotok:%d" % parent, "--", "/bin/true").stdout)
    waiting = ps.job(after_ok)
    if waiting["state"] != "QUEUED" or not waiting["reason"].startswith(
            "waiting for afterok:%d (" % parent):
        fail("the afterok child does not wait for its parent: %s %s" %
             (waiting["state"], waiting["reason"]))
    ok("the afterok child waits: %s" % waiting["reason"])
    wait_ended(ps, [parent, after_ok, after_not_ok])
    p, child, other = ps.job(parent), ps.job(after_ok), ps.job(after_not_ok)
    if p["state"] != "FAILED":
        fail("the parent ended %s: %s" % (p["state"], p["reason"]))
    want = "dependency never satisfied: job %d ended FAILED (afterok)" % parent
    if child["state"] != "CANCELLED" or child["reason"] != want:
        fail("the afterok child: %s %r (want CANCELLED %r)" % (child["state"], child["reason"],
                                                              want))
    if any(e["to"] == "PLACED" for e in ps.events(after_ok)):
        fail("the afterok child was placed")
    ok("the parent FAILED; its afterok child ended CANCELLED: %s" % child["reason"])
    if other["state"] != "SUCCEEDED":
        fail("the afternotok child: %s %s" % (other["state"], other["reason"]))
    ok("its afternotok child ran and SUCCEEDED")
    deps = child.get("dependencies", [])
    if not deps or deps[0]["verdict"] != "never" or deps[0]["target_state"] != "FAILED":
        fail("the job's dependencies in the API: %s" % deps)
    ok("GET /api/v1/jobs/%d shows the dependency and its state" % after_ok)


def test_cancel_array(ps):
    array = int(podctl(ps, "submit", "--parsable", "--accelerator", "v2-8", "-a", "0-3",
                       "--", "/bin/sh", "-c", "sleep 120").stdout)
    ids = [int(t["id"]) for t in tasks(ps, array)]
    wait_for(lambda: all(ps.job(j)["state"] in ("STARTING", "RUNNING") for j in ids),
             "4 tasks running", 60)
    podctl(ps, "cancel", "%d_3" % array)
    wait_ended(ps, [ids[3]], 60)
    if ps.job(ids[3])["state"] != "CANCELLED" or ps.job(ids[0])["state"] in ENDED:
        fail("cancel %d_3 cancelled more or less than task 3" % array)
    ok("podctl cancel %d_3 cancelled that task only" % array)
    out = podctl(ps, "cancel", str(array)).stdout
    if "cancel sent to every task of array" not in out:
        fail("podctl cancel ARRAY: %s" % out)
    ended = wait_ended(ps, ids, 60)
    if any(j["state"] != "CANCELLED" for j in ended):
        fail("after cancel of the array: %s" % [(j["task_name"], j["state"]) for j in ended])
    ok("podctl cancel %d cancelled every task of the array" % array)


def test_restart(ps):
    """kill -9 of podsched while a child waits for its parent and a %1 array is half done: the
    dependency and the throttle come back from the store."""
    parent = int(podctl(ps, "submit", "--parsable", "--accelerator", "v2-8", "--",
                        "/bin/sh", "-c", "sleep 6").stdout)
    child = int(podctl(ps, "submit", "--parsable", "--accelerator", "v2-8", "--dependency",
                       "afterok:%d" % parent, "--", "/bin/true").stdout)
    array = int(podctl(ps, "submit", "--parsable", "--accelerator", "v2-8", "--array", "0-2%1",
                       "--", "/bin/sh", "-c", "sleep 2").stdout)
    ids = [int(t["id"]) for t in tasks(ps, array)]
    wait_for(lambda: ps.job(parent)["state"] in ("STARTING", "RUNNING"), "the parent to run", 60)
    ps.kill9()
    ps.start()
    waiting = ps.job(child)
    if waiting["state"] != "QUEUED" or "afterok:%d" % parent not in waiting["reason"]:
        fail("after the restart the child does not wait: %s %s" % (waiting["state"],
                                                                   waiting["reason"]))
    ok("after kill -9 and restart the child still waits: %s" % waiting["reason"])
    ended = wait_ended(ps, [parent, child] + ids)
    bad = [(j["task_name"], j["state"], j["reason"]) for j in ended if j["state"] != "SUCCEEDED"]
    if bad:
        fail("after the restart: %s" % bad)
    child_placed = min(int(e["seq"]) for e in ps.events(child) if e["to"] == "PLACED")
    parent_done = max(int(e["seq"]) for e in ps.events(parent) if e["to"] == "SUCCEEDED")
    if child_placed < parent_done:
        fail("the child was placed before its parent succeeded")
    most = most_holding_at_once(ps, ids)
    if most > 1:
        fail("%d tasks of a %%1 array held hosts at once across the restart" % most)
    ok("the child ran after its parent; the %%1 array never ran two tasks at once (at most %d)"
       % most)


def test_bad_input(ps):
    cases = [
        (["--array", "0-20000"], 2, "more than 10000 tasks"),
        (["--array", "3-1"], 2, "backwards"),
        (["--dependency", "afterok:99999"], 5, "has no job 99999"),
        (["--dependency", "before:1"], 2, "not a dependency type"),
        (["--env", "RANK=3"], 2, "RANK"),
        (["--time", "soon"], 2, "--time"),
    ]
    before = ps.get("/api/v1/jobs?page_size=1")["total"]
    for flags, code, message in cases:
        r = podctl(ps, "submit", "--accelerator", "v2-8", *flags, "--", "/bin/true", expect=code)
        if message not in r.stderr:
            fail("podctl submit %s: %r lacks %r" % (flags, r.stderr, message))
    status, body = ps.call("POST", "/api/v1/jobs", {"name": "x", "accelerator": "v2-8",
                                                    "command": "/bin/true",
                                                    "env": {"POD_JOB_ID": "1"}})
    if status != 400 or "env POD_JOB_ID" not in body:
        fail("a spec overriding POD_JOB_ID: %s %s" % (status, body))
    if ps.get("/api/v1/jobs?page_size=1")["total"] != before:
        fail("a refused submission stored a job")
    ok("bad arrays, dependencies, env names and times are refused with clear errors")


def main():
    with tempfile.TemporaryDirectory(prefix="sweeps-test-") as work:
        ps, workers = None, {}
        try:
            ps = Podsched(PODSCHED, work, 2, 4,
                          bus_extra="  heartbeat_interval_ms: 300\n  heartbeat_timeout_ms: 10000\n"
                                    "  reconcile_timeout_ms: 10000\n")
            workers = {h: Worker(PODWORKER, ps, work, "h%d" % h, str(h)) for h in range(8)}
            wait_for(lambda: ps.metrics().get("podsched_agents_connected") == 8, "8 agents", 60)
            wait_for(lambda: all(h["healthy"] for h in ps.pod()["hosts"]), "8 healthy hosts", 30)
            test_bad_input(ps)
            test_throttled_array(ps)
            test_failing_parent(ps, work)
            test_cancel_array(ps)
            test_restart(ps)
            if not ps.alive():
                fail("podsched died")
        except SystemExit:
            try:
                for j in ps.get("/api/v1/jobs?page_size=500").get("jobs", []):
                    print("job", j["task_name"], j["state"], j["reason"])
                    for e in ps.events(int(j["id"])):
                        print("   ", e["seq"], e["from"], "->", e["to"], e["reason"])
            except BaseException:  # diagnostics only
                pass
            print_logs(work)
            raise
        finally:
            for w in workers.values():
                w.stop()
            if ps:
                ps.stop()


main()
