#!/usr/bin/python3
"""Integration tests of podtrain under real mpirun (tests/integration/train.cmake).

  train_test.py PODTRAIN TEST     TEST in: determinism, torn, stale, usage

Every wait is bounded polling on a condition (a line on stdout, pid files, process exit).
"""
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PODTRAIN = sys.argv[1]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
for k in ("POD_JOB_ID", "POD_EPOCH", "POD_CHECKPOINT_URL", "POD_PROGRESS_ENDPOINT"):
    ENV.pop(k, None)
from testlib import TIMEOUT, fail, wait_for  # noqa: E402 (beside this file)


class Run:
    """One `mpirun -np W podtrain ...`, its stdout collected line by line."""

    def __init__(self, world, args, env=None, pid_dir=None):
        self.world = world
        self.pid_dir = pid_dir
        cmd = ["mpirun", "--oversubscribe", "-np", str(world), PODTRAIN] + args
        if pid_dir:
            shutil.rmtree(pid_dir, ignore_errors=True)
            os.makedirs(pid_dir)
            cmd += ["--pid-dir", pid_dir]
        self.cmd = " ".join(cmd)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env or ENV)
        self.lines, self.err = [], []
        self.threads = [threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines)),
                        threading.Thread(target=self._pump, args=(self.proc.stderr, self.err))]
        for t in self.threads:
            t.start()

    @staticmethod
    def _pump(stream, out):
        for line in stream:
            out.append(line.rstrip("\n"))

    def wait(self, timeout=TIMEOUT):
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("timed out: " + self.cmd)
        for t in self.threads:
            t.join()
        return rc

    def rank_pids(self):
        files = [os.path.join(self.pid_dir, "rank-%d.pid" % r) for r in range(self.world)]
        def read():
            try:
                return [int(open(f).read()) for f in files]
            except (OSError, ValueError):
                return None
        return wait_for(read, "pid files of " + self.cmd)

    def signal_ranks(self, sig):
        for pid in self.rank_pids():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def step_seen(self):
        steps = [int(m.group(1)) for l in list(self.lines) for m in [re.match(r"step=(\d+)/", l)] if m]
        return max(steps) if steps else -1

    def restored(self):
        for l in list(self.lines):
            m = re.match(r"restore: (\S+) \(", l)
            if m:
                return m.group(1)
            if l.startswith("restore: no checkpoint"):
                return "none"
        return None

    def sha(self):
        if not self.lines or not self.lines[-1].startswith("params_sha256="):
            fail("no params_sha256 line from %s\nstdout: %s\nstderr: %s" %
                 (self.cmd, self.lines[-5:], self.err[-10:]))
        return self.lines[-1].split("=", 1)[1]


def finish(world, args, **kw):
    r = Run(world, args, **kw)
    rc = r.wait()
    if rc != 0:
        fail("%s exited %d\n%s" % (r.cmd, rc, "\n".join(r.err[-10:])))
    return r.sha()


def preempt(world, args, after_step, pid_dir):
    """Starts a run, SIGTERMs its ranks once it reports a step > after_step; expects code 75."""
    r = Run(world, args, pid_dir=pid_dir)
    wait_for(lambda: r.step_seen() > after_step or r.proc.poll() is not None,
             "a step after %d in %s" % (after_step, r.cmd))
    r.signal_ranks(signal.SIGTERM)
    rc = r.wait()
    if rc != 75:
        fail("preempted run exited %d, not 75: %s\n%s" % (rc, r.cmd, "\n".join(r.err[-10:])))
    m = [l for l in r.lines if l.startswith("preempted at step")]
    if not m:
        fail("no 'preempted' line from " + r.cmd)
    step = int(re.match(r"preempted at step (\d+)", m[-1]).group(1))
    return step


def test_determinism(tmp):
    base = ["--steps", "60", "--global-batch", "32", "--progress-every", "5"]
    ck = lambda name: ["--checkpoint-url", "file://" + os.path.join(tmp, name), "--checkpoint-every", "10"]
    slow = ["--min-step-ms", "25"]  # so that SIGTERM lands mid-run
    pids = os.path.join(tmp, "pids")

    ref = finish(4, base + ck("a"))                                            # (a)
    if finish(1, base) != ref:
        fail("W=1 without checkpoints differs from W=4")
    b1 = preempt(4, base + ck("b") + slow + ["--epoch", "0"], 12, pids)        # (b)
    b2 = preempt(4, base + ck("b") + slow + ["--epoch", "1"], b1 + 6, pids)
    if not (0 < b1 < b2 < 60):
        fail("preemption steps %d, %d not inside the run" % (b1, b2))
    if finish(4, base + ck("b") + ["--epoch", "2"]) != ref:
        fail("W=4 preempted twice and resumed differs from uninterrupted")
    s1 = preempt(4, base + ck("c") + slow + ["--epoch", "0"], 8, pids)         # (c)
    s2 = preempt(1, base + ck("c") + slow + ["--epoch", "1"], s1 + 6, pids)
    if finish(2, base + ck("c") + ["--epoch", "2"]) != ref:
        fail("W=4 -> W=1 -> W=2 resumed run differs from uninterrupted")
    print("exact: W=4 == W=1 == W=4 preempted at steps %d, %d == W=4 (step %d) -> W=1 (step %d) "
          "-> W=2: %s" % (b1, b2, s1, s2, ref))

    bn = base + ["--batchnorm", "sync", "--optimizer", "sgd", "--lr", "0.05"]
    ref_bn = finish(1, bn)
    preempt(4, bn + ck("bn") + slow, 10, pids)
    if finish(2, bn + ck("bn") + ["--epoch", "1"]) != ref_bn:
        fail("sync batch norm: W=4 resumed at W=2 differs from W=1")
    if ref_bn == ref:
        fail("batch norm run should not equal the plain one")

    fl = base + ["--allreduce", "float"]
    ref_fl = finish(2, fl)
    preempt(2, fl + ck("f") + slow, 10, pids)
    if finish(2, fl + ck("f") + ["--epoch", "1"]) != ref_fl:
        fail("float mode resumed at the same W differs from uninterrupted")
    print("batchnorm sync W=1 == W=4->2: %s; float W=2 resumed == uninterrupted: %s" % (ref_bn, ref_fl))


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli) of `data`, written here so that podtrain's shards are checked
    independently of its own code (Python's zlib has only CRC-32)."""
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def shard_matches(data, entry):
    """Whether a shard's bytes match its manifest entry: CRC-32C (format v2) or SHA-256 (v1)."""
    if len(data) != entry["size"]:
        return False
    if "crc32c" in entry:
        return "%08x" % crc32c(data) == entry["crc32c"]
    return hashlib.sha256(data).hexdigest() == entry["sha256"]


def valid_checkpoints(job_dir):
    """(epoch, step) of every checkpoint whose manifest and shards verify, newest first."""
    out = []
    for name in os.listdir(job_dir) if os.path.isdir(job_dir) else []:
        m = re.fullmatch(r"ckpt-(\d+)-(\d+)", name)
        path = os.path.join(job_dir, name, "manifest")
        if not m or not os.path.exists(path):
            continue
        try:
            doc = json.load(open(path))
        except ValueError:
            continue
        recorded = doc.pop("manifest_sha256", None)
        body = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if hashlib.sha256(body.encode()).hexdigest() != recorded:
            continue
        ok = True
        for s in doc["shards"]:
            p = os.path.join(job_dir, name, s["name"])
            if not os.path.exists(p):
                ok = False
                break
            ok = ok and shard_matches(open(p, "rb").read(), s)
        if ok:
            out.append((int(m.group(1)), int(m.group(2))))
    return sorted(out, reverse=True)


def torn_now(job_dir):
    """True while some checkpoint directory has shards but no manifest."""
    try:
        return count_torn(job_dir) > 0
    except FileNotFoundError:  # a directory removed by garbage collection while we looked
        return False


def count_torn(job_dir):
    """Checkpoint directories with shards but no manifest (a save cut short)."""
    if not os.path.isdir(job_dir):
        return 0
    return sum(1 for n in os.listdir(job_dir)
               if not os.path.exists(os.path.join(job_dir, n, "manifest"))
               and any(f.startswith("shard-") for f in os.listdir(os.path.join(job_dir, n))))


def test_torn(tmp):
    rng = random.Random(6)
    # Enough steps that no run reaches the end inside the kill loop, however fast the machine.
    args = ["--steps", "1500", "--global-batch", "16", "--checkpoint-every", "3", "--keep", "3",
            "--progress-every", "500"]
    url = ["--checkpoint-url", "file://" + os.path.join(tmp, "ck")]
    job = os.path.join(tmp, "ck", "standalone")
    ref = finish(2, args)
    pids = os.path.join(tmp, "pids")
    kills = torn_seen = 0
    for i in range(20):
        torn_seen += count_torn(job)
        expect = valid_checkpoints(job)
        if i in (8, 14) and len(expect) >= 2:
            # Corrupt the newest complete checkpoint: a shard byte, then the manifest's step.
            d = os.path.join(job, "ckpt-%d-%d" % expect[0])
            if i == 8:
                with open(os.path.join(d, "shard-0-of-%d" % len(
                        [f for f in os.listdir(d) if f.startswith("shard-")])), "r+b") as f:
                    f.seek(17)
                    b = f.read(1)
                    f.seek(17)
                    f.write(bytes([b[0] ^ 0x40]))
            else:
                text = open(os.path.join(d, "manifest")).read()
                open(os.path.join(d, "manifest"), "w").write(
                    re.sub(r'"step": (\d+)', lambda m: '"step": %d' % (int(m.group(1)) + 1), text, 1))
            expect = valid_checkpoints(job)
        world = rng.choice([1, 2, 4])
        r = Run(world, args + url + ["--epoch", str(i), "--write-delay-ms", "40",
                                     "--manifest-delay-ms", "30", "--min-step-ms", "5"],
                pid_dir=pids)
        got = wait_for(r.restored, "restore line of " + r.cmd)
        want = "ckpt-%d-%d" % expect[0] if expect else "none"
        if got != want:
            fail("iteration %d restored %s; last complete checkpoint is %s\n%s" %
                 (i, got, want, "\n".join(r.err[-10:])))
        if i in (8, 14) and not any("rejected" in l for l in r.err):
            wait_for(lambda: any("rejected" in l for l in r.err), "a 'rejected' log line")
        # SIGKILL every rank: two iterations in three at the first moment after a random delay
        # when a checkpoint has shards but no manifest yet (the torn state this test is about),
        # the others at a random moment (often while a shard's temp file is half written).
        delay = rng.uniform(0.05, 0.8)
        deadline = time.monotonic() + delay
        wait_for(lambda: time.monotonic() >= deadline or r.proc.poll() is not None, "kill time", 5)
        if i % 3 != 2:
            wait_for(lambda: r.proc.poll() is not None or torn_now(job), "a save in flight", 30,
                     interval=0.002)
        r.signal_ranks(signal.SIGKILL)
        r.wait()
        kills += 1
    if torn_seen == 0:
        fail("no SIGKILL landed during a save: the test exercised no torn checkpoint")
    last = finish(2, args + url + ["--epoch", "99"])
    if last != ref:
        fail("after %d random SIGKILLs the resumed run differs from the uninterrupted one" % kills)
    print("torn: %d SIGKILLs left %d torn checkpoint directories; every restore used the last "
          "complete checkpoint; final params equal the uninterrupted run: %s" % (kills, torn_seen, last))


def test_stale(tmp):
    args = ["--steps", "20", "--global-batch", "16", "--checkpoint-every", "10"]
    url = ["--checkpoint-url", "file://" + os.path.join(tmp, "ck")]
    job = os.path.join(tmp, "ck", "standalone")
    finish(2, args + url + ["--epoch", "2"])  # commits ckpt-2-10 and ckpt-2-20
    # A zombie of epoch 1 that keeps training must not commit: fenced, exit 4.
    z = Run(2, ["--steps", "40", "--global-batch", "16", "--checkpoint-every", "10"] + url + ["--epoch", "1"])
    rc = z.wait()
    if rc != 4:
        fail("zombie of epoch 1 exited %d, not 4 (fenced)\n%s" % (rc, "\n".join(z.err[-5:])))
    if any(n.startswith("ckpt-1-") and os.path.exists(os.path.join(job, n, "manifest"))
           for n in os.listdir(job)):
        fail("a fenced zombie committed a manifest")
    # A late epoch-1 checkpoint with a higher step that did land (the race the fence cannot
    # close) is still never chosen over epoch 2.
    other = os.path.join(tmp, "other")
    finish(2, ["--steps", "30", "--global-batch", "16", "--checkpoint-url", "file://" + other, "--epoch", "1"])
    shutil.copytree(os.path.join(other, "standalone", "ckpt-1-30"), os.path.join(job, "ckpt-1-30"),
                    dirs_exist_ok=True)
    r = Run(2, ["--steps", "25", "--global-batch", "16"] + url + ["--epoch", "3"])
    if r.wait() != 0 or r.restored() != "ckpt-2-20":
        fail("epoch 3 restored %s, not ckpt-2-20\n%s" % (r.restored(), "\n".join(r.err[-5:])))
    # Every checkpoint's second shard corrupt (its last byte): rank 0 verifies its own shard
    # straight into its buffers, rank 1 rejects its own, and so every candidate is rejected. The
    # run must start at step 0 from the initial parameters, not from what rank 0 read: it ends
    # exactly as a run that never had a checkpoint.
    bad = os.path.join(tmp, "bad")
    short = ["--steps", "20", "--global-batch", "16"]
    finish(2, short + ["--checkpoint-every", "10", "--checkpoint-url", "file://" + bad])
    corrupted = 0
    for d in os.listdir(os.path.join(bad, "standalone")):
        with open(os.path.join(bad, "standalone", d, "shard-1-of-2"), "r+b") as f:
            f.seek(-1, os.SEEK_END)
            b = f.read(1)
            f.seek(-1, os.SEEK_END)
            f.write(bytes([b[0] ^ 0x40]))
            corrupted += 1
    fresh = finish(2, short)
    r = Run(2, short + ["--checkpoint-url", "file://" + bad, "--epoch", "1"])
    if r.wait() != 0 or r.restored() != "none" or r.sha() != fresh:
        fail("with every checkpoint corrupt the run restored %s and ended %s, not from step 0 as %s\n%s"
             % (r.restored(), r.sha(), fresh, "\n".join(r.err[-5:])))
    print("stale: zombie fenced (exit 4); late older-epoch checkpoint ignored; %d corrupt "
          "checkpoints rejected and the run started from step 0" % corrupted)


def test_usage(tmp):
    r = Run(4, ["--global-batch", "30", "--steps", "5"])
    if r.wait() != 2 or not any("not divisible by the world size 4" in l for l in r.err):
        fail("B %% W != 0 should exit 2 with a clear message: %s" % r.err)
    r = Run(1, ["--allreduce", "sideways"])
    if r.wait() != 2:
        fail("bad --allreduce should exit 2")
    # A diverging run overflows the fixed-point bound: exit 5 with a message, never a wrap.
    r = Run(2, ["--steps", "50", "--lr", "1e6", "--optimizer", "sgd"])
    if r.wait() != 5 or not any("fixed-point overflow" in l for l in r.err):
        fail("overflow should exit 5 naming the fixed-point bound: %s" % r.err[-3:])
    # Progress datagrams to POD_PROGRESS_ENDPOINT.
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(TIMEOUT)
    env = dict(ENV, POD_PROGRESS_ENDPOINT="udp://127.0.0.1:%d" % sock.getsockname()[1],
               POD_JOB_ID="job-7", POD_EPOCH="3", POD_PROGRESS_KEY="k3y-of-job-7")
    r = Run(2, ["--steps", "20", "--global-batch", "16", "--progress-every", "10"], env=env)
    msg = json.loads(sock.recv(65536))
    if (msg["job"] != "job-7" or msg["epoch"] != 3 or msg["step"] != 10 or not 0 < msg["accuracy"] <= 1
            or msg.get("key") != "k3y-of-job-7"):
        fail("unexpected progress datagram %s" % msg)
    if r.wait() != 0:
        fail("progress run failed")
    # Without a checkpoint URL, SIGTERM exits 76 (nothing saved).
    r = Run(2, ["--steps", "100000", "--global-batch", "16", "--progress-every", "1"],
            pid_dir=os.path.join(tmp, "pids"))
    wait_for(lambda: r.step_seen() > 2, "a step line")
    r.signal_ranks(signal.SIGTERM)
    if r.wait() != 76:
        fail("SIGTERM without checkpoint URL should exit 76")
    print("usage: exit codes 2, 5 and 76, progress datagram", msg)


def test_data(tmp):
    out = os.path.join(tmp, "data")
    g = subprocess.run([PODTRAIN, "gen-data", "--out", "file://" + out, "--examples", "600",
                        "--eval-examples", "200", "--shards", "3", "--seed", "5"],
                       env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
    if g.returncode != 0 or not os.path.exists(os.path.join(out, "train", "part-2-of-3.tfrecord")):
        fail("gen-data failed: %s %s" % (g.stdout, g.stderr))
    base = ["--steps", "30", "--global-batch", "16", "--seed", "5"]
    from_store = finish(2, base + ["--data", "file://" + out])
    in_memory = finish(1, base + ["--train-examples", "600", "--eval-examples", "200"])
    if from_store != in_memory:
        fail("training from TFRecord shards differs from the same data generated in memory")
    with open(os.path.join(out, "train", "part-1-of-3.tfrecord"), "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 1]))
    r = Run(2, base + ["--data", "file://" + out])
    if r.wait() != 3 or not any("part-1-of-3" in l and "crc" in l.lower() for l in r.err):
        fail("a corrupted TFRecord should exit 3 naming the shard and the CRC: %s" % r.err)
    print("data: --data TFRecord == in-memory (%s); corrupted CRC rejected: %s" % (from_store, r.err[0]))


def s3_endpoint():
    d = os.environ.get("PODSCHED_TEST_S3_DIR", "")
    try:
        for line in open(os.path.join(d, "run", "ports")):
            if line.startswith("proxy_port="):
                return "http://127.0.0.1:" + line.strip().split("=", 1)[1]
    except OSError:
        pass
    return None


def test_s3(tmp):
    endpoint = s3_endpoint()
    if not endpoint:
        if os.environ.get("CI") == "true":
            fail("no S3 server (PODSCHED_TEST_S3_DIR) in CI")
        print("SKIP: no S3 server; set PODSCHED_TEST_S3_DIR (ctest starts one with the objects_s3 fixture)")
        sys.exit(77)
    creds = dict(ENV, AWS_ACCESS_KEY_ID="test:tester", AWS_SECRET_ACCESS_KEY="testing",
                 AWS_REGION="us-east-1")
    bucket = "podtrain-it-%d" % os.getpid()
    mb = subprocess.run(["aws", "--endpoint-url", endpoint, "s3", "mb", "s3://" + bucket],
                        env=creds, capture_output=True, text=True, timeout=TIMEOUT)
    if mb.returncode != 0:
        fail("aws s3 mb: " + mb.stderr)
    url = "s3://%s/ckpt?endpoint=%s&region=us-east-1" % (bucket, endpoint)
    base = ["--steps", "40", "--global-batch", "16", "--progress-every", "5", "--checkpoint-every", "10"]
    ref = finish(1, base)
    creds["POD_CHECKPOINT_URL"] = url
    r = Run(2, base + ["--min-step-ms", "25"], env=creds, pid_dir=os.path.join(tmp, "pids"))
    wait_for(lambda: r.step_seen() > 12, "a step after 12")
    r.signal_ranks(signal.SIGTERM)
    if r.wait() != 75:
        fail("s3: preempted run did not exit 75: %s" % r.err[-5:])
    r = Run(4, base + ["--epoch", "1"], env=creds)
    if r.wait() != 0 or not (r.restored() or "none").startswith("ckpt-0-") or r.sha() != ref:
        fail("s3: resumed run (restored %s) differs from uninterrupted" % r.restored())
    print("s3: preempted at W=2, resumed from %s at W=4 on %s: %s" % (r.restored(), endpoint, ref))


def main():
    test = sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="podtrain-it-")
    try:
        globals()["test_" + test](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS " + test)


if __name__ == "__main__":
    main()
