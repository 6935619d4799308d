#!/usr/bin/env python3
"""podsim replays a trace the same whatever the order of its rows (issue: the public Philly trace
is distributed unsorted, and a replay of it in file order left 69% of the jobs "QUEUED: backoff
after a failure").

  podsim_order_test.py PODSIM

For a Philly-format trace and a podsim CSV with arrays and dependencies, both written here from a
fixed seed: the rows sorted by time and the same rows shuffled (three fixed permutations) must
give the same JSON report (wall-clock fields aside), and every job must finish.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

PODSIM = sys.argv[1]
POLICIES = "fifo-first-fit,fair-best-fit"


def replay(path, fmt):
    out = subprocess.run([PODSIM, "replay", "--trace", path, "--format", fmt, "--policies",
                          POLICIES, "--json"], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"podsim replay {path} failed ({out.returncode}): {out.stderr}")
    report = json.loads(out.stdout)
    for policy in report.values():  # measured, not simulated: differ from run to run
        policy.pop("wall_s", None)
        policy.pop("events_per_s", None)
    return report


def write(directory, name, header, rows):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(header + "\n" + "".join(r + "\n" for r in rows))
    return path


def check_same(directory, fmt, header, rows):
    reference = replay(write(directory, f"sorted.{fmt}", header, rows), fmt)
    for policy, r in reference.items():
        assert r["unfinished"] == 0, f"{fmt} {policy}: {r['unfinished']} jobs never finished"
        assert r["completed"] > 0, f"{fmt} {policy}: nothing completed"
    for seed in (1, 2, 3):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        got = replay(write(directory, f"shuffled{seed}.{fmt}", header, shuffled), fmt)
        if got != reference:
            diff = [k for k in reference[next(iter(reference))]
                    if got[next(iter(got))].get(k) != reference[next(iter(reference))][k]]
            sys.exit(f"{fmt}: permutation {seed} gives another report; fields differing: {diff}")
    print(f"{fmt}: {len(rows)} rows, sorted and 3 permutations give the same report; "
          + ", ".join(f"{p}: {r['completed']} completed" for p, r in reference.items()))


def philly_rows(rng, n):
    rows = []
    for _ in range(n):
        day, hour, minute, second = rng.randint(1, 9), rng.randint(0, 23), rng.randint(0, 59), \
            rng.choice([0, 30])  # many rows share a second
        gpus = rng.choice([1, 1, 1, 2, 4, 8, 8, 16, 32, 64, 600])  # 600: larger than a pod
        duration = rng.choice([60, 600, 3600, 7200, 36000])
        rows.append(f"2017-10-0{day} {hour:02d}:{minute:02d}:{second:02d},{duration}.0,{gpus},"
                    f"{duration * gpus}.0,c{rng.randint(0, 5)}")
    rows.sort()  # by timestamp, as the file in shared/data happens to be
    return rows


def podsim_rows(directory):
    path = os.path.join(directory, "gen.csv")
    subprocess.run([PODSIM, "gen", "--jobs", "800", "--seed", "5", "--mix", "gangs", "--arrays",
                    "0.1", "--chains", "0.3", "--fails", "0.02", "--out", path], check=True,
                   timeout=60)
    with open(path) as f:
        lines = f.read().splitlines()
    return lines[0], lines[1:]


def main():
    with tempfile.TemporaryDirectory() as directory:
        check_same(directory, "philly", "timestamp,duration,num_gpus,gpu_time,cluster",
                   philly_rows(random.Random(11), 1500))
        header, rows = podsim_rows(directory)
        check_same(directory, "podsim", header, rows)


main()
