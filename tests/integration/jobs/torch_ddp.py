#!/usr/bin/python3
"""A PyTorch DDP training script as a torchrun user writes it, run by podsched (launcher: exec).

It reads only the standard names (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT through
init_method="env://") plus POD_CHECKPOINT_DIR, saves with torch.save when SIGTERM arrives (the
ranks agree on the step to stop at with one all-reduce per step), exits 75 ("preempted,
checkpoint saved"), and resumes from the saved step. Gradients are averaged by a DDP comm hook
that sums them in rank order, so that a resumed run is bit-identical to an uninterrupted one. At the end rank 0 writes the SHA-256 of
the parameters to POD_CHECKPOINT_DIR/final.sha256, so that two runs can be compared bit for bit.

  torch_ddp.py STEPS [SECONDS_PER_STEP]
"""
import hashlib
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

steps = int(sys.argv[1])
pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
stop_requested = False


def on_sigterm(signum, frame):
    global stop_requested
    stop_requested = True


signal.signal(signal.SIGTERM, on_sigterm)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
dist.init_process_group("gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
assert rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"])

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
ddp = DDP(model)


def rank_order_allreduce(state, bucket):
    """Gradients summed in rank order: bit-identical whatever DDP's bucket layout. (DDP re-buckets
    after its first iteration, a resumed run has a first iteration of its own, and gloo's ring
    all-reduce adds each element in an order that depends on its place in the bucket.)"""
    grads = bucket.buffer()
    parts = [torch.empty_like(grads) for _ in range(world)]
    dist.all_gather(parts, grads)
    total = parts[0].clone()
    for p in parts[1:]:
        total += p
    fut = torch.futures.Future()
    fut.set_result(total / world)
    return fut


ddp.register_comm_hook(None, rank_order_allreduce)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
ckpt_dir = os.environ["POD_CHECKPOINT_DIR"]
ckpt = os.path.join(ckpt_dir, "ckpt.pt")
start = 0
if os.path.exists(ckpt):
    state = torch.load(ckpt)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
    print("rank %d: resumed at step %d" % (rank, start), flush=True)

for step in range(start, steps):
    g = torch.Generator().manual_seed(step * 1000 + rank)  # this rank's batch of this step
    x = torch.randn(8, 16, generator=g)
    y = x.sum(dim=1, keepdim=True).sin()
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print("POD_PROGRESS step=%d total_steps=%d loss=%.6f checkpoint_step=%d lr=0.05"
              % (step + 1, steps, loss.item(), start), flush=True)
    time.sleep(pause)
    stop = torch.tensor([1 if stop_requested else 0])
    dist.all_reduce(stop, op=dist.ReduceOp.MAX)  # every rank stops after the same step
    if stop.item() and step + 1 < steps:
        if rank == 0:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step + 1},
                       ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
            print("rank 0: preempted, saved step %d" % (step + 1), flush=True)
        dist.barrier()
        sys.exit(75)

if rank == 0:
    digest = hashlib.sha256()
    for p in model.state_dict().values():
        digest.update(p.detach().numpy().tobytes())
    with open(os.path.join(ckpt_dir, "final.sha256"), "w") as f:
        f.write(digest.hexdigest() + "\n")
    print("rank 0: done, parameters %s" % digest.hexdigest(), flush=True)
dist.destroy_process_group()
