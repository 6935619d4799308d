"""What every python integration test here needs: failing loudly and polling with a deadline
(never sleep-and-hope)."""
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
