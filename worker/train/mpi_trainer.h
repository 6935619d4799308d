// The MPI driver of podtrain: data-parallel training with a sharded optimizer, exact (or float)
// all-reduce, asynchronous checkpoints, SIGTERM handling and restore with resharding.
// docs/podtrain.md describes the protocol; exit_codes.h the outcomes.
#pragma once

#include <csignal>

#include "worker/train/flags.h"

namespace podsched::train {

// Set by the SIGTERM handler; read at step boundaries.
extern volatile std::sig_atomic_t g_sigterm;

// Runs training on MPI_COMM_WORLD (MPI already initialised, thread level >= FUNNELED). Every
// rank returns the same exit code.
int RunTrainer(const TrainOptions& options);

}  // namespace podsched::train
