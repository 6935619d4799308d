#!/usr/bin/python3
"""Bus benchmarks (docs/bench-bus.md). Prints FIGURE lines.

  bus_bench.py --podsched P --podctl C --bench-bus B [--podworker W --podprobe PR] [--smoke]

1. Heartbeats/s podsched sustains: bench_bus load as 128 agents x 2 hosts on a v3 pod of 256
   hosts (the largest pod; a pod cannot hold 1,000 hosts, so the figure to compare with 1,000
   hosts heartbeating once per second is bus_hosts_at_1hz).
2. With real podworkers (one per host of a 2x4 v2 pod) and podprobe: time from `podctl submit`
   to the first rank running (its pid file appears) and from `podctl preempt` to the slice's
   hosts free in /api/v1/pods (or the requeued job placed again on the same hosts, which needs
   them free), for v2-8 and v2-32, median of --runs.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402


def heartbeat_load(args, work):
    ps = Podsched(args.podsched, work, 16, 16, generation="v3", curve=False,  # bench_bus: no keys
                  bus_extra="  heartbeat_timeout_ms: 60000\n")
    try:
        agents, seconds = (8, 0.5) if args.smoke else (128, 10)
        out = subprocess.run([args.bench_bus, "load", "--bus", ps.bus, "--agents", str(agents),
                              "--hosts-per-agent", "2", "--seconds", str(seconds)],
                             capture_output=True, text=True, timeout=300)
        print(out.stdout, end="")
        if out.returncode != 0 or "FIGURE bus_heartbeats_per_s " not in out.stdout:
            fail("bench_bus load: " + out.stderr)
    finally:
        ps.stop()


def lifecycle(args, work):
    ps = Podsched(args.podsched, work, 2, 4,
                  bus_extra="  heartbeat_interval_ms: 500\n  heartbeat_timeout_ms: 5000\n")
    workers = [Worker(args.podworker, ps, work, "h%d" % h, str(h)) for h in range(8)]
    try:
        wait_for(lambda: ps.metrics().get("podsched_agents_connected") == 8, "8 agents", 60)
        runs = 1 if args.smoke else args.runs
        for acc in ("v2-8", "v2-32"):
            to_run, to_free = [], []
            for i in range(runs):
                pid_dir = os.path.join(work, "pids-%s-%d" % (acc, i))
                os.makedirs(pid_dir)
                spec = os.path.join(work, "job-%s-%d.yaml" % (acc, i))
                with open(spec, "w") as f:
                    f.write("name: bench\naccelerator: %s\npreemptible: true\ncommand: %s\n"
                            "args: [--run-seconds, '300', --pid-dir, %s]\n"
                            "grace_period_seconds: 10\n" % (acc, args.podprobe, pid_dir))
                t0 = time.monotonic()
                r = subprocess.run([args.podctl, "--server", ps.url, "--token", ps.token,
                                    "submit", "-f", spec], capture_output=True, text=True)
                if r.returncode != 0:
                    fail("submit: " + r.stderr)
                job = int(r.stdout.strip())

                def rank_started():
                    if os.listdir(pid_dir):
                        return True
                    # A job that ended (e.g. its command could not be run) never starts a rank:
                    # say so now, not after the timeout.
                    j = ps.job(job)
                    if j["state"] in ("FAILED", "CANCELLED", "SUCCEEDED"):
                        fail("job %d ended %s before a rank started: %s" %
                             (job, j["state"], j.get("reason", "")))
                    return False
                wait_for(rank_started, "a rank of job %d" % job, 120, 0.002)
                to_run.append(time.monotonic() - t0)
                first = wait_for(lambda: (lambda j: j.get("hosts") and j)(ps.job(job)), "hosts")
                hosts, epoch = [int(h) for h in first["hosts"]], int(first["epoch"])
                t1 = time.monotonic()
                subprocess.run([args.podctl, "--server", ps.url, "--token", ps.token, "preempt",
                                str(job)], capture_output=True, check=True)

                def free():
                    # The requeued job may be placed again at once, on the same hosts: a new
                    # epoch on them proves the old lease was released too.
                    j = ps.job(job)
                    if int(j["epoch"]) > epoch and sorted(int(h) for h in j["hosts"]) == \
                            sorted(hosts):
                        return True
                    pod = ps.pod()
                    return all(not h["allocated"] for h in pod["hosts"] if int(h["id"]) in hosts)
                wait_for(free, "hosts of job %d free" % job, 120, 0.002)
                to_free.append(time.monotonic() - t1)
                subprocess.run([args.podctl, "--server", ps.url, "--token", ps.token, "cancel",
                                str(job)], capture_output=True)
                wait_for(lambda: ps.job(job)["state"] == "CANCELLED" and all(
                    not h["allocated"] for h in ps.pod()["hosts"]), "job %d cancelled" % job)
            name = acc.replace("-", "_")
            print("submit->first rank %s: %s" % (acc, ["%.3f" % x for x in to_run]))
            print("preempt->hosts free %s: %s" % (acc, ["%.3f" % x for x in to_free]))
            print("FIGURE bus_submit_to_rank_%s_median %.3f s" % (name, statistics.median(to_run)))
            print("FIGURE bus_preempt_to_free_%s_median %.3f s" % (name,
                                                                   statistics.median(to_free)))
    finally:
        for w in workers:
            w.stop()
        ps.stop()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--podsched", required=True)
    p.add_argument("--podctl", required=True)
    p.add_argument("--bench-bus", required=True)
    p.add_argument("--podworker")
    p.add_argument("--podprobe")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args()
    # The job's command runs in the agent's working directory, not this one.
    for name in ("podsched", "podctl", "bench_bus", "podworker", "podprobe"):
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    with tempfile.TemporaryDirectory(prefix="bus-bench-") as work:
        os.makedirs(os.path.join(work, "load"))
        heartbeat_load(args, os.path.join(work, "load"))
        if args.podworker and args.podprobe:
            os.makedirs(os.path.join(work, "life"))
            lifecycle(args, os.path.join(work, "life"))
        else:
            print("(no podworker given: submit/preempt figures skipped)")


main()
