#!/usr/bin/env python3
"""Multi-node cluster tests (tests/cluster/cluster.cmake, ctest label `cluster`).

Hosts are network namespaces on a private bridge (netns.py): podsched and the S3 server in
namespace 0, one podworker in each of namespaces 1..4 serving two simulated hosts (a column of a
2x4 v2 pod), MPI between namespaces over TCP. The job is podtrain; every scenario checks that
nothing is lost: the job SUCCEEDS with parameters bit-identical to a single-process reference
run, and every host is healthy and free at the end.

  cluster_test.py BUILD_DIR SCENARIO     SCENARIO: across, preempt, agent-kill, link-cut,
                                                   sched-kill, torch, multislice (or all)

multislice runs two pods of 2x2 hosts, one per pair of namespaces (1-2: pod0, 3-4: pod1), and a
job of two v2-32 slices across them.
Exit 0 pass, 1 fail, 77 skip (not root). PODSCHED_CLUSTER_STORE=file: checkpoints on file://
instead of the S3 server. PODSCHED_CLUSTER_KEEP=1 keeps the work directory.
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402
from podcluster import (MPI_ENV, Binaries, Failure, PodCluster, fail,  # noqa: E402
                        reference_sha, wait_for)

# A few hundred steps, padded so that faults land mid-run, checkpointing often so that a
# resumed run repeats little. 4 ranks (v2-32, one rank per host): global batch divisible by 4.
TRAIN = ["--steps", "400", "--global-batch", "64", "--progress-every", "10"]
RUN_ARGS = TRAIN + ["--checkpoint-every", "20", "--min-step-ms", "50"]
SHORT = ["--steps", "120", "--global-batch", "64", "--progress-every", "10"]
SHORT_ARGS = SHORT + ["--checkpoint-every", "20", "--min-step-ms", "50"]
JOB_TIMEOUT = 300


def say(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def workers_of(c, hosts):
    return sorted({c.worker_of_host(h) for h in hosts})


def placements(c, jid):
    """[(epoch, hosts)] of every placement of the job, from its events."""
    out = []
    for e in c.events(jid):
        if e.get("to") == "PLACED" and e.get("hosts"):
            out.append((int(e.get("epoch", 0)), list(e["hosts"])))
    return out


def check_finished(c, jid, ref, what):
    """The job SUCCEEDED, its last line is the reference hash; returns the job."""
    j = c.wait_state(jid, "SUCCEEDED", JOB_TIMEOUT)
    sha = wait_for("params_sha256 in the output of job %d" % jid, lambda: c.params_sha(jid), 30)
    if sha != ref:
        fail("%s: job %d params_sha256 %s differs from the single-process reference %s\n%s" % (
            what, jid, sha, ref, c.diagnose(jid)))
    say("%s: job %d SUCCEEDED, bit-identical to the reference (%s...)" % (what, jid, ref[:16]))
    return j


def check_all_free(c):
    """Nothing lost at the end: every host healthy, none allocated, no job process anywhere."""
    for pod in ("pod%d" % p for p in range(c.pods)):
        c.wait_hosts_healthy(range(2 * c.cols), 60, pod)
        wait_for("all hosts of %s free" % pod,
                 lambda: not any(h.get("allocated") or h.get("job_id")
                                 for h in c.hosts(pod).values()), 30)
    if c.use_netns:
        for k in range(1, c.workers + 1):
            left = [p for p in c.nodes[k].pids() if _comm(p) in ("podtrain", "orted", "mpirun")]
            if left:
                fail("processes left in namespace %d after the jobs ended: %s" % (k, left))


def _comm(pid):
    try:
        return open("/proc/%d/comm" % pid).read().strip()
    except OSError:
        return ""


def restored_step(c, jid):
    """Step of the last `restore:` line of the job's output (None: started from scratch)."""
    import re
    steps = re.findall(r"restore:.*?ckpt-\d+-(\d+)", c.log_text(jid))
    return int(steps[-1]) if steps else None


# --- scenarios ----------------------------------------------------------------------------------

def across(c, ref, _tmp):
    """1: a v2-32 job across namespaces equals the single-process reference."""
    jid = c.submit("v2-32", RUN_ARGS)
    j = c.wait_state(jid, "RUNNING", 120)
    spread = wait_for("ranks of job %d in several namespaces" % jid,
                      lambda: (lambda ks: ks if len(ks) >= 2 else None)(
                          sorted({k for k, *_ in c.job_processes(jid)})), 60)
    say("job %d runs on hosts %s: ranks in namespaces %s" % (jid, j["hosts"], spread))
    if len(c.job_processes(jid)) > 4:
        fail("more than 4 ranks of job %d: %s" % (jid, c.job_processes(jid)))
    j = check_finished(c, jid, ref, "across")
    if j.get("restarts", 0) or j.get("preemptions", 0) or len(placements(c, jid)) != 1:
        fail("undisturbed job %d restarted: %s, placements %s" % (jid, j, placements(c, jid)))
    check_all_free(c)


def preempt(c, ref, tmp):
    """2: an on-demand job preempts the preemptible one, which resumes elsewhere, identical."""
    a = c.submit("v2-32", RUN_ARGS, preemptible=True, name="victim")
    c.wait_running_step(a, 40, 120)
    a_hosts = sorted(c.job(a)["hosts"])
    # A one-host on-demand filler takes one of the 4 free hosts, so that the on-demand v2-32
    # that follows fits only by preempting the victim; the filler ends first, which frees a
    # 2x2 beside the on-demand job for the victim to resume on (the on-demand job runs ~20 s,
    # the filler 10 s).
    f = c.submit("v2-8", ["10"], command="/bin/sleep", name="filler")
    c.wait_state(f, ("STARTING", "RUNNING"), 60)  # sleep reports no progress: never RUNNING
    od = c.submit("v2-32", RUN_ARGS, name="on-demand")
    wait_for("victim %d to be preempted" % a,
             lambda: any(e.get("to") == "PREEMPTING" for e in c.events(a)), 60)
    jq = c.wait_state(a, ("QUEUED", "PLACED", "STARTING", "RUNNING"), 60)
    c.wait_state(od, "RUNNING", 120)
    say("victim %d preempted (%s), on-demand %d runs on %s" % (
        a, jq.get("reason"), od, c.job(od)["hosts"]))
    j = check_finished(c, a, ref, "preempt")
    places = placements(c, a)
    if len(places) < 2:
        fail("victim %d was placed only once: %s" % (a, places))
    new_hosts = sorted(places[-1][1])
    if new_hosts == a_hosts:
        fail("victim %d resumed on the same hosts %s" % (a, a_hosts))
    step = restored_step(c, a)
    if not step:
        fail("victim %d did not resume from a checkpoint:\n%s" % (a, c.diagnose(a)))
    if j.get("preemptions", 0) < 1:
        fail("job %d reports no preemption: %s" % (a, j))
    import re
    at = re.findall(r"preempted at step (\d+); checkpoint", c.log_text(a))
    if not at or int(at[0]) != step:
        fail("victim %d: preempted at %s but resumed from %d: work lost" % (a, at, step))
    say("victim resumed from step %d on hosts %s (was %s)" % (step, new_hosts, a_hosts))
    check_finished(c, od, ref, "preempt (on-demand)")
    c.wait_state(f, "SUCCEEDED", 60)
    check_all_free(c)


def agent_kill(c, ref, _tmp):
    """3: kill -9 of one namespace's agent and ranks; the job resumes on other hosts."""
    jid = c.submit("v2-32", RUN_ARGS)
    c.wait_running_step(jid, 40, 120)
    j = c.job(jid)
    epoch, hosts = j["epoch"], sorted(j["hosts"])
    victim = c.worker_of_host(hosts[0])  # the launcher's namespace: mpirun dies too
    say("job %d epoch %d on hosts %s; kill -9 of everything in namespace %d" % (
        jid, epoch, hosts, victim))
    c.nodes[victim].kill_all()
    dead = c.hosts_of_worker(victim)
    wait_for("hosts %s unhealthy after the heartbeat timeout" % dead,
             lambda: not any(c.hosts()[h]["healthy"] for h in dead), 30)
    j2 = wait_for("job %d placed again" % jid,
                  lambda: (lambda j: j if j["epoch"] > epoch and j["state"] in (
                      "PLACED", "STARTING", "RUNNING") else None)(c.job(jid)), 90)
    if set(j2["hosts"]) & set(dead):
        fail("job %d re-placed on the dead hosts: %s" % (jid, j2["hosts"]))
    stale = wait_for("no process of epoch %d left on the surviving namespaces" % epoch,
                     lambda: not [p for p in c.job_processes(jid) if p[3] == epoch] or None, 60)
    check_finished(c, jid, ref, "agent-kill")
    step = restored_step(c, jid)
    if not step:
        fail("job %d did not resume from a checkpoint" % jid)
    say("resumed from step %d on hosts %s" % (step, sorted(j2["hosts"])))
    c.start_worker(victim)  # the machine comes back: its hosts return to service
    check_all_free(c)


def link_cut(c, ref, _tmp):
    """4: the link of a namespace is cut mid-run; its hosts are lost, the job resumes; when the
    link returns the stale processes are fenced and killed; the job ends identical."""
    jid = c.submit("v2-32", RUN_ARGS)
    c.wait_running_step(jid, 40, 120)
    j = c.job(jid)
    epoch, hosts = j["epoch"], sorted(j["hosts"])
    victim = c.worker_of_host(hosts[0])  # the launcher: mpirun and rank 0 are there
    lost = c.hosts_of_worker(victim)
    say("job %d epoch %d on hosts %s; cutting the link of namespace %d" % (
        jid, epoch, hosts, victim))
    c.nodes[victim].cut()
    try:
        wait_for("hosts %s declared lost" % lost,
                 lambda: not any(c.hosts()[h]["healthy"] for h in lost), 30)
        j2 = wait_for("job %d placed again" % jid,
                      lambda: (lambda j: j if j["epoch"] > epoch and j["state"] in (
                          "PLACED", "STARTING", "RUNNING") else None)(c.job(jid)), 90)
        if set(j2["hosts"]) & set(lost):
            fail("job %d re-placed on the lost hosts: %s" % (jid, j2["hosts"]))
        c.wait_state(jid, "RUNNING", 90)
        stale = [p for p in c.job_processes(jid) if p[0] == victim and p[3] == epoch]
        say("new epoch %d runs on %s; stale processes behind the cut link: %s" % (
            j2["epoch"], sorted(j2["hosts"]), stale))
        # The cut lasts until the new epoch has committed a checkpoint: from then on a stale
        # rank's commit would be fenced (podtrain exit 4), and it must not win either way.
        import re
        new = j2["epoch"]
        wait_for("epoch %d of job %d to commit a checkpoint" % (new, jid),
                 lambda: re.search(r"checkpoint committed ckpt-%d-" % new, c.log_text(jid)), 90)
    finally:
        c.nodes[victim].restore()
    say("link of namespace %d restored" % victim)
    wait_for("stale epoch-%d processes in namespace %d killed" % (epoch, victim),
             lambda: not [p for p in c.job_processes(jid, ("podtrain", "orted", "mpirun"))
                          if p[0] == victim and p[3] <= epoch] or None, 60)
    c.wait_hosts_healthy(lost, 60)
    j = check_finished(c, jid, ref, "link-cut")
    if j["epoch"] <= epoch:
        fail("job %d finished in epoch %d, not a newer one" % (jid, j["epoch"]))
    # The stale epoch's checkpoints cannot win: none of them is newer than where the newer
    # epoch resumed (a stale commit after the cut would show up as a higher step).
    resumed = restored_step(c, jid) or 0
    kept = c.manifests(jid)
    if not kept:
        fail("no committed checkpoint of job %d found in the store" % jid)
    late = [(e, s) for e, s in kept if e <= epoch and s > resumed]
    if late:
        fail("stale epoch %d committed checkpoints after the cut: %s (resumed from %d)" % (
            epoch, late, resumed))
    say("checkpoints kept: %s; none of epoch %d past step %d" % (kept, epoch, resumed))
    check_all_free(c)


def sched_kill(c, ref, _tmp):
    """5: kill -9 of podsched mid-run; restart; reconcile adopts; no duplicate launch."""
    jid = c.submit("v2-32", RUN_ARGS)
    c.wait_running_step(jid, 40, 120)
    j = c.job(jid)
    epoch = j["epoch"]
    before = sorted(p[1] for p in c.job_processes(jid))
    say("job %d epoch %d ranks %s; kill -9 podsched" % (jid, epoch, before))
    c.kill_scheduler()
    time.sleep(1.5)  # agents keep running the job without a scheduler for a while (bounded)
    c.start_scheduler()
    say("podsched restarted")
    seen = set()

    def adopted():
        procs = c.job_processes(jid)
        if len(procs) > 4:
            fail("duplicate launch: %d ranks of job %d: %s" % (len(procs), jid, procs))
        seen.update(p[1] for p in procs)
        jj = c.job(jid)
        return jj if jj["state"] == "RUNNING" or jj["state"] in ("SUCCEEDED",) else None

    j2 = wait_for("job %d adopted" % jid, adopted, 60)
    if j2["epoch"] != epoch:
        fail("job %d relaunched after the restart (epoch %d -> %d)\n%s" % (
            jid, epoch, j2["epoch"], c.diagnose(jid)))
    if seen - set(before):
        fail("new rank processes after the restart: %s (before: %s)" % (sorted(seen), before))
    check_finished(c, jid, ref, "sched-kill")
    j3 = c.job(jid)
    if j3["epoch"] != epoch or len(placements(c, jid)) != 1:
        fail("job %d launched twice: epoch %d, placements %s" % (jid, j3["epoch"],
                                                                 placements(c, jid)))
    check_all_free(c)


def mpi_only(podtrain, ref, tmp):
    """0: the harness alone (no podsched, no podworker): mpirun in one namespace starts its
    daemons in four others through nsrsh.sh (an ssh stand-in), ranks talk TCP across the
    bridge; the result equals the single-process reference. Separates harness problems from
    agent problems."""
    with netns.Cluster(5, "mpi") as cl:
        hosts = cl.nodes[1:]
        env = dict(MPI_ENV, NSRSH_MAP=" ".join("%s=%s" % (n.hostname, n.ns) for n in hosts))
        argv = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4",
                "--host", ",".join(n.hostname + ":1" for n in hosts),
                "--mca", "plm_rsh_agent", os.path.join(os.path.dirname(__file__), "nsrsh.sh"),
                "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", cl.subnet,
                "--mca", "oob_tcp_if_include", cl.subnet, podtrain] + TRAIN + [
                "--pid-dir", os.path.join(tmp, "mpi-pids")]
        p = cl.nodes[0].popen(argv, log=os.path.join(tmp, "mpi.log"), env=env)
        seen = set()
        while p.poll() is None:
            for n in hosts:
                if any(_comm(pid) == "podtrain" for pid in n.pids()):
                    seen.add(n.index)
            time.sleep(0.1)
        out = open(os.path.join(tmp, "mpi.log"), errors="replace").read()
        if p.returncode != 0:
            fail("mpirun across namespaces exited %d:\n%s" % (p.returncode, out[-2000:]))
        import re
        sha = re.findall(r"params_sha256=([0-9a-f]{64})", out)
        if not sha or sha[-1] != ref:
            fail("mpirun across namespaces: params_sha256 %s != reference %s" % (sha, ref))
        if len(seen) < 2:
            fail("ranks were seen in namespaces %s only" % sorted(seen))
        say("mpi: 4 ranks in namespaces %s, bit-identical to the reference" % sorted(seen))


def torch_ddp(c, _ref, _tmp):
    """7: a user's PyTorch DDP script (gloo, launcher exec) across namespaces: preempted through
    the API, saved with torch.save in its grace period, resumed, and ending with the same
    parameters as an uninterrupted run (tests/integration/jobs/torch_ddp.py)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration", "jobs",
                          "torch_ddp.py")
    if not c.checkpoint_url.startswith("file://"):
        fail("the torch scenario needs a file:// store (torch.save writes POD_CHECKPOINT_DIR)")
    ckpt = c.checkpoint_url + "/torch"
    # gloo picks its interface from the hostname; in a namespace that is eth0 on the bridge.
    env = {"GLOO_SOCKET_IFNAME": "eth0"}
    spec = dict(command="/usr/bin/python3", launcher="exec", checkpoint_url=ckpt, env=env)
    a = c.submit("v2-32", [script, "40", "0.2"], preemptible=True, name="ddp", **spec)
    wait_for("job %d to report step 8" % a,
             lambda: c.job(a)["state"] == "RUNNING" and int(c.job(a).get("step", 0)) >= 8, 240)
    spread = sorted({k for k, *_ in c.job_processes(a, names=("python3",))})
    if len(spread) < 2:
        fail("DDP ranks of job %d are not spread over namespaces: %s" % (a, spread))
    say("DDP job %d runs on hosts %s, ranks in namespaces %s" % (a, c.job(a)["hosts"], spread))
    c.api("POST", "/api/v1/jobs/%d/preempt" % a, {})
    j = c.wait_state(a, "SUCCEEDED", JOB_TIMEOUT)
    text = c.log_text(a)
    if "rank 0: preempted, saved step" not in text or "resumed at step" not in text:
        fail("job %d did not save and resume:\n%s" % (a, text[-3000:]))
    b = c.submit("v2-32", [script, "40"], name="ddp-reference", **spec)
    c.wait_state(b, "SUCCEEDED", JOB_TIMEOUT)
    digest = [open(os.path.join(ckpt[len("file://"):], "job-%d" % jid, "final.sha256"))
              .read().strip() for jid in (a, b)]
    if digest[0] != digest[1]:
        fail("preempted DDP run %s differs from the uninterrupted one %s" % tuple(digest))
    say("DDP job %d preempted (%d placements) and resumed: parameters identical to job %d (%s...)"
        % (a, len(placements(c, a)), b, digest[0][:16]))
    check_all_free(c)


def multislice(c, ref, _tmp):
    """8 (two pods, namespaces 1-2 serve pod0 and 3-4 pod1): podtrain on 2 slices of v2-32, one
    MPI world of 8 ranks across the 4 namespaces; kill -9 of a namespace of the second slice
    requeues the whole job (no rank of that epoch is left anywhere); once the namespace is back
    it resumes from its checkpoint and ends bit-identical to the single-process reference."""
    jid = c.submit("v2-32", RUN_ARGS, slices=2)
    c.wait_running_step(jid, 40, 240)
    j = c.job(jid)
    epoch = j["epoch"]
    slices = [(j["pod"], sorted(j["hosts"]))] + [
        (s["pod"], sorted(int(h) for h in s["hosts"])) for s in j.get("more_slices", [])]
    if sorted(p for p, _ in slices) != ["pod0", "pod1"]:
        fail("job %d's slices are not one per pod: %s" % (jid, slices))
    spread = sorted({k for k, *_ in c.job_processes(jid)})
    if spread != [1, 2, 3, 4]:
        fail("ranks of job %d in namespaces %s, not all four" % (jid, spread))
    say("job %d epoch %d on slices %s: 8 ranks in namespaces %s" % (jid, epoch, slices, spread))
    pod, hosts = slices[1]
    victim = c.worker_of_host(hosts[0], pod)
    say("kill -9 of everything in namespace %d (%s)" % (victim, pod))
    c.nodes[victim].kill_all()
    wait_for("job %d to leave epoch %d" % (jid, epoch),
             lambda: (lambda j: j if j["epoch"] > epoch or j["state"] == "QUEUED" else None)(
                 c.job(jid)), 90)
    wait_for("no process of epoch %d left in any namespace" % epoch,
             lambda: not [p for p in c.job_processes(jid) if p[3] == epoch] or None, 60)
    say("job %d requeued whole: %s" % (jid, c.job(jid).get("reason")))
    c.start_worker(victim)
    check_finished(c, jid, ref, "multislice")
    step = restored_step(c, jid)
    if not step:
        fail("job %d did not resume from a checkpoint" % jid)
    say("resumed from step %d" % step)
    check_all_free(c)


from podcluster import _find_binary as pc_find  # noqa: E402

SCENARIOS = {"across": across, "preempt": preempt, "agent-kill": agent_kill,
             "link-cut": link_cut, "sched-kill": sched_kill, "torch": torch_ddp,
             "multislice": multislice}


def main():
    if len(sys.argv) != 3 or (sys.argv[2] not in SCENARIOS and sys.argv[2] not in ("all", "mpi")):
        print("usage: cluster_test.py BUILD_DIR {mpi|%s|all}" % "|".join(SCENARIOS))
        return 2
    netns.require_root()
    tmp = tempfile.mkdtemp(prefix="podsched-cluster-")
    store = os.environ.get("PODSCHED_CLUSTER_STORE", "s3")
    failed = []
    try:
        if sys.argv[2] == "mpi":
            podtrain = pc_find(sys.argv[1], "podtrain")
            ref = reference_sha(podtrain, TRAIN, os.path.join(tmp, "ref"))
            try:
                mpi_only(podtrain, ref, tmp)
                say("PASS mpi")
                return 0
            except Failure as e:
                say("FAIL mpi: %s" % e)
                return 1
        bins = Binaries(sys.argv[1])
        names = list(SCENARIOS) if sys.argv[2] == "all" else [sys.argv[2]]
        ref = reference_sha(bins.podtrain, TRAIN, os.path.join(tmp, "ref"))
        say("single-process reference: params_sha256=%s" % ref)
        for name in names:
            work = os.path.join(tmp, name)
            c = None
            try:
                c = PodCluster(bins, work, workers=4, store="file" if name == "torch" else store,
                               name=name[:6], pods=2 if name == "multislice" else 1)
                say("%s: %d namespaces on %s, checkpoints %s" % (
                    name, len(c.nodes), c.subnet, c.checkpoint_url.split("?")[0]))
                c.start()
                SCENARIOS[name](c, ref, os.path.join(tmp, "ref"))
                say("PASS %s" % name)
            except Failure as e:
                failed.append(name)
                say("FAIL %s: %s" % (name, e))
                if c:
                    print(c.diagnose(), flush=True)
            finally:
                if c:
                    c.close()
    finally:
        if os.environ.get("PODSCHED_CLUSTER_KEEP"):
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
