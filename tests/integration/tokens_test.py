#!/usr/bin/python3
"""The token life cycle end to end (tests/integration/tokens.cmake): a real podsched, the real
podctl, raw HTTP for the dashboard session and the event stream. No podworker: jobs stay queued.

  tokens_test.py PODSCHED PODCTL

- the admin adds a user and creates a token for it (secrets printed once, on stdout alone);
- the user logs in with `podctl login --token-stdin`: the config file is mode 0600 in a 0700
  directory under XDG_CONFIG_HOME and the token is never printed; submit and jobs work from it;
- a dashboard session and an event stream are opened with that token;
- the admin revokes it: the very next podctl request fails (exit 3, "revoked"), the session's
  next request is 401, the stream gets its `end` frame and closes;
- disable: every token of the user fails, its job is left alone; bad input gets clear errors;
- after a restart of podsched the state is the same (stored in the SQLite database);
- a token makes only tokens that expire no later than itself, and revoking it revokes them
  (audit M5: a leaked 1-hour token minted a never-expiring one that outlived its revocation).
"""
import http.client
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, fail, wait_for  # noqa: E402
from testlib import ok, print_logs, run_podctl  # noqa: E402

PODSCHED, PODCTL = sys.argv[1:3]


def admin(ps, *args, expect=0):
    return run_podctl(PODCTL, ps, *args, expect=expect)


class User:
    """podctl as a user: its own HOME and XDG_CONFIG_HOME, no token given, no var/admin.token."""

    def __init__(self, ps, work):
        self.ps = ps
        self.cwd = os.path.join(work, "user")
        self.xdg = os.path.join(self.cwd, "xdg")
        os.makedirs(self.cwd)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("POD_")}
        self.env.update(HOME=os.path.join(self.cwd, "home"), XDG_CONFIG_HOME=self.xdg)

    def podctl(self, *args, expect=0, stdin=None, server=False):
        argv = [PODCTL] + (["--server", self.ps.url] if server else []) + list(args)
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=self.cwd,
                           env=self.env, input=stdin)
        if expect is not None and r.returncode != expect:
            fail("user podctl %s: exit %d (want %d) %s %s"
                 % (" ".join(args), r.returncode, expect, r.stdout, r.stderr))
        return r


def http_call(ps, method, path, body=None, headers=None):
    host, port = urllib.parse.urlparse(ps.url).netloc.split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=10)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers=headers or {})
    r = c.getresponse()
    data = r.read().decode()
    c.close()
    return r.status, r.getheader("Set-Cookie") or "", data


class Stream(threading.Thread):
    """GET /api/v1/events/stream, read until the server closes it."""

    def __init__(self, ps, token):
        super().__init__(daemon=True)
        host, port = urllib.parse.urlparse(ps.url).netloc.split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30)
        self.conn.request("GET", "/api/v1/events/stream",
                          headers={"Authorization": "Bearer " + token})
        self.response = self.conn.getresponse()
        if self.response.status != 200:
            fail("stream: HTTP %d" % self.response.status)
        self.text, self.closed = "", False
        self.start()

    def run(self):
        try:
            while True:
                line = self.response.fp.readline()
                if not line:
                    break
                self.text += line.decode()
        except OSError:
            pass
        self.closed = True


def secret_of(r, user):
    lines = r.stdout.splitlines()
    if len(lines) != 1 or len(lines[0]) != 48:
        fail("want the token alone on stdout, got %r" % r.stdout)
    if "shown only now" not in r.stderr or user not in r.stderr:
        fail("want a note on stderr, got %r" % r.stderr)
    return lines[0]


def token_id(ps, user, label):
    listed = json.loads(admin(ps, "admin", "token", "list", user, "-o", "json").stdout)
    ids = [int(t["id"]) for t in listed["tokens"] if t["label"] == label]
    if len(ids) != 1:
        fail("token %s of %s: %s" % (label, user, listed))
    return ids[0]


def test_life_cycle(ps, work):
    first = secret_of(admin(ps, "admin", "user", "add", "carl", "--unix-user", "carl_u"), "carl")
    laptop = secret_of(admin(ps, "admin", "token", "create", "carl", "--expires", "30d",
                             "--name", "laptop"), "carl")
    laptop_id = token_id(ps, "carl", "laptop")
    users = json.loads(admin(ps, "admin", "user", "list", "-o", "json").stdout)["users"]
    carl = [u for u in users if u["name"] == "carl"]
    if not carl or carl[0]["unix_user"] != "carl_u" or carl[0]["source"] != "api":
        fail("user list: %s" % users)
    listing = admin(ps, "admin", "token", "list").stdout
    if first in listing or laptop in listing or "laptop" not in listing:
        fail("token list shows a secret or misses the label: %s" % listing)
    ok("admin added carl (unix_user carl_u) and a 30d token; secrets only on stdout, once")

    user = User(ps, work)
    login = user.podctl("login", "--token-stdin", stdin=laptop + "\n", server=True)
    config = os.path.join(user.xdg, "podctl", "config.yaml")
    mode = stat.S_IMODE(os.stat(config).st_mode)
    dir_mode = stat.S_IMODE(os.stat(os.path.dirname(config)).st_mode)
    if mode != 0o600 or dir_mode != 0o700:
        fail("config %o, directory %o (want 600, 700)" % (mode, dir_mode))
    if laptop in login.stdout + login.stderr or "as carl" not in login.stdout:
        fail("login output: %r %r" % (login.stdout, login.stderr))
    if laptop not in open(config).read() or ps.url not in open(config).read():
        fail("config lacks the token or server")
    ok("podctl login: %s mode 0600 (directory 0700), the token never printed" % config)
    bad = user.podctl("login", "--token-stdin", stdin="nope\n", server=True, expect=3)
    if "nothing written" not in bad.stderr or laptop not in open(config).read():
        fail("a wrong token at login must change nothing: %r" % bad.stderr)

    job = int(user.podctl("submit", "--parsable", "--accelerator", "v2-8", "--", "true")
              .stdout.strip())
    if str(job) not in user.podctl("jobs").stdout:
        fail("carl's job not listed")
    ok("carl submits and lists with the saved config (job %d)" % job)

    status, cookie, body = http_call(ps, "POST", "/api/v1/login", {"token": laptop},
                                     {"X-Requested-With": "test", "Content-Type": "application/json"})
    cookie = cookie.split(";")[0]
    if status != 200 or not cookie.startswith("podsched_session="):
        fail("dashboard login: %d %s" % (status, body))
    if http_call(ps, "GET", "/api/v1/jobs", headers={"Cookie": cookie})[0] != 200:
        fail("the session does not work")
    stream = Stream(ps, laptop)

    admin(ps, "admin", "token", "revoke", str(laptop_id))
    refused = user.podctl("jobs", expect=3)
    if "revoked" not in refused.stderr:
        fail("want a clear message: %r" % refused.stderr)
    status, _, body = http_call(ps, "GET", "/api/v1/jobs", headers={"Cookie": cookie})
    if status != 401:
        fail("the session outlived its token: %d %s" % (status, body))
    wait_for(lambda: stream.closed, "the event stream to close", 10)
    if "event: end" not in stream.text or "revoked" not in stream.text:
        fail("stream ended without the end frame: %r" % stream.text)
    ok("revoked: the next podctl request fails (%s), the session is 401, the stream ended"
       % refused.stderr.strip())

    # The first token still works until carl is disabled; his job is left alone.
    env_first = ["--token", first]
    user.podctl(*env_first, "jobs")
    user.podctl(*env_first, "admin", "user", "add", "mallory", expect=3)
    admin(ps, "admin", "user", "disable", "carl")
    disabled = user.podctl(*env_first, "jobs", expect=3)
    if "disabled" not in disabled.stderr:
        fail("want 'disabled': %r" % disabled.stderr)
    if ps.job(job)["state"] != "QUEUED":
        fail("disabling carl touched his job: %s" % ps.job(job))
    ok("disabled: every token of carl fails, his job stays QUEUED")
    return first, laptop


def test_bad_input(ps):
    cases = [
        (("admin", "user", "add", "carl"), 5, "already exists"),
        (("admin", "user", "add", "Bad Name"), 5, "not a valid user name"),
        (("admin", "user", "add", "dave", "--unix-user", "Root!"), 5, "not a valid unix_user"),
        (("admin", "user", "disable", "admin"), 5, "configured"),
        (("admin", "user", "disable", "nobody"), 4, "no user nobody"),
        (("admin", "token", "revoke", "999"), 4, "no token 999"),
        (("admin", "token", "revoke", "x"), 2, "not a token id"),
        (("admin", "token", "create", "carl", "--expires", "3x"), 2, "not a lifetime"),
        (("admin", "token", "create", "nobody"), 4, "no user nobody"),
    ]
    for args, code, message in cases:
        r = admin(ps, *args, expect=code)
        if message not in r.stderr:
            fail("podctl %s: want %r in %r" % (" ".join(args), message, r.stderr))
    ok("bad input: %d cases refused with a clear error and nothing written" % len(cases))


def test_restart(ps, first, laptop):
    ps.stop()
    ps.start()
    for token, why in ((laptop, "revoked"), (first, "disabled")):
        status, _, body = http_call(ps, "GET", "/api/v1/jobs",
                                    headers={"Authorization": "Bearer " + token})
        if status != 401 or why not in body:
            fail("after a restart, want 401 %s: %d %s" % (why, status, body))
    admin(ps, "admin", "user", "enable", "carl")
    if http_call(ps, "GET", "/api/v1/jobs", headers={"Authorization": "Bearer " + first})[0] != 200:
        fail("carl's first token does not work after enable")
    metrics = ps.metrics()
    if metrics.get('podsched_auth_failures_total{reason="revoked"}', 0) < 1:
        fail("auth failures not counted: %s" % {k: v for k, v in metrics.items() if "auth" in k})
    ok("after a restart: revoked and disabled still refused, enable works, failures counted")


def test_minted(ps, first):
    """Audit M5 over HTTP, as carl (enabled again) would do it with his tokens."""
    def create(token, body):
        status, _, data = http_call(ps, "POST", "/api/v1/tokens", body,
                                    {"Authorization": "Bearer " + token,
                                     "Content-Type": "application/json"})
        return status, json.loads(data)
    status, a = create(first, {"label": "a", "expires_in_seconds": 3600})
    if status != 201:
        fail("token A: %d %s" % (status, a))
    status, b = create(a["secret"], {"label": "b"})  # never expiring, made with A
    if status != 400 or "expires_in_seconds at most" not in b.get("message", ""):
        fail("want 400 for a never-expiring token made with a 1-hour one: %d %s" % (status, b))
    status, b = create(a["secret"], {"label": "b", "expires_in_seconds": 1800})
    if status != 201:
        fail("token B: %d %s" % (status, b))
    status, c = create(b["secret"], {"label": "c", "expires_in_seconds": 600})
    if status != 201:
        fail("token C: %d %s" % (status, c))
    admin(ps, "admin", "token", "revoke", str(a["token"]["id"]))
    for name, t in (("B", b), ("C", c)):
        status, _, body = http_call(ps, "GET", "/api/v1/jobs",
                                    headers={"Authorization": "Bearer " + t["secret"]})
        if status != 401 or "revoked" not in body:
            fail("token %s outlived A's revocation: %d %s" % (name, status, body))
    if http_call(ps, "GET", "/api/v1/jobs", headers={"Authorization": "Bearer " + first})[0] != 200:
        fail("revoking A touched carl's first token")
    ok("a token made with a 1-hour token cannot outlive it, and revoking it revokes what it made "
       "(two generations)")


def main():
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="podsched-tokens-") as work:
        ps = None
        try:
            ps = Podsched(PODSCHED, work)
            first, laptop = test_life_cycle(ps, work)
            test_bad_input(ps)
            test_restart(ps, first, laptop)
            test_minted(ps, first)
        except SystemExit:
            print_logs(work)
            raise
        finally:
            if ps:
                ps.stop()
    ok("tokens test in %.1f s" % (time.monotonic() - started))


main()
