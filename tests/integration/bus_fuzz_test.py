#!/usr/bin/python3
"""Malformed bus messages (random bytes, empty, unknown agent, unknown host, wrong epoch, unknown
job, oversized Log, over ZMQ_MAXMSGSIZE, a scheduler->agent message) sent to a real podsched by a
test client: podsched stays up and counts each in /metrics podsched_bus_dropped_total{reason}.

  bus_fuzz_test.py PODSCHED BENCH_BUS
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, fail, wait_for  # noqa: E402

PODSCHED, BENCH_BUS = sys.argv[1], sys.argv[2]


def dropped(m, reason):
    return m.get('podsched_bus_dropped_total{reason="%s"}' % reason, 0)


def main():
    with tempfile.TemporaryDirectory(prefix="bus-fuzz-") as work:
        ps = Podsched(PODSCHED, work, curve=False)  # bench_bus speaks plain ZeroMQ
        try:
            job = ps.submit({"name": "victim", "accelerator": "v2-32", "command": "/bin/true"})
            before = ps.metrics()
            out = subprocess.run([BENCH_BUS, "fuzz", "--bus", ps.bus, "--host", "0",
                                  "--job", str(job)], capture_output=True, text=True, timeout=60)
            print(out.stdout + out.stderr)
            if out.returncode != 0:
                fail("bench_bus fuzz failed")
            sent = {}
            for line in out.stdout.splitlines():
                if line.startswith("SENT "):
                    _, reason, n = line.split()
                    sent[reason] = int(n)
            if not ps.alive():
                fail("podsched died")
            after = ps.metrics()
            want = {"malformed": sent["malformed"], "unknown_agent": sent["unknown_agent"],
                    "unknown_host": sent["unknown_host"] + sent["unknown_host_exit"],
                    "unknown_job": sent["unknown_job"], "stale_epoch": sent["stale_epoch"],
                    "oversized": sent["oversized"], "invalid": sent["invalid"]}
            for reason, n in want.items():
                got = dropped(after, reason) - dropped(before, reason)
                if got != n:
                    fail("dropped{reason=%s}: %d, want %d" % (reason, got, n))
                print("ok - dropped{reason=%s} = %d" % (reason, got))
            # Still serving: the API answers and the job is untouched.
            state = ps.job(job)["state"]
            if state not in ("QUEUED", "PLACED"):
                fail("the job moved to %s" % state)
            status, _ = ps.call("GET", "/healthz")
            if status != 200:
                fail("healthz %s" % status)
            print("ok - podsched alive, job %d %s" % (job, state))
        finally:
            ps.stop()


main()
