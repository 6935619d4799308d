// Ring reduce-scatter: the gradient reduction of every podtrain step.
//
// The vector of W * B elements is W blocks of B; after the reduction rank r's block r holds the
// sum of every rank's block r. In W - 1 steps each rank sends one block (its partial sum) to the
// next rank in the ring and adds the block it receives from the previous one, so each rank sends
// and receives (W - 1) * B elements: the least any reduce-scatter can move.
//
// Why not MPI_Reduce_scatter_block: Debian's OpenMPI 4.1 takes 3.4-9x this ring's time for it
// on one host at 1M and 10M elements, longer than its own MPI_Allreduce of the whole vector
// (docs/bench-train.md). The int64 sum is exact, so the result does not depend on the order of
// the additions; the float sum does, and the ring fixes that order for a given W.
//
// RingReduceScatterStep is the schedule, pure and unit-tested; RingReduceScatter
// (ring_reduce_mpi.h, which includes <mpi.h>) runs it over MPI.
#pragma once

namespace podsched::train {

struct RingStep {
  int send_block = 0;  // this rank's partial sum of it goes to rank + 1
  int recv_block = 0;  // rank - 1's partial sum of it arrives and is added to this rank's
};

// The blocks rank `rank` of `world` sends and receives at `step` (0 .. world - 2). The block
// received at the last step is `rank`'s own, complete after the addition.
inline RingStep RingReduceScatterStep(int rank, int world, int step) {
  return RingStep{(rank - step - 1 + 2 * world) % world, (rank - step - 2 + 2 * world) % world};
}

}  // namespace podsched::train
