#!/usr/bin/python3
"""Audit M4 against a real podsched: idle sockets that never send a request must not lock
anyone out.

  http_limits_test.py PODSCHED

podsched runs with max_connections 200 and max_connections_per_address 16 (the defaults are
2048 and 64; smaller here to stay within the test's file descriptors). Loopback has every
127.0.0.0/8 address, so each "client machine" is its own source address.
1. One address opens 16 idle sockets: all are held; its 17th gets 503 naming the cap.
2. Thirteen more addresses open 16 idle sockets each (224 in all, more than 200): the oldest
   idle ones are closed to make room, none is refused, and an authenticated GET /healthz from
   yet another address answers 200.
3. An idle socket is closed by podsched after the 10 s header timeout (not the old 60 s).
"""
import http.client
import os
import resource
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, fail  # noqa: E402
from testlib import ok  # noqa: E402

PODSCHED = sys.argv[1]


def idle_socket(port, source):
    s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    return s


def response_or_none(s, wait):
    """What the server sent on `s` within `wait` seconds: bytes, b"" at EOF, None if nothing."""
    s.settimeout(wait)
    try:
        return s.recv(4096)
    except socket.timeout:
        return None
    except ConnectionResetError:
        return b""


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    with tempfile.TemporaryDirectory(prefix="http-limits-") as work:
        ps = Podsched(PODSCHED, work, curve=False,
                      limits=", max_connections: 200, max_connections_per_address: 16")
        port = int(ps.url.rsplit(":", 1)[1])
        held = []
        try:
            # 1. The per-address cap.
            first = [idle_socket(port, "127.0.0.10") for _ in range(16)]
            held += first
            extra = idle_socket(port, "127.0.0.10")
            held.append(extra)
            answer = response_or_none(extra, 5) or b""
            if not answer.startswith(b"HTTP/1.1 503") or b"127.0.0.10 (16)" not in answer:
                fail("the 17th socket from one address: %r" % answer[:300])
            waiting = [response_or_none(s, 0.05) for s in first]
            if any(w is not None for w in waiting):
                fail("the first 16 sockets were not all held: %s" % waiting)
            ok("16 idle sockets from 127.0.0.10 held; the 17th: 503 %s"
               % answer.split(b"\r\n\r\n", 1)[-1].decode().strip())

            # 2. The global cap: the oldest idle sockets make room; nobody is refused.
            for a in range(11, 24):
                held += [idle_socket(port, "127.0.0.%d" % a) for _ in range(16)]
            t = time.monotonic()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                           source_address=("127.0.0.2", 0))
            c.request("GET", "/healthz", headers={"Authorization": "Bearer " + ps.token})
            r = c.getresponse()
            body = r.read().decode()
            took = time.monotonic() - t
            if r.status != 200:
                fail("GET /healthz beside 224 idle sockets: %s %s" % (r.status, body))
            states = [response_or_none(s, 0.05) for s in held if s is not extra]
            refused = [s for s in states if s and s.startswith(b"HTTP/1.1 503")]
            closed = sum(1 for s in states if s == b"")
            if refused:
                fail("%d idle sockets were refused, not made room for: %r" % (len(refused),
                                                                              refused[0][:200]))
            if closed < 24:
                fail("only %d of the oldest idle sockets were closed for 224 > 200" % closed)
            ok("224 idle sockets from 14 addresses: %d of the oldest closed to make room, none "
               "refused; GET /healthz from 127.0.0.2 answered 200 in %.3f s" % (closed, took))
        finally:
            for s in held:
                s.close()

        # 3. The header timeout.
        s = idle_socket(port, "127.0.0.30")
        t = time.monotonic()
        got = response_or_none(s, 30)
        took = time.monotonic() - t
        s.close()
        if got != b"":
            fail("an idle socket after %.1f s: %r (want closed)" % (took, got))
        if took < 9:
            fail("an idle socket was closed after %.1f s, before the 10 s header timeout" % took)
        ok("an idle socket was closed by podsched after %.1f s (header timeout 10 s)" % took)
        if not ps.alive():
            fail("podsched died")
        ps.stop()


main()
