"""Real Unix accounts for the tests whose jobs run as their users, without touching the
machine's account database: the test re-runs itself in a private mount namespace (unshare) where
/etc/passwd and /etc/group are bind-mounted copies with the test's accounts added."""
import os
import shutil
import subprocess
import sys

from testlib import fail  # noqa: E402 (beside this file)

NS_FLAG = "PODSCHED_ACCOUNTS_TEST_NS"


def in_namespace():
    return os.environ.get(NS_FLAG) == "1"


def enter_namespace(script):
    """Runs `script` (the calling test, with this process's arguments) again in a private mount
    namespace and exits with its status; exits 77 (skipped) when not root."""
    if os.geteuid() != 0:
        print("SKIP: needs root (the agents switch to the jobs' accounts)")
        sys.exit(77)
    if shutil.which("unshare") is None:
        fail("unshare (util-linux) is missing")
    env = dict(os.environ, **{NS_FLAG: "1"})
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                        os.path.abspath(script)] + sys.argv[1:], env=env)
    sys.exit(r.returncode)


def add_accounts(work, accounts, groups=(), shells=None, memberships=None):
    """Copies of /etc/passwd and /etc/group with `accounts` ({name: uid}, each with a group of
    the same id and the shell /bin/sh, or shells[name]), `groups` (lines for /etc/group) and
    `memberships` ({existing group: [accounts]}, added to its members), bound over the originals
    (only in this mount namespace); each account gets a home of its own (work/home/NAME, 0700)."""
    passwd, group = open("/etc/passwd").read(), open("/etc/group").read()
    for name, uid in accounts.items():
        home = os.path.join(work, "home", name)
        os.makedirs(home)
        os.chown(home, uid, uid)
        os.chmod(home, 0o700)
        shell = (shells or {}).get(name, "/bin/sh")
        passwd += "%s:x:%d:%d::%s:%s\n" % (name, uid, uid, home, shell)
        group += "%s:x:%d:\n" % (name, uid)
    for line in groups:
        group += line + "\n"
    lines = group.splitlines()
    for name, members in (memberships or {}).items():
        at = [i for i, l in enumerate(lines) if l.split(":")[0] == name]
        if not at:
            fail("group %s is not in /etc/group" % name)
        fields = lines[at[0]].split(":")
        fields[3] = ",".join([m for m in fields[3].split(",") if m] + members)
        lines[at[0]] = ":".join(fields)
    group = "\n".join(lines) + "\n"
    for path, text in (("/etc/passwd", passwd), ("/etc/group", group)):
        copy = os.path.join(work, os.path.basename(path))
        with open(copy, "w") as f:
            f.write(text)
        os.chmod(copy, 0o644)
        subprocess.run(["mount", "--bind", copy, path], check=True)


def install_podworker(work, podworker):
    """A copy of podworker, and of podworker-helper and podworker-rank beside it, where every
    account can run them (`rank` runs as the job)."""
    os.makedirs(os.path.join(work, "bin"), exist_ok=True)
    path = os.path.join(work, "bin", "podworker")
    shutil.copy2(podworker, path)
    os.chmod(path, 0o755)
    for name in ("podworker-helper", "podworker-rank"):
        beside = os.path.join(os.path.dirname(podworker), name)
        if os.path.exists(beside):
            shutil.copy2(beside, os.path.join(work, "bin", name))
            os.chmod(os.path.join(work, "bin", name), 0o755)
    return path
