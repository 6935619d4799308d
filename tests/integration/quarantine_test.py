#!/usr/bin/python3
"""Audit M11 with a real podsched and its real SQLite file: one unreadable stored job, or a pod
changed under stored jobs, must not keep podsched from starting.

  quarantine_test.py PODSCHED

1. Two jobs are submitted and one cancelled (CANCELLED: history); podsched stops.
2. The ended job's spec blob is overwritten with bytes that are not a spec (a torn or corrupt
   row). podsched starts, logs the job as quarantined, counts it in
   podsched_jobs_quarantined, serves the other job, and gives the next job a new id.
3. The active job's blob is corrupted too: podsched refuses to start, naming that job (it owes
   that work), and starts again once the row is restored.
4. The pod changes generation (v2 -> v3) with only ended jobs stored: podsched starts, and the
   ended v2 jobs are quarantined rather than refusing the new pod.
"""
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, fail  # noqa: E402
from testlib import ok  # noqa: E402

PODSCHED = sys.argv[1]


def set_spec(ps, job, blob):
    db = sqlite3.connect(os.path.join(ps.data_dir, "podsched.db"))
    before = db.execute("SELECT spec FROM job_specs WHERE id = ?", (job,)).fetchone()[0]
    db.execute("UPDATE job_specs SET spec = ? WHERE id = ?", (blob, job))
    db.commit()
    db.close()
    return before


def start_fails(ps):
    """podsched with ps's configuration must exit non-zero at start; returns its stderr."""
    r = subprocess.run([PODSCHED, "--config", ps.config, "--data-dir", ps.data_dir, "--port", "0"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode == 0:
        fail("podsched started with an unreadable active job")
    return r.stderr


def main():
    with tempfile.TemporaryDirectory(prefix="podsched-quarantine-") as work:
        ps = Podsched(PODSCHED, work)
        try:
            ended = ps.submit({"name": "old", "accelerator": "v2-8", "command": "/bin/true"})
            active = ps.submit({"name": "new", "accelerator": "v2-8", "command": "/bin/true"})
            status, body = ps.call("POST", "/api/v1/jobs/%d/cancel" % ended)
            if status != 200:
                fail("cancel: %d %s" % (status, body))
            ps.stop()
            set_spec(ps, ended, b"\xff\x00 not a spec")
            ps.start()
            if ps.job(active)["state"] != "QUEUED":
                fail("the readable job: %s" % ps.job(active))
            status, _ = ps.call("GET", "/api/v1/jobs/%d" % ended)
            if status != 404:
                fail("the quarantined job is served: %d" % status)
            if ps.metrics().get("podsched_jobs_quarantined") != 1:
                fail("podsched_jobs_quarantined: %s" % ps.metrics().get("podsched_jobs_quarantined"))
            err = open(os.path.join(work, "podsched.err")).read() + open(ps.out_path).read()
            if "job %d left out (quarantined" % ended not in err:
                fail("no log line names the quarantined job: %s" % err[-2000:])
            third = ps.submit({"name": "next", "accelerator": "v2-8", "command": "/bin/true"})
            if third <= active:
                fail("job id %d reused (ids so far up to %d)" % (third, active))
            ok("an unreadable CANCELLED job is quarantined: podsched starts, logs and counts it, "
               "serves job %d, and the next job gets id %d" % (active, third))

            status, _ = ps.call("POST", "/api/v1/jobs/%d/cancel" % third)
            ps.stop()
            good = set_spec(ps, active, b"\xff\x00 not a spec")
            err = start_fails(ps)
            if "job %d" % active not in err:
                fail("the refusal does not name job %d: %s" % (active, err[-2000:]))
            set_spec(ps, active, good)
            ps.start()
            if ps.job(active)["state"] != "QUEUED":
                fail("after the restore: %s" % ps.job(active))
            ok("an unreadable QUEUED job stops the start, naming job %d; restored, it runs on"
               % active)

            status, _ = ps.call("POST", "/api/v1/jobs/%d/cancel" % active)
            ps.stop()
            with open(ps.config) as f:
                text = f.read()
            with open(ps.config, "w") as f:
                f.write(text.replace("generation: v2", "generation: v3"))
            ps.start()
            quarantined = ps.metrics().get("podsched_jobs_quarantined")
            if quarantined != 3:  # the unreadable one and the two ended v2 jobs
                fail("after the pod became v3: %s quarantined" % quarantined)
            ok("a pod changed from v2 to v3 under ended v2 jobs starts; they are quarantined")
        finally:
            ps.stop()


main()
