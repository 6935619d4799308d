#!/usr/bin/python3
"""Audit H1 against a real podsched: submit-and-cancel cycles no longer grow podsched's memory
without bound, and ended jobs stay readable.

  retention_test.py PODSCHED PODCTL

podsched runs with scheduler.ended_job_retention_hours 0.001 (3.6 s; the default is an hour)
and max_jobs_created_per_user_per_hour 25,000 (the default is 50,000).
1. alice creates and cancels two 10,000-task arrays; the third is refused with 429, naming the
   budget and when it fits, and nothing of it is queued.
2. Within a few seconds every ended job has left memory: podsched_jobs counts 0 ended jobs,
   podsched_jobs_forgotten_total 20,001, and alice's list is empty.
3. A forgotten job still reads back from the store (GET /jobs/{id} and its events), only for its
   owner and admins; cancelling it again is 409; a dependency on it is refused with a reason.
4. The history (GET /jobs?history=true, podctl jobs --history) pages through them all from the
   store, merged with the jobs in memory by id, each once, only the caller's.
5. After kill -9 and a restart the old ended jobs are not loaded, still read back, and new jobs
   get new ids.
Prints FIGURE lines: the /metrics scrape time with 20,000 ended jobs in memory and after.
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bus_harness import Podsched, fail, wait_for  # noqa: E402
from testlib import ok, run_podctl  # noqa: E402

PODSCHED, PODCTL = sys.argv[1:3]
ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")


def spec(**more):
    s = {"name": "cycle", "accelerator": "v2-8", "command": "/bin/true", "preemptible": True}
    s.update(more)
    return s


def add_user(ps, name):
    status, body = ps.call("POST", "/api/v1/users", {"name": name, "role": "user"})
    if status != 201:
        fail("adding %s: %s %s" % (name, status, body))
    return body["secret"]


def call_ok(ps, method, path, body=None, token=None, expect=200):
    status, reply = ps.call(method, path, body, token)
    if status != expect:
        fail("%s %s: %s %s (expected %s)" % (method, path, status, reply, expect))
    return reply


def ended_in_memory(ps):
    m = ps.metrics()
    return sum(m.get('podsched_jobs{state="%s"}' % s, 0) for s in ENDED)


def scrape_ms(ps, n=20):
    start = time.monotonic()
    for _ in range(n):
        ps.metrics()
    return (time.monotonic() - start) * 1000 / n


def main():
    with tempfile.TemporaryDirectory(prefix="retention-") as work:
        ps = Podsched(PODSCHED, work, curve=False,
                      scheduler=", ended_job_retention_hours: 0.001, "
                                "max_jobs_created_per_user_per_hour: 25000")
        try:
            alice = add_user(ps, "alice")
            bob = add_user(ps, "bob")

            # 1. The creation budget.
            arrays = []
            for _ in range(2):
                reply = call_ok(ps, "POST", "/api/v1/jobs", spec(array="0-9999"), alice, 201)
                first = int(reply["job"]["id"])
                arrays.append(first)
                call_ok(ps, "POST", "/api/v1/jobs/%d/cancel" % first, token=alice)
            with_ended = scrape_ms(ps)
            status, body = ps.call("POST", "/api/v1/jobs", spec(array="0-9999"), alice)
            if status != 429 or "max_jobs_created_per_user_per_hour" not in str(body) or \
                    "left now" not in str(body):
                fail("third array: %s %s" % (status, body))
            listed = call_ok(ps, "GET", "/api/v1/jobs?page_size=1", token=alice)
            if int(listed.get("total", 0)) > 20000:
                fail("the refused array queued tasks: total %s" % listed.get("total"))
            ok("two 10,000-task arrays created and cancelled; the third refused: %s" % body)

            # A single job: read back once forgotten.
            job = int(call_ok(ps, "POST", "/api/v1/jobs", spec(name="kept"), alice, 201)["job"]["id"])
            call_ok(ps, "POST", "/api/v1/jobs/%d/cancel" % job, token=alice)

            # 2. Forgotten from memory within a few seconds (retention 3.6 s, ticks 200 ms).
            wait_for(lambda: ended_in_memory(ps) == 0, "every ended job to leave memory", 60)
            forgotten = ps.metrics().get("podsched_jobs_forgotten_total")
            if forgotten != 20001:
                fail("podsched_jobs_forgotten_total %s, expected 20001" % forgotten)
            listed = call_ok(ps, "GET", "/api/v1/jobs", token=alice)
            if listed.get("jobs"):
                fail("alice's list still shows %d jobs" % len(listed["jobs"]))
            after = scrape_ms(ps)
            ok("20,001 ended jobs left memory (podsched_jobs_forgotten_total)")

            # 3. Read back from the store.
            def read_back():
                got = call_ok(ps, "GET", "/api/v1/jobs/%d" % job, token=alice)
                if got["state"] != "CANCELLED" or got.get("name") != "kept":
                    fail("forgotten job reads back as %s" % got)
                events = call_ok(ps, "GET", "/api/v1/jobs/%d/events" % job, token=alice)
                states = [e["to"] for e in events.get("events", [])]
                if states != ["QUEUED", "CANCELLED"]:
                    fail("its events: %s" % states)
                call_ok(ps, "GET", "/api/v1/jobs/%d" % job)  # admin
                call_ok(ps, "GET", "/api/v1/jobs/%d" % job, token=bob, expect=404)
                task = call_ok(ps, "GET", "/api/v1/jobs/%d" % (arrays[1] + 5), token=alice)
                if task["state"] != "CANCELLED" or int(task.get("array_index", -1)) != 5:
                    fail("forgotten array task reads back as %s" % task)
            read_back()
            status, body = ps.call("POST", "/api/v1/jobs/%d/cancel" % job, token=alice)
            if status != 409 or "already ended" not in str(body):
                fail("cancel of a forgotten job: %s %s" % (status, body))
            status, body = ps.call("POST", "/api/v1/jobs",
                                   spec(dependency="afterany:%d" % job), alice)
            if status != 400 or "ended_job_retention_hours" not in str(body):
                fail("dependency on a forgotten job: %s %s" % (status, body))
            ok("a forgotten job reads back (job, events; owner and admin only), cancel is 409")

            # 4. The history, merged with what is in memory (a queued job of alice's).
            queued = int(call_ok(ps, "POST", "/api/v1/jobs",
                                 spec(name="waits"), alice, 201)["job"]["id"])
            ids, token, pages = [], "", 0
            while True:
                page = call_ok(ps, "GET", "/api/v1/jobs?history=true&page_size=500%s" %
                               ("&page_token=" + token if token else ""), token=alice)
                ids += [int(j["id"]) for j in page.get("jobs", [])]
                pages += 1
                token = page.get("next_page_token", "")
                if not token:
                    break
            want = list(range(arrays[0], arrays[0] + 10000)) + \
                list(range(arrays[1], arrays[1] + 10000)) + [job, queued]
            if ids != want:
                fail("alice's history: %d ids (%d pages), want %d; first differences %s" % (
                    len(ids), pages, len(want),
                    [(a, b) for a, b in zip(ids, want) if a != b][:3]))
            page = call_ok(ps, "GET", "/api/v1/jobs?history=true&state=CANCELLED&page_size=3"
                           "&page_token=%d" % (arrays[1] + 9998), token=alice)
            if [int(j["id"]) for j in page["jobs"]] != [arrays[1] + 9999, job] or \
                    page.get("next_page_token"):
                fail("the last page of alice's cancelled history: %s" % page)
            if call_ok(ps, "GET", "/api/v1/jobs?history=true", token=bob).get("jobs"):
                fail("bob's history shows jobs that are not his")
            out = run_podctl(PODCTL, ps, "jobs", "--history", "--limit", "5", "-o", "json",
                             token=alice).stdout
            listed = [int(j["id"]) for j in json.loads(out)["jobs"]]
            if listed != want[:5]:
                fail("podctl jobs --history --limit 5: %s" % listed)
            status, body = ps.call("GET", "/api/v1/jobs?history=maybe", token=alice)
            if status != 400:
                fail("history=maybe: %s %s" % (status, body))
            ok("the history pages 20,002 jobs from the store and memory (%d pages), each once, "
               "only the owner's; podctl jobs --history" % pages)

            # 5. A restart loads none of them and reads them back alike.
            ps.kill9()
            ps.start()
            if ended_in_memory(ps) != 0:
                fail("the restart loaded %s ended jobs" % ended_in_memory(ps))
            read_back()
            new = int(call_ok(ps, "POST", "/api/v1/jobs", spec(), bob, 201)["job"]["id"])
            if new <= job:
                fail("new job id %d reuses a forgotten one (<= %d)" % (new, job))
            ok("after kill -9: nothing old loaded, read back from the store, new id %d" % new)
            print("FIGURE retention_metrics_scrape_20k_ended %.2f ms" % with_ended)
            print("FIGURE retention_metrics_scrape_after_forgetting %.2f ms" % after)
        finally:
            ps.stop()


if __name__ == "__main__":
    main()
