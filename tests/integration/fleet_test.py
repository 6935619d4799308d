#!/usr/bin/python3
"""A fleet end to end (issue 28): one podsched, real podworkers and real mpirun on a fleet
shaped like the research grant, scaled to this machine (tests/integration/worker.cmake).

  fleet_test.py PODSCHED PODCTL PODWORKER PODPROBE

The fleet: two v2 pods "a" and "b" of 2x2 hosts (zones us-central1-a and -b), two standalone
v2-8 devices "pre-0" and "pre-1" (us-central1-f) and a v3 pod "v3" of 2x1 hosts
(europe-west4-a). One agent per pod or device, each naming its hosts by its pod's own ids (both
devices' agents serve "host 0"), each enrolled for its pod.

  1. every host of the fleet registers; `podctl fleet` lists the five pods with their zones;
  2. preemptible v2-8s go to the devices first, one each (best fit across pods), with
     POD_HOSTS 0 and POD_SLICE naming the device;
  3. four more fill pod a, then four more pod b, all RUNNING;
  4. an on-demand v2-32 preempts across pods by least lost work: pod b's four (started last),
     not pod a's nor the devices'; it runs on pod b;
  5. a v3-8 runs on the v3 pod;
  6. an agent naming a pod the fleet does not have is refused (podsched_bus_dropped_total
     {reason="unknown_pod"}), and its host stays with no agent.
Every wait polls a condition with a deadline.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402
from testlib import ok, print_logs, run_podctl  # noqa: E402

PODSCHED, PODCTL, PODWORKER, PODPROBE = sys.argv[1:5]
FLEET = ("\n"
         "  - {name: a, generation: v2, host_rows: 2, host_cols: 2, zone: us-central1-a}\n"
         "  - {name: b, generation: v2, host_rows: 2, host_cols: 2, zone: us-central1-b}\n"
         "  - {name: pre, generation: v2, host_rows: 1, host_cols: 1, count: 2, zone: us-central1-f}\n"
         "  - {name: v3, generation: v3, host_rows: 2, host_cols: 1, zone: europe-west4-a}")
AGENTS = {"a": "0-3", "b": "0-3", "pre-0": "0", "pre-1": "0", "v3": "0-1"}
BUS = "  heartbeat_interval_ms: 300\n  heartbeat_timeout_ms: 10000\n"


def probe(name, accelerator="v2-8", preemptible=True):
    return {"name": name, "accelerator": accelerator, "preemptible": preemptible,
            # No progress reports: podprobe's carry a checkpoint each, and the lost work the
            # preemption compares must be the time since each job started.
            "command": PODPROBE, "args": ["--run-seconds", "240"],
            "grace_period_seconds": 10, "max_restarts": 5}


def running(ps, jobs):
    return wait_for(lambda: all(ps.job(j)["state"] == "RUNNING" for j in jobs) and
                    [ps.job(j) for j in jobs], "jobs %s to be RUNNING" % jobs, 180)


def pod_hosts(ps, job):
    """(pod, hosts by the pod's own ids) of a placed job, as the API shows them."""
    j = ps.job(job)
    return j["pod"], [int(h) for h in j.get("hosts", [])]


def main():
    work = tempfile.mkdtemp(prefix="podsched-fleet-")
    ps = None
    try:
        ps = Podsched(PODSCHED, work, pods=FLEET, bus_extra=BUS)
        workers = [Worker(PODWORKER, ps, work, "agent-" + pod, hosts, pod=pod)
                   for pod, hosts in AGENTS.items()]
        total = 4 + 4 + 1 + 1 + 2

        def healthy():
            pods = ps.get("/api/v1/pods")["pods"]
            return sum(1 for p in pods for h in p["hosts"] if h.get("healthy")) == total and pods
        pods = wait_for(healthy, "every host of the fleet to register", 90)
        names = [(p["name"], p.get("zone", "")) for p in pods]
        if names != [("a", "us-central1-a"), ("b", "us-central1-b"), ("pre-0", "us-central1-f"),
                     ("pre-1", "us-central1-f"), ("v3", "europe-west4-a")]:
            fail("the fleet's pods: %s" % names)
        table = run_podctl(PODCTL, ps, "fleet").stdout
        if "total (5 pods)" not in table or "us-central1-f" not in table:
            fail("podctl fleet:\n" + table)
        ok("12 hosts of 5 pods registered by 5 agents; podctl fleet lists them with zones")

        # 2. Devices first: a v2-8 does not break a pod while a device is free.
        on_devices = [ps.submit(probe("dev-%d" % i)) for i in range(2)]
        running(ps, on_devices)
        where = sorted(pod_hosts(ps, j) for j in on_devices)
        if where != [("pre-0", [0]), ("pre-1", [0])]:
            fail("preemptible v2-8s on devices: %s" % where)
        for j in on_devices:  # what the ranks were told: the device's own host 0
            wait_for(lambda: "hosts=0\n" in run_podctl(PODCTL, ps, "logs", str(j)).stdout,
                     "job %d's podprobe to print POD_HOSTS=0" % j, 60)
        ok("two preemptible v2-8s spread over the two devices, each on its host 0 (POD_HOSTS=0)")

        # 3. Pod a, then pod b (b's jobs start strictly later: they lose less work).
        in_a = [ps.submit(probe("a-%d" % i)) for i in range(4)]
        running(ps, in_a)
        in_b = [ps.submit(probe("b-%d" % i)) for i in range(4)]
        running(ps, in_b)
        for group, pod in ((in_a, "a"), (in_b, "b")):
            got = sorted(pod_hosts(ps, j) for j in group)
            if got != [(pod, [h]) for h in range(4)]:
                fail("jobs meant for pod %s: %s" % (pod, got))
        ok("four v2-8s fill pod a, four more pod b (hosts 0-3 of each)")

        # 4. An on-demand v2-32 fits only a v2 pod, both full of preemptible work.
        big = ps.submit(probe("big", accelerator="v2-32", preemptible=False))
        j = running(ps, [big])[0]
        if j["pod"] != "b" or sorted(int(h) for h in j["hosts"]) != [0, 1, 2, 3]:
            fail("the on-demand v2-32 runs on %s %s, not pod b" % (j["pod"], j["hosts"]))
        preempted = [x for x in in_a + in_b + on_devices
                     if any(e["to"] == "PREEMPTING" for e in ps.events(x))]
        if sorted(preempted) != sorted(in_b):
            fail("preempted %s; expected pod b's %s" % (preempted, in_b))
        for x in in_a + on_devices:
            if ps.job(x)["state"] != "RUNNING" or int(ps.job(x)["epoch"]) != 1:
                fail("job %d was disturbed: %s" % (x, ps.job(x)))
        reason = next(e for e in ps.events(in_b[0]) if e["to"] == "PREEMPTING")["reason"]
        ok("the on-demand v2-32 preempted pod b's four (least lost work), not pod a's nor the "
           "devices' (%s)" % reason)

        # 5. A v3 type runs on the v3 pod only.
        v3 = ps.submit(probe("v3", accelerator="v3-8", preemptible=False))
        j = running(ps, [v3])[0]
        if j["pod"] != "v3":
            fail("the v3-8 runs on %s" % j["pod"])
        ok("a v3-8 runs on the v3 pod")

        # 6. An agent of a pod the fleet does not have: refused, counted, nothing registered.
        stray = Worker(PODWORKER, ps, work, "agent-stray", "0", pod="nope", enrolled_pod="a")
        workers.append(stray)
        wait_for(lambda: ps.metrics().get('podsched_bus_dropped_total{reason="unknown_pod"}', 0)
                 >= 1, "the stray agent's Register to be dropped as unknown_pod", 30)
        if int(ps.metrics().get("podsched_agents_connected", 0)) != len(AGENTS):
            fail("the stray agent was admitted")
        ok("an agent naming pod 'nope' is refused (unknown_pod)")

        for x in in_a + in_b + on_devices + [big, v3]:
            run_podctl(PODCTL, ps, "cancel", str(x), expect=None)
        for x in in_a + in_b + on_devices + [big, v3]:
            wait_for(lambda: ps.job(x)["state"] in ("CANCELLED", "SUCCEEDED", "FAILED"),
                     "job %d to end" % x, 120)
        ok("every job ended")
        for w in workers:
            w.stop()
        ps.stop()
        print("fleet_test: PASS")
    except BaseException:
        print_logs(work)
        raise


if __name__ == "__main__":
    main()
