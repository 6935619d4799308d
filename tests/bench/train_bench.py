#!/usr/bin/python3
"""podtrain benchmarks (tests/bench/train.cmake; figures in docs/bench-train.md).

  train_bench.py PODTRAIN ALLREDUCE_BENCH [--smoke] [--only step|allreduce]

1. Step time with asynchronous checkpointing on and off: the same podtrain run (W=2) with
   --checkpoint-every K and without checkpoints; overhead % of the mean step time (median of
   several runs each).
2. podtrain's gradient reduction (the ring reduce-scatter, exact and float) and the exact
   all-reduce built on it, against float MPI_Allreduce, at W=1, 2, 4, 8 for 1M and 10M
   parameters (bench_train_allreduce.cc).
Prints FIGURE lines. Asserts nothing about time.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

podtrain, allreduce = sys.argv[1], sys.argv[2]
smoke = "--smoke" in sys.argv
only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def mpirun(np, args):
    out = subprocess.run(["mpirun", "--oversubscribe", "-np", str(np)] + args, env=env,
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit("failed: %s\n%s" % (args, out.stderr[-2000:]))
    return out.stdout


def mean_step_ms(args):
    out = mpirun(2, [podtrain] + args)
    return float(re.search(r"summary steps=\d+ mean_step_ms=([\d.]+)", out).group(1))


tmp = tempfile.mkdtemp(prefix="podtrain-bench-")
try:
    if smoke:
        model = ["--hidden", "64", "--steps", "12", "--global-batch", "16"]
        every, runs = 4, 1
    else:
        # About 215k parameters (2.6 MB of checkpoint state with Adam), saved every 10 steps.
        model = ["--input-dim", "64", "--hidden", "256", "--depth", "4", "--steps", "100",
                 "--global-batch", "16", "--progress-every", "1000"]
        every, runs = 10, 3
    off, on = [], []
    for i in range(runs if only != "allreduce" else 0):
        off.append(mean_step_ms(model))
        url = "file://" + os.path.join(tmp, "ck%d" % i)
        on.append(mean_step_ms(model + ["--checkpoint-url", url, "--checkpoint-every", str(every)]))
    if off:
        off_ms, on_ms = statistics.median(off), statistics.median(on)
        overhead = 100.0 * (on_ms - off_ms) / off_ms
        print("step time W=2 %s: checkpoints off %.3f ms, async every %d steps %.3f ms (runs off=%s on=%s)"
              % (" ".join(model), off_ms, every, on_ms, off, on))
        print("FIGURE train_step_ms_no_ckpt %.3f ms" % off_ms)
        print("FIGURE train_step_ms_async_ckpt %.3f ms" % on_ms)
        print("FIGURE train_async_ckpt_overhead %.1f %%" % overhead)

    sizes = ["--params", "1000"] if smoke else ["--params", "1000000", "--params", "10000000"]
    worlds = [1, 2] if smoke else [1, 2, 4, 8]
    for w in worlds if only != "step" else []:
        sys.stdout.write(mpirun(w, [allreduce] + sizes + ["--reps", "3" if smoke else "7"]))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
