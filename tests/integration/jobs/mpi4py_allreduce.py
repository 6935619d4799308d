#!/usr/bin/python3
"""An mpi4py program run by podsched (launcher: mpi): the contract's RANK and WORLD_SIZE agree
with MPI's, and an all-reduce across the slice sums to what it should."""
import os
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
errors = []
if int(os.environ["RANK"]) != rank or int(os.environ["WORLD_SIZE"]) != size:
    errors.append("RANK/WORLD_SIZE %s/%s but MPI says %d/%d"
                  % (os.environ["RANK"], os.environ["WORLD_SIZE"], rank, size))
if int(os.environ["NODE_RANK"]) != rank // int(os.environ["LOCAL_WORLD_SIZE"]):
    errors.append("NODE_RANK %s for rank %d" % (os.environ["NODE_RANK"], rank))
total = comm.allreduce(rank + 1, op=MPI.SUM)
if total != size * (size + 1) // 2:
    errors.append("allreduce gave %d" % total)
print("rank %d of %d on host %s: sum %d" % (rank, size, os.environ["POD_HOST"], total), flush=True)
if errors:
    print("CONTRACT ERROR: " + "; ".join(errors), flush=True)
    sys.exit(1)
