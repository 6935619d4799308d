#!/usr/bin/python3
"""The audit's H2 against a real podsched, from a peer that does not hold back (bench_bus flood):
one agent sends its job 64 KiB Log messages of empty lines as fast as podsched's socket takes
them, beside seven quiet agents, with a 2 s heartbeat timeout. Before the bus lanes, podsched's
one 64 MiB queue filled within a second and dropped every agent's heartbeats alike: the quiet
hosts went unhealthy. Now: every host stays healthy, the job stays RUNNING in its epoch, the
API answers throughout, and only Log/Progress are dropped ("overloaded", never
"overloaded_control").

  bus_flood_test.py PODSCHED BENCH_BUS
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, fail, wait_for  # noqa: E402
from testlib import ok  # noqa: E402

PODSCHED, BENCH_BUS = sys.argv[1], sys.argv[2]
SECONDS = 12


def dropped(m, reason):
    return m.get('podsched_bus_dropped_total{reason="%s"}' % reason, 0)


def expect_line(proc, want):
    line = proc.stdout.readline().strip()
    if line != want:
        fail("bench_bus said %r, not %s; stderr: %s" % (line, want, proc.stderr.read()))


def main():
    with tempfile.TemporaryDirectory(prefix="bus-flood-") as work:
        ps = Podsched(PODSCHED, work, 2, 4, curve=False,
                      bus_extra="  heartbeat_interval_ms: 300\n  heartbeat_timeout_ms: 2000\n")
        flood = None
        try:
            flood = subprocess.Popen([BENCH_BUS, "flood", "--bus", ps.bus, "--flood-host", "0",
                                      "--quiet-hosts", "7", "--seconds", str(SECONDS),
                                      "--heartbeat-ms", "300"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            expect_line(flood, "READY")
            # Host 0 is the only one with an agent: the job goes there.
            job = ps.submit({"name": "flooded", "accelerator": "v2-8", "command": "/bin/true"})
            expect_line(flood, "FLOODING")
            wait_for(lambda: ps.job(job)["state"] == "RUNNING", "the job RUNNING", 10)
            epoch = ps.job(job)["epoch"]
            polls, unhealthy = 0, []
            while flood.poll() is None:
                t = time.monotonic()
                hosts = ps.pod()["hosts"]
                j = ps.job(job)
                polls += 1
                if time.monotonic() - t > 5:
                    fail("the API took %.1f s to answer during the flood" % (time.monotonic() - t))
                unhealthy += [h["id"] for h in hosts if not h["healthy"]]
                if j["state"] != "RUNNING" or j["epoch"] != epoch:
                    fail("the job during the flood: %s %s epoch %s" % (j["state"], j["reason"],
                                                                       j["epoch"]))
                time.sleep(0.5)
            out, err = flood.communicate(timeout=30)
            if flood.returncode != 0:
                fail("bench_bus flood: %s" % err)
            sent = dict((l.split()[1], int(l.split()[2])) for l in out.splitlines()
                        if l.startswith("SENT "))
            if unhealthy:
                fail("hosts unhealthy during the flood: %s" % sorted(set(unhealthy)))
            m = ps.metrics()
            if dropped(m, "overloaded_control") != 0:
                fail("control messages dropped: %s" % dropped(m, "overloaded_control"))
            if dropped(m, "overloaded") == 0:
                fail("the flood (%d Log messages) never passed its budget: no test of the lanes"
                     % sent["log"])
            if m.get("podsched_agents_connected") != 8:
                fail("agents connected: %s" % m.get("podsched_agents_connected"))
            ok("%d Log messages of 64 KiB in %d s, %d dropped as overloaded; %d heartbeats, none "
               "dropped; %d API polls answered; all 8 hosts healthy throughout, job %d RUNNING "
               "in epoch %s" % (sent["log"], SECONDS, dropped(m, "overloaded"),
                                sent["heartbeat"], polls, job, epoch))
            if not ps.alive():
                fail("podsched died")
        finally:
            if flood and flood.poll() is None:
                flood.kill()
            ps.stop()


main()
