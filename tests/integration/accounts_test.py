#!/usr/bin/python3
"""Jobs run as their users' Unix accounts, and checkpoints stay in each user's prefix
(tests/integration/accounts.cmake): real podsched, two real podworkers running as root, real
mpirun and `podworker launch`.

  accounts_test.py PODSCHED PODCTL PODWORKER

The machine's account database is not touched: the test re-runs itself in a private mount
namespace (unshare) where /etc/passwd and /etc/group are bind-mounted copies with the test's
accounts added: alice (uid 50001, also in sudo), bob (50002), a system account svc (uid 500)
and drone (50003, shell nologin); `nobody` is the machine's. Every wait
polls a condition with a deadline.
"""
import hashlib
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, Worker, fail, wait_for  # noqa: E402
from testaccounts import add_accounts, enter_namespace, in_namespace, install_podworker  # noqa: E402
from testlib import ok, print_logs  # noqa: E402

PODSCHED, PODCTL, PODWORKER = sys.argv[1:4]
ACCOUNTS = {"alice": 50001, "bob": 50002, "svc": 500, "drone": 50003}
SUDO_GID = 27  # Debian's sudo group; alice is made a member (audit M6: jobs never get it)


class User:
    def __init__(self, ps, name, token):
        self.ps, self.name, self.token = ps, name, token

    def call(self, method, path, body=None):
        return self.ps.call(method, path, body, token=self.token)

    def submit(self, spec, expect=201):
        status, body = self.call("POST", "/api/v1/jobs", spec)
        if status != expect:
            fail("%s's submit: HTTP %s (want %d) %s" % (self.name, status, expect, body))
        return int(body["job"]["id"]) if expect == 201 else body


def spec(name, script, accelerator="v2-8", launcher="mpi", **extra):
    """Two ranks on one host: through the rsh side channel (mpirun's orted, or `podworker
    launch`'s ranks), where the agent starts them as the job's account."""
    s = {"name": name, "accelerator": accelerator, "command": "/bin/sh", "args": ["-c", script],
         "launcher": launcher, "max_restarts": 0, "grace_period_seconds": 5,
         "ranks_per_host": 2}
    s.update(extra)
    return s


def ended(ps, job):
    return wait_for(lambda: ps.job(job)["state"] in ("SUCCEEDED", "FAILED", "CANCELLED")
                    and ps.job(job), "job %d to end" % job)


def logs(ps, job):
    r = subprocess.run([PODCTL, "--server", ps.url, "--token", ps.token, "logs", str(job)],
                       capture_output=True, text=True, timeout=60)
    return r.stdout + r.stderr


def expect_state(ps, job, state, what):
    j = ended(ps, job)
    if j["state"] != state:
        fail("%s: job %d ended %s, not %s (%s):\n%s" % (what, job, j["state"], state,
                                                       j.get("reason"), logs(ps, job)))
    return logs(ps, job)


WHOAMI = ('echo "WHO rank=$RANK uid=$(id -u) gid=$(id -g) groups=$(id -G | tr " " ,) '
          'home=$HOME user=$USER cwd=$(pwd) tmp=$TMPDIR secret=${AGENT_SECRET:-none}"; '
          'touch "$TMPDIR/mine" && stat -c "TMPOWNER %u %a" "$TMPDIR"')


def test_jobs_run_as_their_user(ps, alice, work):
    for launcher in ("mpi", "exec"):
        j = alice.submit(spec("whoami-" + launcher, WHOAMI, launcher=launcher))
        text = expect_state(ps, j, "SUCCEEDED", "alice's %s job" % launcher)
        who = [l for l in text.splitlines() if "WHO rank=" in l]
        if len(who) != 2:
            fail("want one WHO line per rank (2), got:\n" + text)
        home = os.path.join(work, "home", "alice")
        for line in who:
            for want in ("uid=50001", "gid=50001", "home=%s" % home, "user=alice",
                         "cwd=%s" % home, "secret=none"):
                if want not in line:
                    fail("%s job: '%s' missing in: %s" % (launcher, want, line))
            groups = line.split("groups=")[1].split()[0].split(",")
            if "50100" not in groups:
                fail("supplementary group research (50100) missing: " + line)
            if str(SUDO_GID) in groups:
                fail("alice's job runs with the sudo group (%d): %s" % (SUDO_GID, line))
        if text.count("TMPOWNER 50001 700") != 2:
            fail("each rank's TMPDIR must be alice's 0700 scratch:\n" + text)
    ok("mpi and exec jobs: every rank runs as alice (uid, gid, groups without sudo, home, cwd), "
       "sees none of the agent's environment, and has her own 0700 TMPDIR")


def test_checkpoints_are_the_users(ps, alice, bob, work):
    store = os.path.join(work, "store")
    j = alice.submit(spec("ckpt", 'echo secret-weights > "$POD_CHECKPOINT_DIR/w-$RANK" && '
                          'echo DIR=$POD_CHECKPOINT_DIR'))
    expect_state(ps, j, "SUCCEEDED", "alice's checkpointing job")
    prefix = os.path.join(store, "users", "alice")
    st = os.lstat(prefix)
    if st.st_uid != 50001 or stat.S_IMODE(st.st_mode) != 0o700:
        fail("alice's prefix %s: uid %d mode %o, want 50001 0700" % (
            prefix, st.st_uid, stat.S_IMODE(st.st_mode)))
    weights = os.path.join(prefix, "job-%d" % j, "w-0")
    if os.stat(weights).st_uid != 50001:
        fail("%s is not alice's" % weights)
    # bob's job cannot read them, nor write into her prefix.
    b = bob.submit(spec("peek", 'cat "%s"; echo x > "%s/stolen"' % (weights, prefix),
                        accelerator="v2-8"))
    text = expect_state(ps, b, "FAILED", "bob's job reading alice's checkpoint")
    if "Permission denied" not in text or os.path.exists(os.path.join(prefix, "stolen")):
        fail("bob's job was not denied alice's checkpoint:\n" + text)
    ok("alice's prefix and checkpoints are hers (0700); bob's job gets Permission denied")

    # A spec naming another prefix, a system path or a .. trick is refused at submit.
    base = "file://" + store
    for url, why in ((base + "/users/alice", "outside your prefix"),
                     ("file:///etc", "outside your prefix"),
                     (base + "/users/bob/../alice", "'..'"),
                     (base + "/users/bob/%2e%2e/alice", "'%'")):
        status, body = bob.call("POST", "/api/v1/jobs", dict(spec("bad", "true"),
                                                             checkpoint_url=url))
        if status not in (400, 403) or why not in str(body) or "users/bob" not in str(body):
            fail("checkpoint_url %s: HTTP %s %s (want 400/403 naming %s and bob's prefix)" % (
                url, status, body, why))
        status, body = bob.call("POST", "/api/v1/jobs", dict(
            spec("bad", "true"), env={"POD_CHECKPOINT_URL": url}))
        if status not in (400, 403):
            fail("env POD_CHECKPOINT_URL=%s: HTTP %s %s" % (url, status, body))
    b = bob.submit(dict(spec("own", "true", accelerator="v2-8"),
                        checkpoint_url=base + "/users/bob/exp1"))
    expect_state(ps, b, "SUCCEEDED", "bob's job in his own prefix")
    ok("checkpoint URLs outside the user's prefix (another user's, file:///etc, .., %2e) are "
       "refused at submit with the prefix in the message; one below it runs")


# The audit's C1: the root agent wrote POD_PREEMPT_FILE through a path in the job's own
# directory, following a link the job planted (root overwrote any file) or blocking on a FIFO.
def test_preempt_notice_cannot_be_redirected(ps, alice, work):
    victim = os.path.join(work, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    script = (
        'ln -s %s "$POD_PREEMPT_FILE.tmp" 2>/dev/null && echo PLANTED-LINK; '
        'mkfifo "$POD_PREEMPT_FILE.x" 2>/dev/null && echo PLANTED-FIFO; '
        # the old place of the notice, in the job's own host directory
        'for h in "$(dirname "$POD_PREEMPT_FILE")"/h*/; do ln -s %s "$h/preempt.tmp"; '
        'mkfifo "$h/preempt"; done 2>/dev/null; '
        'trap \'echo "NOTICE $(cat "$POD_PREEMPT_FILE")"; exit 75\' TERM; echo READY; '
        'while :; do sleep 0.1; done') % (victim, victim)
    j = alice.submit(spec("plant", script, launcher="exec", ranks_per_host=1))
    wait_for(lambda: "READY" in logs(ps, j), "alice's job to plant its links")
    r = subprocess.run([PODCTL, "--server", ps.url, "--token", ps.token, "cancel", str(j)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail("cancel %d: %s" % (j, r.stderr))
    state = ended(ps, j)["state"]
    text = wait_for(lambda: (lambda t: "NOTICE" in t and t)(logs(ps, j)),
                    "the job's output with the notice", 30)
    if state != "CANCELLED" or "PLANTED" in text:
        fail("job %d: %s, output:\n%s" % (j, state, text))
    if open(victim).read() != "precious\n":
        fail("the root agent wrote through the job's link: %s now holds %r" % (
            victim, open(victim).read()))
    if not any(w.isdigit() for w in text.split("NOTICE")[1].split()[:1]):
        fail("the job could not read its preemption notice:\n" + text)
    ok("the preemption notice is root's, beside the job's directory: the job can plant no link "
       "or FIFO there; links planted where it used to be are not followed; cancel works")


def test_scratch(ps, alice, workers):
    def scratch(w, j):
        return os.path.join(w.state, "scratch", "alice", "job-%d.1-h%s" % (j, w.hosts))
    j = alice.submit(spec("scratch-ok", 'echo kept > "$TMPDIR/f"'))
    expect_state(ps, j, "SUCCEEDED", "alice's scratch job")
    wait_for(lambda: not any(os.path.exists(scratch(w, j)) for w in workers),
             "the scratch of a job that succeeded to go", 30)
    f = alice.submit(spec("scratch-fail", 'echo kept > "$TMPDIR/f"; exit 3'))
    expect_state(ps, f, "FAILED", "alice's failing job")
    kept = [scratch(w, f) for w in workers if os.path.exists(scratch(w, f))]
    if not kept or any(os.lstat(d).st_uid != 50001 for d in kept):
        fail("a failed job's scratch must stay, alice's: %s" % kept)
    ok("scratch is removed after a job that succeeded, kept (alice's) after a failure")


def uid_processes(uid):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat("/proc/" + name).st_uid == uid:
                    out.append(int(name))
            except FileNotFoundError:
                pass
    return out


def test_signals_and_leftovers(ps, alice, bob):
    b = bob.submit(spec("sleeper", 'echo "BOBPID $$"; exec sleep 120', accelerator="v2-8",
                        ranks_per_host=1))
    line = wait_for(lambda: next((l for l in logs(ps, b).splitlines() if "BOBPID" in l), None),
                    "bob's job to print its pid")
    pid = int(line.split("BOBPID")[1])
    a = alice.submit(spec("killer", 'kill -TERM %d; echo "rc=$?"' % pid, accelerator="v2-8",
                          ranks_per_host=1))
    text = expect_state(ps, a, "SUCCEEDED", "alice's job signalling bob's")
    if "Operation not permitted" not in text or "rc=1" not in text:
        fail("alice's job could signal bob's process %d:\n%s" % (pid, text))
    os.kill(pid, 0)  # still alive
    r = subprocess.run([PODCTL, "--server", ps.url, "--token", ps.token, "cancel", str(b)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail("cancel %d: %s" % (b, r.stderr))
    ended(ps, b)
    ok("alice's job cannot signal bob's process (EPERM); it lives until his job is cancelled")

    # A process that leaves its session and drops its tag escapes the job's tracking; the
    # account's last job ending on the agent takes it along (--kill-account-leftovers).
    s = alice.submit(spec("escape", "setsid sh -c 'exec env -u PODWORKER_TAG sleep 300' "
                          "</dev/null >/dev/null 2>&1 & echo escaped", accelerator="v2-8",
                          ranks_per_host=1))
    expect_state(ps, s, "SUCCEEDED", "alice's escaping job")
    wait_for(lambda: not uid_processes(50001), "no process of alice left after her last job", 30)
    ok("a process that escaped its job (setsid, no tag) is killed when alice's last job ends")


def test_refused_accounts(ps, svc, rooty, drone, nob):
    for user, why in ((svc, "system account"), (rooty, "--allow-root-jobs"),
                      (drone, "refuses logins"), (nob, "overflow account")):
        j = user.submit(spec("refused", "id", accelerator="v2-8"))
        text = expect_state(ps, j, "FAILED", "%s's job" % user.name)
        if why not in text:
            fail("%s's job failed without saying why (%s):\n%s" % (user.name, why, text))
    ok("jobs of a system account (uid 500), root, a nologin account and nobody fail with the "
       "reason in their log")


def main():
    if not in_namespace():
        enter_namespace(__file__)
    work = tempfile.mkdtemp(prefix="podsched-accounts-")
    os.chmod(work, 0o755)  # the accounts reach their homes and podworker below it
    workers = []
    ps = None
    try:
        add_accounts(work, ACCOUNTS, groups=["research:x:50100:alice"],
                     shells={"drone": "/usr/sbin/nologin"}, memberships={"sudo": ["alice"]})
        podworker = install_podworker(work, PODWORKER)
        # API user -> Unix account (rooty's jobs would run as root).
        names = {"alice": "alice", "bob": "bob", "svc": "svc", "rooty": "root",
                 "drone": "drone", "nob": "nobody"}
        tokens = {api: secrets.token_hex(16) for api in names}
        config = "users:\n" + "".join(
            "  - {name: %s, token_sha256: %s, role: user, unix_user: %s}\n" % (
                api, hashlib.sha256(tokens[api].encode()).hexdigest(), unix)
            for api, unix in names.items())
        # The checkpoint store outside podsched's private data dir, as a shared file system
        # would be.
        config += "default_checkpoint_url: file://%s/store\n" % work
        ps = Podsched(PODSCHED, work, pod_rows=1, pod_cols=2, extra=config)
        users = {api: User(ps, api, tokens[api]) for api in names}
        os.environ["AGENT_SECRET"] = "agent-only"  # in the agents' environment, never a job's
        for h in ("0", "1"):
            workers.append(Worker(podworker, ps, work, "h" + h, h,
                                  extra=["--keep-failed-scratch-seconds", "3600",
                                         "--kill-account-leftovers"],
                                  user_flags=[]))
        wait_for(lambda: all(h.get("healthy") for h in ps.pod()["hosts"]), "both hosts healthy")
        test_jobs_run_as_their_user(ps, users["alice"], work)
        test_checkpoints_are_the_users(ps, users["alice"], users["bob"], work)
        test_preempt_notice_cannot_be_redirected(ps, users["alice"], work)
        test_scratch(ps, users["alice"], workers)
        test_signals_and_leftovers(ps, users["alice"], users["bob"])
        test_refused_accounts(ps, users["svc"], users["rooty"], users["drone"], users["nob"])
    except SystemExit as e:
        if e.code not in (0, None):
            print_logs(work)
        raise
    finally:
        for w in workers:
            w.stop()
        if ps:
            ps.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
