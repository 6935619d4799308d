#!/usr/bin/python3
"""Multislice jobs and zones end to end (issue 28, stages 2 and 3): one podsched, real podworkers
and real mpirun.

  multislice_test.py PODSCHED PODCTL PODWORKER PODTRAIN

The fleet: v2 pods "a" and "b" of 2x2 hosts in zone us-central1-a, and a v2-8 device "dev" in
us-central1-f. One agent per pod, each naming its hosts by its pod's own ids: pods a and b both
have hosts 0-3, which only the Launch's fleet ids tell apart (bus.proto).

  1. a job of 3 slices of v2-32 is refused: one zone holds 2;
  2. `podctl submit --slices 2` of podtrain (launcher mpi, 2 slices of v2-32, one MPI world of 8
     ranks across both pods) runs with its slices in pods a and b, and ends with parameters
     bit-identical to a single-process run;
  3. an exec job of 2 slices: each rank is told its slice (MEGASCALE_SLICE_ID, POD_SLICE_ID),
     the slice count and its pod's own host id (POD_HOST);
  4. a fault: the agent of the second slice is killed (kill -9) while podtrain runs; the job
     requeues whole (no slice left running), without a restart charged (the host failed, not
     the job) and, once the agent is back, resumes from its checkpoint and ends bit-identical
     to the single-process run;
  5. zones with checkpoint stores of their own: a preemptible podtrain starts on the device (zone
     us-central1-f) and checkpoints into that zone's store; an on-demand job for the device
     preempts it; it resumes in pods a/b (us-central1-a) from the same store, ends bit-identical,
     and is billed egress for the checkpoints that crossed zones (API, podctl describe).
Every wait polls a condition with a deadline.
"""
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "cluster"))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402
from podcluster import reference_sha  # noqa: E402
from testlib import ok, print_logs, run_podctl  # noqa: E402

PODSCHED, PODCTL, PODWORKER, PODTRAIN = sys.argv[1:5]
FLEET = ("\n"
         "  - {name: a, generation: v2, host_rows: 2, host_cols: 2, zone: us-central1-a}\n"
         "  - {name: b, generation: v2, host_rows: 2, host_cols: 2, zone: us-central1-a}\n"
         "  - {name: dev, generation: v2, host_rows: 1, host_cols: 1, zone: us-central1-f}")
AGENTS = {"a": "0-3", "b": "0-3", "dev": "0"}
BUS = "  heartbeat_interval_ms: 300\n  heartbeat_timeout_ms: 3000\n"
TRAIN = ["--steps", "120", "--global-batch", "64", "--progress-every", "10"]
RUN = TRAIN + ["--checkpoint-every", "20"]
TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}


def log_text(ps, job):
    lines = ps.get("/api/v1/jobs/%d/logs?since=0" % job).get("lines", [])
    return "\n".join(line.get("text", "") for line in lines)


def wait_state(ps, job, state, timeout=240):
    j = wait_for(lambda: (lambda j: j if j["state"] in TERMINAL | {state} else None)(ps.job(job)),
                 "job %d to be %s" % (job, state), timeout)
    if j["state"] != state:
        fail("job %d is %s (%s), not %s\n%s" % (job, j["state"], j.get("reason"), state,
                                              log_text(ps, job)[-3000:]))
    return j


def slices_of(j):
    """[(pod, hosts)] of every slice of a job holding hosts, as the API shows them."""
    out = [(j.get("pod"), [int(h) for h in j.get("hosts", [])])]
    for s in j.get("more_slices", []):
        out.append((s.get("pod"), [int(h) for h in s.get("hosts", [])]))
    return out


def check_identical(ps, job, ref, what):
    sha = wait_for(lambda: re.findall(r"params_sha256=([0-9a-f]{64})", log_text(ps, job)),
                   "params_sha256 in the output of job %d" % job, 30)[-1]
    if sha != ref:
        fail("%s: params_sha256 %s differs from the single-process run %s" % (what, sha, ref))


def zone_stores(ps, previous, ref, stores):
    """5. A job keeps its first zone's store and pays for checkpoints crossing zones."""
    wait_for(lambda: workers_healthy(ps), "every host healthy again", 60)
    job = ps.submit({"name": "zoned", "accelerator": "v2-8", "preemptible": True,
                     "command": PODTRAIN, "args": RUN + ["--min-step-ms", "100"]})
    j = wait_state(ps, job, "RUNNING")
    if j.get("pod") != "dev" or j.get("checkpoint_zone") != "us-central1-f":
        fail("job %d runs on %s with its store in zone %r (want dev, us-central1-f): %s" %
             (job, j.get("pod"), j.get("checkpoint_zone"), j))
    home = "file://" + stores["us-central1-f"] + "/users/admin"
    if j.get("checkpoint_store") != home:
        fail("job %d's store is %r, not %r" % (job, j.get("checkpoint_store"), home))
    j = wait_for(lambda: (lambda j: j if int(j.get("last_checkpoint_step", 0)) >= 20 and
                          int(j.get("checkpoint_bytes", 0)) > 0 else None)(ps.job(job)),
                 "job %d to commit a checkpoint and report its size" % job, 120)
    size = int(j["checkpoint_bytes"])
    if int(j.get("egress_bytes", 0)) != 0:
        fail("job %d is billed egress in its own zone: %s" % (job, j))
    # An on-demand job for the device preempts it; it resumes in zone us-central1-a.
    blocker = ps.submit({"name": "od-dev", "accelerator": "v2-8", "pod": "dev",
                         "command": "/bin/sleep", "args": ["600"]})
    j = wait_for(lambda: (lambda j: j if j["state"] == "RUNNING" and j.get("pod") in ("a", "b")
                          else None)(ps.job(job)), "job %d to resume in pod a or b" % job, 120)
    if j.get("checkpoint_store") != home or int(j.get("egress_bytes", 0)) < size:
        fail("job %d resumed in %s: store %r, egress %s bytes (want its home store and at least "
             "its checkpoint's %d)" % (job, j.get("pod"), j.get("checkpoint_store"),
                                       j.get("egress_bytes"), size))
    ok("job %d (checkpoint of %d bytes) resumed in pod %s, reading from zone us-central1-f" %
       (job, size, j.get("pod")))
    j = wait_state(ps, job, "SUCCEEDED", 240)
    ps.call("POST", "/api/v1/jobs/%d/cancel" % blocker, {})
    check_identical(ps, job, ref, "podtrain resumed in another zone")
    restored = re.findall(r"restore:.*?ckpt-\d+-(\d+)", log_text(ps, job))
    if not restored or int(restored[-1]) < 20:
        fail("job %d did not resume from its checkpoint: %s" % (job, restored))
    # Every checkpoint is in the home store; the other zone's store has none of this job's.
    away = os.path.join(stores["us-central1-a"], "users", "admin", str(job))
    if os.path.exists(away) or not os.path.isdir(
            os.path.join(stores["us-central1-f"], "users", "admin", str(job))):
        fail("job %d's checkpoints are not (only) in its home store: %s" %
             (job, [os.listdir(d) for d in stores.values() if os.path.isdir(d)]))
    egress, usd = int(j["egress_bytes"]), float(j["egress_usd"])
    # The read at the resume and every checkpoint written from the other zone, each its size
    # (the same world, the same size); between zones of one region, $0.01/GB.
    if egress < size or egress % size != 0:
        fail("job %d: egress %d bytes for checkpoints of %d" % (job, egress, size))
    if abs(usd - egress / 2.0**30 * 0.01) > 1e-9 or float(j["cost_usd"]) < usd:
        fail("job %d: egress $%s for %d bytes, cost $%s" % (job, usd, egress, j["cost_usd"]))
    described = run_podctl(PODCTL, ps, "describe", str(job)).stdout
    if "egress" not in described or "(zone us-central1-f)" not in described:
        fail("podctl describe %d:\n%s" % (job, described))
    # Per user: the sum of what its jobs were billed (only this job crossed zones).
    mine = [q for q in ps.get("/api/v1/quotas")["quotas"] if q["user"] == "admin"]
    if not mine or abs(float(mine[0].get("egress_usd", 0)) - usd) > 1e-12:
        fail("the user's egress %s, not the job's $%s" % (mine, usd))
    if "EGRESS" not in run_podctl(PODCTL, ps, "quota").stdout:
        fail("podctl quota shows no egress")
    ok("job %d SUCCEEDED bit-identical from step %s; %d bytes crossed zones, $%.8f of its $%.4f"
       % (job, restored[-1], egress, usd, float(j["cost_usd"])))


def workers_healthy(ps):
    pods = ps.get("/api/v1/pods")["pods"]
    return sum(1 for p in pods for h in p["hosts"] if h.get("healthy")) == 9


def main():
    work = tempfile.mkdtemp(prefix="podsched-multislice-")
    ps = None
    workers = {}
    try:
        ref = reference_sha(PODTRAIN, TRAIN, os.path.join(work, "ref"))
        # 2 slices of v2-32 are 64 cores: more than the default quota.
        stores = {z: os.path.join(work, "var", "objects", "store-" + z)
                  for z in ("us-central1-a", "us-central1-f")}
        zones = "zones:\n" + "".join("  %s: {checkpoint_url: \"file://%s\"}\n" % (z, d)
                                     for z, d in stores.items())
        ps = Podsched(PODSCHED, work, pods=FLEET, bus_extra=BUS,
                      scheduler=", default_quota: {on_demand_cores: 128, preemptible_cores: 128}",
                      extra=zones)
        workers = {pod: Worker(PODWORKER, ps, work, "agent-" + pod, hosts, pod=pod)
                   for pod, hosts in AGENTS.items()}

        def healthy():
            pods = ps.get("/api/v1/pods")["pods"]
            return sum(1 for p in pods for h in p["hosts"] if h.get("healthy")) == 9
        wait_for(healthy, "every host of the fleet to register", 90)

        # 1. More slices than one zone holds: refused, naming the numbers.
        status, body = ps.call("POST", "/api/v1/jobs", {
            "name": "too-many", "accelerator": "v2-32", "slices": 3, "command": PODTRAIN})
        if status != 400 or "slices is 3" not in str(body):
            fail("3 slices of v2-32: %s %s" % (status, body))
        ok("3 slices of v2-32 refused: %s" % str(body)[:160])

        # 2. podtrain on 2 slices, one MPI world across pods a and b.
        r = run_podctl(PODCTL, ps, "submit", "--accelerator", "v2-32", "--slices", "2",
                       "--parsable", "--name", "ms-train", "--", PODTRAIN, *RUN)
        job = int(r.stdout.strip())
        j = wait_state(ps, job, "RUNNING")
        placed = slices_of(j)
        if sorted(p for p, _ in placed) != ["a", "b"] or any(h != [0, 1, 2, 3] for _, h in placed):
            fail("the slices of job %d: %s" % (job, placed))
        ok("job %d runs on 2 slices: %s" % (job, placed))
        ev = [e for e in ps.events(job) if e.get("to") == "PLACED"][-1]
        named = [(ev.get("pod"), [int(h) for h in ev.get("hosts", [])])] + [
            (s.get("pod"), [int(h) for h in s.get("hosts", [])]) for s in ev.get("more_slices", [])]
        if named != placed:
            fail("the PLACED event of job %d names %s, not its slices %s" % (job, named, placed))
        described = run_podctl(PODCTL, ps, "describe", str(job)).stdout
        if "x 2 slices" not in described or described.count("hosts 0 1 2 3") != 2:
            fail("podctl describe %d:\n%s" % (job, described))
        wait_state(ps, job, "SUCCEEDED")
        check_identical(ps, job, ref, "2-slice podtrain")
        ok("job %d (2 slices x 4 hosts, 8 ranks, mpirun) SUCCEEDED bit-identical to one process"
           % job)

        # 3. exec: each rank's slice, count and pod host id.
        show = ("echo ms rank=$RANK slice=$MEGASCALE_SLICE_ID pod_slice=$POD_SLICE_ID "
                "slices=$MEGASCALE_NUM_SLICES host=$POD_HOST")
        job = ps.submit({"name": "ms-env", "accelerator": "v2-32", "slices": 2,
                         "launcher": "exec", "command": "/bin/sh", "args": ["-c", show]})
        j = wait_state(ps, job, "SUCCEEDED")
        seen = {}
        for m in re.finditer(r"ms rank=(\d) slice=(\d) pod_slice=(\d) slices=(\d) host=(\d)",
                             log_text(ps, job)):
            seen[int(m.group(1))] = m.groups()[1:]
        want = {r: (str(r // 4), str(r // 4), "2", str(r % 4)) for r in range(8)}
        if seen != want:
            fail("exec ranks of job %d: %s, want %s\n%s" % (job, seen, want, log_text(ps, job)))
        ok("exec job %d: ranks 0-3 in slice 0, 4-7 in slice 1, each with its pod's host id" % job)

        # 4. kill -9 the second slice's agent mid-run: the job requeues whole, then resumes.
        job = ps.submit({"name": "ms-fault", "accelerator": "v2-32", "slices": 2,
                         "command": PODTRAIN, "args": RUN + ["--min-step-ms", "100"],
                         "max_restarts": 5})
        j = wait_state(ps, job, "RUNNING")
        wait_for(lambda: int(ps.job(job).get("last_checkpoint_step", 0)) >= 20,
                 "job %d to commit a checkpoint" % job, 120)
        second = slices_of(ps.job(job))[1][0]
        epoch = int(ps.job(job)["epoch"])
        workers[second].kill9()
        requeued = wait_for(lambda: (lambda j: j if j["state"] == "QUEUED" or
                                     int(j["epoch"]) > epoch else None)(ps.job(job)),
                            "job %d to requeue after its agent died" % job, 60)
        ok("agent of pod %s killed: job %d requeued (%s)" % (second, job, requeued.get("reason")))
        workers[second].start()
        wait_state(ps, job, "SUCCEEDED", 300)
        check_identical(ps, job, ref, "2-slice podtrain after losing a slice's agent")
        restored = re.findall(r"restore:.*?ckpt-\d+-(\d+)", log_text(ps, job))
        if not restored or int(restored[-1]) < 20:
            fail("job %d did not resume from its checkpoint: %s" % (job, restored))
        # The agent's death is the host's failure, not the job's: no restart charged (its
        # mpirun's failure waited for the dead agent's hosts to go down).
        if int(ps.job(job).get("restarts", -1)) != 0:
            fail("job %d was charged %s restarts for a dead agent: %s" %
                 (job, ps.job(job).get("restarts"), [e.get("reason") for e in ps.events(job)]))
        ok("job %d resumed from step %s (epoch %s) and SUCCEEDED bit-identical to one process, "
           "no restart charged" % (job, restored[-1], ps.job(job)["epoch"]))
        zone_stores(ps, job, ref, stores)
    except SystemExit:
        print_logs(work)
        raise
    finally:
        for w in workers.values():
            w.stop()
        if ps:
            ps.stop()


if __name__ == "__main__":
    main()
