#!/usr/bin/python3
"""Checks the framework variables of its rank against the slice (POD_HOSTS, POD_HOST_ADDRS) and
its host's own variables (the agent's tag, the preempt file, no rsh secrets), and prints them
with who started it ("started-by launch" for a rank that `podworker launch` started itself);
exits 1 with CONTRACT ERROR lines when one is wrong. Any launcher."""
import json
import os
import sys

env = os.environ
errors = []
hosts = env["POD_HOSTS"].split(",")
addrs = env["POD_HOST_ADDRS"].split(",")
rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
local, per_host = int(env["LOCAL_RANK"]), int(env["LOCAL_WORLD_SIZE"])
node = int(env["NODE_RANK"])
if world != len(hosts) * per_host:
    errors.append("WORLD_SIZE %d for %d hosts x %d" % (world, len(hosts), per_host))
if node != rank // per_host or local != rank % per_host:
    errors.append("rank %d: NODE_RANK %d LOCAL_RANK %d" % (rank, node, local))
if hosts[node] != env["POD_HOST"]:
    errors.append("rank %d runs on host %s, not %s" % (rank, env["POD_HOST"], hosts[node]))
if env["MASTER_ADDR"] != addrs[0]:
    errors.append("MASTER_ADDR %s is not host %s's %s" % (env["MASTER_ADDR"], hosts[0], addrs[0]))
if env["JAX_COORDINATOR_ADDRESS"] != "%s:%d" % (addrs[0], int(env["MASTER_PORT"]) + 1):
    errors.append("JAX_COORDINATOR_ADDRESS %s" % env["JAX_COORDINATOR_ADDRESS"])
if int(env["JAX_NUM_PROCESSES"]) != world or int(env["JAX_PROCESS_ID"]) != rank:
    errors.append("JAX_NUM_PROCESSES/JAX_PROCESS_ID %s/%s" % (env["JAX_NUM_PROCESSES"],
                                                             env["JAX_PROCESS_ID"]))
tf = json.loads(env["TF_CONFIG"])
workers = tf["cluster"]["worker"]
if len(workers) != world or tf["task"] != {"type": "worker", "index": rank}:
    errors.append("TF_CONFIG %s" % env["TF_CONFIG"])
elif not workers[rank].startswith(addrs[node] + ":") or len(set(workers)) != world:
    errors.append("TF_CONFIG worker %d is %s (host address %s)" % (rank, workers[rank], addrs[node]))
for name in ("POD_JOB_ID", "POD_EPOCH", "POD_PREEMPT_FILE", "POD_CHECKPOINT_DIR"):
    if not env.get(name):
        errors.append(name + " is not set")
# The host's own variables, the same however the rank was started (by rsh or by the launcher).
tag = "%s:%s:%s:%d" % (env.get("POD_JOB_ID"), env.get("POD_EPOCH"), env["POD_HOST"], rank)
if env.get("PODWORKER_TAG") != tag:
    errors.append("PODWORKER_TAG %s, not %s" % (env.get("PODWORKER_TAG"), tag))
if os.path.basename(env.get("POD_PREEMPT_FILE", "")) != "h%s.preempt" % env["POD_HOST"]:
    errors.append("POD_PREEMPT_FILE %s is not host %s's" % (env.get("POD_PREEMPT_FILE"),
                                                              env["POD_HOST"]))
if not env.get("OMPI_MCA_orte_tmpdir_base", "").endswith("/h%s/ompi" % env["POD_HOST"]):
    errors.append("OMPI_MCA_orte_tmpdir_base %s" % env.get("OMPI_MCA_orte_tmpdir_base"))
# The agent's hwloc default (worker/agent/mpi_runtime_env.h): the job's env does not set it.
if env.get("HWLOC_COMPONENTS") != "-pci,-linuxio":
    errors.append("HWLOC_COMPONENTS %r, not the agent's -pci,-linuxio" % env.get("HWLOC_COMPONENTS"))
secrets = sorted(n for n in env if n.startswith("POD_RSH_"))
if secrets:
    errors.append("the rsh side channel's variables reached the rank: " + ", ".join(secrets))
with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
    parent = f.read().split(b"\0")
started_by = "launch" if len(parent) > 1 and parent[1] == b"launch" else "other"
print("rank %d/%d node %d local %d host %s master %s:%s tf-worker %s started-by %s"
      % (rank, world, node, local, env["POD_HOST"], env["MASTER_ADDR"], env["MASTER_PORT"],
         workers[rank], started_by), flush=True)
for e in errors:
    print("CONTRACT ERROR: " + e, flush=True)
sys.exit(1 if errors else 0)
