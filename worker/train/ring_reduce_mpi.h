// RingReduceScatter: ring_reduce.h's schedule over MPI (this header includes <mpi.h>).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "worker/train/ring_reduce.h"

namespace podsched::train {

// Collective over `comm`: every rank passes a vector of the same size, a multiple of the
// communicator's size W. Sums block r of every rank's `data` into rank r's block r, in place,
// and returns that block; the other blocks are left holding partial sums. `scratch` is resized
// to one piece of a block (at most 1 MiB) and reused across calls. MPI errors abort
// (MPI_ERRORS_ARE_FATAL), as every other collective of podtrain does.
std::span<int64_t> RingReduceScatter(std::span<int64_t> data, std::vector<int64_t>& scratch,
                                     MPI_Comm comm);
std::span<float> RingReduceScatter(std::span<float> data, std::vector<float>& scratch,
                                   MPI_Comm comm);

}  // namespace podsched::train
