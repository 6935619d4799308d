// podtrain's command line: `podtrain [train flags]` and `podtrain gen-data ...`.
//
// The job contract's environment fills what flags leave out: POD_JOB_ID, POD_EPOCH,
// POD_CHECKPOINT_URL, POD_PROGRESS_ENDPOINT (docs/podtrain.md). Flags win over the environment.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/status.h"
#include "worker/train/model.h"
#include "worker/train/optimizer.h"

namespace podsched::train {

struct TrainOptions {
  int64_t steps = 200;
  int global_batch = 64;
  int64_t checkpoint_every = 0;  // 0: only on SIGTERM and at the end
  std::string checkpoint_url;    // empty: no checkpoints
  int keep = 3;
  uint64_t seed = 1;
  ReduceMode allreduce = ReduceMode::kExact;
  OptimizerConfig optimizer;
  ModelConfig model;
  std::string data_url;  // empty: generate the data set in memory
  uint64_t train_examples = 4096;
  uint64_t eval_examples = 1024;
  int64_t progress_every = 10;
  std::string job = "standalone";
  int64_t epoch = 0;
  std::string progress_endpoint;  // "udp://127.0.0.1:PORT" or empty
  std::string progress_key;       // POD_PROGRESS_KEY, sent in every datagram
  std::string pid_dir;            // each rank writes rank-R.pid here
  int min_step_ms = 0;            // pads each step to at least this long (simulates a bigger model)
  int write_delay_ms = 0;         // sleep per 1 MiB shard chunk written (fault-injection tests)
  int manifest_delay_ms = 0;      // rank 0 sleeps before writing a manifest (fault-injection tests)
};

struct GenDataOptions {
  std::string out_url;
  uint64_t examples = 4096;  // training examples
  uint64_t eval_examples = 1024;
  int shards = 4;
  uint64_t seed = 1;
  int input_dim = 16;
  int classes = 8;
};

struct Command {
  enum class Kind { kTrain, kGenData, kHelp } kind = Kind::kTrain;
  TrainOptions train;
  GenDataOptions gen;
  std::string help;  // for kHelp
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// kInvalidArgument with a message naming the flag for bad usage.
Result<Command> ParseCommandLine(int argc, const char* const* argv, const EnvLookup& env);

// The checks that need the world size: global batch divisible by it.
Status CheckWorldSize(const TrainOptions& options, int world);

std::string_view ReduceModeName(ReduceMode mode);  // "exact" | "float"

}  // namespace podsched::train
