#!/usr/bin/python3
"""A shared site on one machine, set up as docs/podworker.md and docs/deploy.md say, with no
extra flags: podsched with the default store (file:// inside its data directory), a root
podworker, and users added with `podctl admin user add NAME --unix-user NAME`
(tests/integration/accounts.cmake).

  shared_site_test.py PODSCHED PODCTL PODWORKER

Each user's job writes its checkpoint directory, reads it back, is preempted and resumes from
it; neither user's job can list or read the other's prefix, nor podsched's private state. Real
accounts alice and bob in a private mount namespace (testaccounts.py). Every wait polls a
condition with a deadline.
"""
import os
import shutil
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402
from testaccounts import add_accounts, enter_namespace, in_namespace, install_podworker  # noqa: E402
from testlib import ok, print_logs, run_podctl  # noqa: E402

PODSCHED, PODCTL, PODWORKER = sys.argv[1:4]
ACCOUNTS = {"alice": 50011, "bob": 50012}

# Saves "weights-of-<account>" in its checkpoint directory, reads it back, then waits to be
# preempted (SIGTERM: exit 75). Run again after the preemption, it resumes from what it saved.
CHECKPOINTING = r'''
d="$POD_CHECKPOINT_DIR"
if [ -f "$d/state" ]; then
  v=$(cat "$d/state")
  echo "RESUMED $v epoch=$POD_EPOCH"
  [ "$v" = "weights-of-$(id -un)" ] || exit 4
  exit 0
fi
echo "weights-of-$(id -un)" > "$d/state.tmp" && mv "$d/state.tmp" "$d/state" || exit 5
echo "SAVED $(cat "$d/state") epoch=$POD_EPOCH"
trap 'echo PREEMPTED; exit 75' TERM
while :; do sleep 0.1; done
'''


def spec(name, script, **extra):
    s = {"name": name, "accelerator": "v2-8", "command": "/bin/sh", "args": ["-c", script],
         "launcher": "exec", "ranks_per_host": 1, "max_restarts": 0, "grace_period_seconds": 10}
    s.update(extra)
    return s


def logs(ps, token, job):
    return run_podctl(PODCTL, ps, "logs", str(job), token=token).stdout


def state(ps, token, job):
    status, body = ps.call("GET", "/api/v1/jobs/%d" % job, token=token)
    if status != 200:
        fail("GET job %d: HTTP %s %s" % (job, status, body))
    return body


def ended(ps, token, job, want):
    j = wait_for(lambda: (lambda j: j["state"] in ("SUCCEEDED", "FAILED", "CANCELLED") and j)(
        state(ps, token, job)), "job %d to end" % job)
    if j["state"] != want:
        fail("job %d ended %s, not %s (%s):\n%s" % (job, j["state"], want, j.get("reason"),
                                                   logs(ps, token, job)))
    return logs(ps, token, job)


def output_with(ps, token, job, wants, what):
    """The job's output once it holds every line of `wants` (a job's last output is stored just
    after its end is known); fails showing the output after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        text = logs(ps, token, job)
        if all(w in text for w in wants):
            return text
        if time.monotonic() > deadline:
            fail("%s: %s missing from job %d's output:\n%s" % (what, wants, job, text))
        time.sleep(0.2)


def mode(path):
    st = os.lstat(path)
    return st.st_uid, stat.S_IMODE(st.st_mode)


def check_layout(data):
    want = {data: 0o711, os.path.join(data, "objects"): 0o711,
            os.path.join(data, "objects", "checkpoints"): 0o711,
            os.path.join(data, "objects", "checkpoints", "users"): 0o711,
            os.path.join(data, "podsched.db"): 0o600, os.path.join(data, "admin.token"): 0o600,
            os.path.join(data, "bus.key"): 0o600, os.path.join(data, "agents.keys"): 0o600}
    for path, m in want.items():
        if mode(path)[1] != m:
            fail("%s: mode %o, want %o" % (path, mode(path)[1], m))
    ok("the default data dir: traversable to the users' prefixes (0711), its private state "
       "0600")


def test_each_user_checkpoints_and_resumes(ps, tokens, data):
    jobs = {}
    for user, token in tokens.items():
        status, body = ps.call("POST", "/api/v1/jobs", spec("ckpt-" + user, CHECKPOINTING,
                                                            preemptible=True), token=token)
        if status != 201:
            fail("%s's submit: HTTP %s %s" % (user, status, body))
        jobs[user] = int(body["job"]["id"])
    for user, job in jobs.items():
        text = wait_for(lambda: (lambda t: ("SAVED" in t or "exited" in t or
                                            state(ps, tokens[user], job)["state"] == "FAILED")
                                 and t)(logs(ps, tokens[user], job)),
                        "%s's job to save its checkpoint" % user)
        if "SAVED weights-of-%s epoch=1" % user not in text:
            fail("%s's job could not write its checkpoint directory:\n%s" % (user, text))
        run_podctl(PODCTL, ps, "preempt", str(job), token=tokens[user])
    for user, job in jobs.items():
        ended(ps, tokens[user], job, "SUCCEEDED")
        output_with(ps, tokens[user], job, ["PREEMPTED", "RESUMED weights-of-%s epoch=2" % user],
                    "%s's job resumed from its checkpoint" % user)
        prefix = os.path.join(data, "objects", "checkpoints", "users", user)
        if mode(prefix) != (ACCOUNTS[user], 0o700):
            fail("%s's prefix %s: uid %d mode %o, want %d 0700" % (
                (user, prefix) + mode(prefix) + (ACCOUNTS[user],)))
        saved = os.path.join(prefix, "job-%d" % job, "state")
        if os.lstat(saved).st_uid != ACCOUNTS[user]:
            fail("%s is not %s's" % (saved, user))
    ok("alice's and bob's jobs each wrote and read back their checkpoint directory, were "
       "preempted and resumed from it (epoch 2); each prefix is its user's, 0700")
    return jobs


def test_neither_reaches_the_other(ps, tokens, data, jobs):
    users = os.path.join(data, "objects", "checkpoints", "users")
    for user, other in (("alice", "bob"), ("bob", "alice")):
        theirs = os.path.join(users, other)
        probes = {"list": [data, os.path.join(data, "objects"), users, theirs,
                           os.path.join(data, "objects", "logs")],
                  "read": [os.path.join(theirs, "job-%d" % jobs[other], "state"),
                           os.path.join(data, "admin.token"), os.path.join(data, "podsched.db")]}
        script = "".join('ls "%s" >/dev/null 2>&1 && echo "LISTED %s" || echo "DENIED %s"\n'
                         % (p, p, p) for p in probes["list"])
        script += "".join('cat "%s" >/dev/null 2>&1 && echo "READ %s" || echo "DENIED %s"\n'
                          % (p, p, p) for p in probes["read"])
        # The control: the same job lists its own prefix.
        script += 'ls "%s" >/dev/null && echo "OWN-LISTED"\n' % os.path.join(users, user)
        status, body = ps.call("POST", "/api/v1/jobs", spec("probe-" + user, script),
                               token=tokens[user])
        if status != 201:
            fail("%s's probe: HTTP %s %s" % (user, status, body))
        job = int(body["job"]["id"])
        ended(ps, tokens[user], job, "SUCCEEDED")
        paths = probes["list"] + probes["read"]
        text = output_with(ps, tokens[user], job, ["OWN-LISTED"], "%s's probe" % user)
        if any("DENIED %s" % p not in text for p in paths):
            fail("%s's job reached what is not hers/his:\n%s" % (user, text))
    ok("neither user's job can list or read the other's prefix, the data dir, the stored logs, "
       "the admin token or the database")


def main():
    if not in_namespace():
        enter_namespace(__file__)
    work = tempfile.mkdtemp(prefix="podsched-site-")
    os.chmod(work, 0o755)  # as /srv or /var/lib: the accounts may pass
    worker = ps = None
    try:
        add_accounts(work, ACCOUNTS)
        podworker = install_podworker(work, PODWORKER)
        # The default configuration but for a small pod and ephemeral ports (bus_harness): no
        # default_checkpoint_url, no users in it; the store is file://<data dir>/objects.
        ps = Podsched(PODSCHED, work, pod_rows=1, pod_cols=2)
        data = ps.data_dir
        worker = Worker(podworker, ps, work, "h0", "0-1", user_flags=[])  # root: jobs as users
        wait_for(lambda: all(h.get("healthy") for h in ps.pod()["hosts"]), "both hosts healthy")
        tokens = {}
        for user in ACCOUNTS:
            r = run_podctl(PODCTL, ps, "admin", "user", "add", user, "--unix-user", user)
            tokens[user] = r.stdout.strip()
        check_layout(data)
        jobs = test_each_user_checkpoints_and_resumes(ps, tokens, data)
        test_neither_reaches_the_other(ps, tokens, data, jobs)
    except SystemExit as e:
        if e.code not in (0, None):
            print_logs(work)
        raise
    finally:
        for p in (worker, ps):
            if p:
                p.stop()
        shutil.rmtree(work, ignore_errors=True)


main()
