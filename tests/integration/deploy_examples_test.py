#!/usr/bin/env python3
"""The multi-machine example configs (deploy/examples/cluster) are valid: with the placeholders
filled in (keys from `podworker keygen`, token hashes), podsched accepts the configuration and
fails only where this machine is not the head machine (binding 10.0.0.10), and podworker accepts
every example command line and fails only on the missing key file. The systemd units pass
`systemd-analyze verify` (pointed at the built binaries), and, as deploy.md says, enrolling in
a data dir another account owns is refused, naming that account (audit M8).
Usage: deploy_examples_test.py SOURCE_DIR PODSCHED PODWORKER"""
import hashlib, os, pwd, re, shlex, subprocess, sys, tempfile

src, podsched, podworker = sys.argv[1:4]
ex = os.path.join(src, "deploy/examples/cluster")
keys = lambda: dict(l.split(": ", 1) for l in subprocess.run(
    [podworker, "keygen"], capture_output=True, text=True, check=True).stdout.split("\n") if ": " in l)
fails = 0
with tempfile.TemporaryDirectory() as tmp:
    text = open(os.path.join(ex, "podsched.yaml")).read()
    text = text.replace("REPLACE-WITH-THE-SERVER-SECRET-KEY-40CHS", keys()["secret-key"])
    text = re.sub(r"REPLACE-WITH-PUBLIC-KEY-OF-AGENT-m\d-40CH", lambda _: keys()["public-key"], text)
    text = re.sub(r"REPLACE-WITH-SHA256-OF-[A-Z]+-TOKEN", hashlib.sha256(b"x").hexdigest(), text)
    if "REPLACE" in text:
        print("FAIL - placeholders left in podsched.yaml"); fails += 1
    cfg = os.path.join(tmp, "podsched.yaml")
    open(cfg, "w").write(text)
    r = subprocess.run([podsched, "--config", cfg, "--data-dir", os.path.join(tmp, "var")],
                       capture_output=True, text=True, timeout=30)
    out = r.stdout + r.stderr
    if r.returncode != 0 and "10.0.0.10" in out and "bind" in out:
        print("ok   - podsched.yaml parses; podsched stops only at binding 10.0.0.10")
    else:
        print("FAIL - podsched.yaml: exit %d: %s" % (r.returncode, out[-400:])); fails += 1
    for f in sorted(os.listdir(ex)):
        if not f.startswith("podworker-"):
            continue
        line = [l for l in open(os.path.join(ex, f)) if l.startswith("PODWORKER_ARGS=")][0]
        args = shlex.split(line.split("=", 1)[1].strip().strip('"'))
        r = subprocess.run([podworker, "--agent-id", "m", "--state-dir", os.path.join(tmp, f)] + args,
                           capture_output=True, text=True, timeout=30)
        if "cannot read --bus-key-file" in r.stderr:
            print("ok   - %s: podworker accepts the command line" % f)
        else:
            print("FAIL - %s: exit %d: %s" % (f, r.returncode, r.stderr[-400:])); fails += 1
    # The units as systemd reads them (unknown directives, bad values), the binaries at hand.
    units = os.path.join(tmp, "units")
    os.makedirs(units)
    for unit, binary in (("podsched.service", podsched), ("podworker@.service", podworker)):
        body = open(os.path.join(src, "deploy/systemd", unit)).read()
        body = body.replace("/usr/local/bin/" + os.path.basename(binary), binary)
        open(os.path.join(units, unit), "w").write(body)
    for unit in ("podsched.service", "podworker@m1.service"):
        r = subprocess.run(["systemd-analyze", "verify", os.path.join(units, unit)],
                           capture_output=True, text=True, timeout=60)
        noise = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
        if r.returncode == 0 and not noise:
            print("ok   - systemd-analyze verify %s" % unit)
        else:
            print("FAIL - systemd-analyze verify %s: exit %d: %s" % (unit, r.returncode, noise))
            fails += 1
    # Enrolment as another account than the data dir's owner is refused, saying whom to run as.
    if os.geteuid() == 0:
        data = os.path.join(tmp, "owned")
        os.makedirs(data)
        nobody = pwd.getpwnam("nobody")
        os.chown(data, nobody.pw_uid, nobody.pw_gid)
        plain = os.path.join(tmp, "plain.yaml")
        open(plain, "w").write("data_dir: %s\n" % data)
        r = subprocess.run([podsched, "--config", plain, "agent", "enroll", "--agent-id", "m1",
                            "--hosts", "0-3", "--out", os.path.join(tmp, "m1.key")],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0 and "runuser -u nobody" in r.stderr and not os.path.exists(
                os.path.join(data, "agents.keys")):
            print("ok   - enrolling as root in a data dir nobody owns is refused: %s" %
                  r.stderr.strip().splitlines()[-1][:120])
        else:
            print("FAIL - enrol as root in nobody's data dir: exit %d: %s" % (
                r.returncode, r.stderr[-400:])); fails += 1
sys.exit(1 if fails else 0)
