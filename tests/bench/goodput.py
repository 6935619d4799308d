#!/usr/bin/env python3
"""Goodput of a preemptible podtrain job under provider reclaim (tests/bench/goodput.cmake).

A real podsched and real podworkers on 127.0.0.1 (a 2x2-host pod, one v2-32 job of 4 ranks).
The same job runs three times:
  uninterrupted  no preemption;
  grace          preempted every PERIOD s of running (the provider reclaim, scaled down from
                 hours to seconds: `POST /jobs/{id}/preempt`, what `podctl preempt` does) with a
                 grace period long enough for podtrain's SIGTERM checkpoint;
  no-grace       preempted the same way, with a grace period (1 s, the shortest a job spec can
                 ask for) shorter than the checkpoint write (podtrain --write-delay-ms in
                 every run, default 1500): the ranks are SIGKILLed and resume from the last
                 periodic checkpoint.
Figures: useful steps per wall second (submit -> SUCCEEDED) relative to the uninterrupted run,
and work lost per preemption (steps reached in an epoch minus the step the next epoch resumed
from). Every run must still end SUCCEEDED at the reference params_sha256 (nothing lost but time).

  goodput.py BUILD_DIR [--steps N] [--period S] [--step-ms MS] [--checkpoint-every K]
"""

import argparse
import os
import re
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "cluster"))
from podcluster import Binaries, Failure, PodCluster, reference_sha, wait_for  # noqa: E402


def figure(name, value, unit):
    print("FIGURE %s %s %s" % (name, ("%.3f" % value) if isinstance(value, float) else value,
                               unit), flush=True)


def epochs_from_log(text):
    """[(start_step, max_step_reached)] per epoch, in order, from podtrain's output lines."""
    out = []
    for line in text.split("\n"):
        m = re.search(r"restore: (?:no checkpoint|ckpt-\d+-(\d+))", line)
        if m:
            out.append([int(m.group(1) or 0), int(m.group(1) or 0)])
            continue
        m = re.search(r"(?:step=(\d+)/\d+|preempted at step (\d+))", line)
        if m and out:
            out[-1][1] = max(out[-1][1], int(m.group(1) or m.group(2)))
    return out


def run(c, args, grace, period, ref, label):
    t0 = time.time()
    jid = c.submit("v2-32", args, preemptible=True, name="goodput-" + label,
                   grace_period_seconds=grace, max_restarts=100)
    preemptions = 0
    while True:
        j = c.job(jid)
        if j["state"] in ("SUCCEEDED", "FAILED", "CANCELLED", "KILLED"):
            break
        if period and j["state"] == "RUNNING":
            started = time.time()
            epoch = j["epoch"]
            # Reclaim after `period` s of running in this epoch (unless it ends before).
            while time.time() - started < period:
                jj = c.job(jid)
                if jj["state"] != "RUNNING" or jj["epoch"] != epoch:
                    break
                time.sleep(0.2)
            else:
                c.api("POST", "/api/v1/jobs/%d/preempt" % jid, ok=(200, 409))
                preemptions += 1
                wait_for("job %d to leave epoch %d" % (jid, epoch),
                         lambda: (lambda x: x["epoch"] != epoch or x["state"] not in (
                             "RUNNING", "PREEMPTING"))(c.job(jid)), grace + 60)
                continue
        time.sleep(0.2)
    wall = time.time() - t0
    if j["state"] != "SUCCEEDED":
        raise Failure("%s: job %d ended %s: %s\n%s" % (label, jid, j["state"], j.get("reason"),
                                                      c.diagnose(jid)))
    sha = wait_for("params_sha256 of job %d" % jid, lambda: c.params_sha(jid), 30)
    if sha != ref:
        raise Failure("%s: params_sha256 %s differs from the reference %s" % (label, sha, ref))
    preemptions = j.get("preemptions", preemptions)  # the scheduler's count (a reclaim may
    # land while the job is still starting; those count too)
    eps = epochs_from_log(c.log_text(jid))
    lost = [eps[i][1] - eps[i + 1][0] for i in range(len(eps) - 1)]
    reasons = sorted({e.get("reason", "") for e in c.events(jid) if e.get("to") == "QUEUED"
                      and e.get("from")})
    print("%s: job %d, %d preemptions, %.1f s wall, epochs (start, reached) %s, lost %s, "
          "requeue reasons %s" % (label, jid, preemptions, wall, eps, lost, reasons), flush=True)
    return wall, preemptions, lost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--period", type=float, default=20, help="seconds of running between reclaims")
    ap.add_argument("--step-ms", type=int, default=100)
    ap.add_argument("--checkpoint-every", type=int, default=100)
    ap.add_argument("--write-delay-ms", type=int, default=1500,
                    help="simulated checkpoint write time (per shard); the no-grace run's 1 s "
                         "grace must be shorter")
    ap.add_argument("--grace", type=int, default=20)
    o = ap.parse_args()
    # SIGTERM (ctest timeout, kill) unwinds like Ctrl-C, so that `finally` stops the cluster:
    # its agents run in their own sessions and would outlive this process otherwise.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    bins = Binaries(o.build_dir)
    train = ["--steps", str(o.steps), "--global-batch", "64", "--progress-every", "1"]
    args = train + ["--checkpoint-every", str(o.checkpoint_every), "--min-step-ms", str(o.step_ms),
                    "--write-delay-ms", str(o.write_delay_ms)]
    tmp = tempfile.mkdtemp(prefix="podsched-goodput-")
    c = None
    try:
        ref = reference_sha(bins.podtrain, train, os.path.join(tmp, "ref"))
        c = PodCluster(bins, os.path.join(tmp, "cluster"), workers=2, use_netns=False,
                       store="file", base_port=0, heartbeat_timeout_ms=5000)
        c.start()
        base, _, _ = run(c, args, o.grace, 0, ref, "uninterrupted")
        g_wall, g_n, g_lost = run(c, args, o.grace, o.period, ref, "grace")
        n_wall, n_n, n_lost = run(c, args, 1, o.period, ref, "no-grace")
        figure("goodput_uninterrupted_steps_per_s", o.steps / base, "steps/s")
        figure("goodput_grace_steps_per_s", o.steps / g_wall, "steps/s")
        figure("goodput_nograce_steps_per_s", o.steps / n_wall, "steps/s")
        figure("goodput_ratio_grace", base / g_wall, "ratio")
        figure("goodput_ratio_nograce", base / n_wall, "ratio")
        figure("goodput_preemptions_grace", g_n, "count")
        figure("goodput_preemptions_nograce", n_n, "count")
        mean = lambda xs: float(sum(xs)) / len(xs) if xs else 0.0
        figure("goodput_lost_steps_per_preemption_grace", mean(g_lost), "steps")
        figure("goodput_lost_steps_per_preemption_nograce", mean(n_lost), "steps")
        overhead = (g_wall - base) / g_n if g_n else 0.0
        figure("goodput_overhead_s_per_preemption_grace", overhead, "s")
        # Issue 29's goals are per reclaim period: 0.9 with a reclaim every 20 s of running, 0.98
        # with one every hour. A run reclaims every PERIOD s; what a reclaim costs (the grace
        # checkpoint, the restart, the restore: no step is lost) does not grow with the running
        # before it, so at period P the goodput is P / (P + overhead). The hourly figure is that,
        # projected from this run's overhead, not an hour-long run.
        if g_n:
            figure("goodput_ratio_grace_per_period", o.period / (o.period + overhead), "ratio")
            figure("goodput_ratio_grace_hourly_projected", 3600.0 / (3600.0 + overhead), "ratio")
        figure("goodput_overhead_s_per_preemption_nograce",
               (n_wall - base) / n_n if n_n else 0.0, "s")
        if g_n and max(g_lost) != 0:
            raise Failure("the grace-period checkpoint lost work: %s" % g_lost)
        return 0
    except Failure as e:
        print("FAIL: %s" % e, flush=True)
        if c:
            print(c.diagnose(), flush=True)
        return 1
    finally:
        if c:
            c.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
