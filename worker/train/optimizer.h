// The sharded optimizer: which parameters each rank owns, and the update of one shard.
//
// The P parameters are padded to a multiple of the world size W; rank r owns the contiguous
// range [r * S, min(P, (r + 1) * S)) with S = ceil(P / W) (the last ranks may own fewer or none).
// Every rank holds all parameters (for the forward pass) but only its shard's optimizer state.
//
// UpdateShard is elementwise: parameter k's new value depends only on its old value, its state
// and its gradient, never on k's neighbours or on the shard bounds. So any split of the
// parameters into shards produces the same bits as one process updating everything.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"

namespace podsched::train {

enum class OptimizerKind { kSgd, kAdam };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdam;
  float lr = 0.01f;
  float momentum = 0.9f;  // sgd
  float beta1 = 0.9f;     // adam
  float beta2 = 0.999f;   // adam
  float eps = 1e-8f;      // adam
  friend bool operator==(const OptimizerConfig&, const OptimizerConfig&) = default;
};

std::string_view OptimizerName(OptimizerKind kind);  // "sgd" | "adam"
Result<OptimizerKind> ParseOptimizer(std::string_view name);

// Number of per-parameter state tensors: 1 (sgd momentum buffer) or 2 (adam m and v).
int NumStateTensors(OptimizerKind kind);

struct ShardRange {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};

// ceil(num_params / world) * world.
size_t PaddedSize(size_t num_params, int world);
ShardRange ShardOf(size_t num_params, int world, int rank);

// One optimizer step t (1-based, the step being taken) on a shard: `grad` is the mean gradient
// of the shard's parameters; `state0`/`state1` are its state tensors (state1 empty for sgd).
void UpdateShard(const OptimizerConfig& config, int64_t t, std::span<const float> grad,
                 std::span<float> params, std::span<float> state0, std::span<float> state1);

}  // namespace podsched::train
