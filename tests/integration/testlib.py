"""What every python integration test here needs: failing loudly, polling with a deadline (never
sleep-and-hope), podctl, and the logs of a failed run."""
import os
import subprocess
import sys
import time

TIMEOUT = 120  # generous: CI shares 2 cores with other suites


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def wait_for(cond, what, timeout=TIMEOUT, interval=0.05):
    """Returns cond()'s first truthy value; fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(interval)
    fail("timed out after %d s waiting for %s" % (timeout, what))


def ok(what):
    print("ok - " + what, flush=True)


def run_podctl(podctl, ps, *args, expect=0, token=None):
    """podctl against podsched `ps` with its admin token (or `token`, a user's); fails unless it
    exits `expect` (None: any exit)."""
    r = subprocess.run([podctl, "--server", ps.url, "--token", token or ps.token] + list(args),
                       capture_output=True, text=True, timeout=120)
    if expect is not None and r.returncode != expect:
        fail("podctl %s: exit %d (want %d) %s %s" % (" ".join(args), r.returncode, expect,
                                                     r.stdout, r.stderr))
    return r


def print_logs(work, tail=3000):
    """The end of every *.log and *.err file in `work` (a failed test's diagnostics)."""
    for name in sorted(os.listdir(work)):
        if name.endswith((".log", ".err")):
            print("--- " + name)
            print(open(os.path.join(work, name)).read()[-tail:])
