// The MLP classifier podtrain trains: `depth` hidden layers of `hidden` ReLU units (optionally
// batch-normalised before the ReLU), a linear output layer of `classes` logits, softmax
// cross-entropy loss.
//
// Parameters live in one flat float vector (ParamLayout gives each tensor's offset), the unit of
// all-reduce, sharding and checkpoints. ForwardBackward computes, for the local examples, the
// gradient of the SUMMED loss and adds it example by example into a GradAccumulator:
//   exact mode  every per-example term is quantized (fixed_point.h) and added in int64, so the
//               global sum over the batch is the same bits for any split of the batch;
//   float mode  terms are added in float in local example order (depends on the split).
// Batch norm statistics (mean, variance over the GLOBAL batch) and the two per-feature sums
// its backward pass needs are summed across replicas through a Reducer, in the same mode. With
// batch norm off, ForwardBackward makes no Reducer call.
//
// Thread safety: functions are pure apart from the Reducer and the accumulator passed in.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/train/data.h"
#include "worker/train/fixed_point.h"

namespace podsched::train {

struct ModelConfig {
  int input_dim = 16;
  int hidden = 64;
  int depth = 2;  // hidden layers
  int classes = 8;
  bool batchnorm = false;
  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

// "input_dim must be >= 1", ... or OK.
Status ValidateModelConfig(const ModelConfig& config);

struct LayerLayout {
  int in = 0, out = 0;
  size_t w = 0, b = 0;  // offsets of W (out x in, row-major) and b (out)
  bool bn = false;
  size_t gamma = 0, beta = 0;  // offsets when bn
};

class ParamLayout {
 public:
  explicit ParamLayout(const ModelConfig& config);
  size_t size() const { return size_; }
  const std::vector<LayerLayout>& layers() const { return layers_; }

 private:
  std::vector<LayerLayout> layers_;
  size_t size_ = 0;
};

// He-initialised weights, zero biases, gamma 1, beta 0; a pure function of (config, seed).
std::vector<float> InitParams(const ModelConfig& config, uint64_t seed);

enum class ReduceMode { kExact, kFloat };

// Sums vectors across replicas, in place. The MPI driver implements it with MPI_Allreduce;
// LocalReducer (one replica) leaves the values as they are.
class Reducer {
 public:
  virtual ~Reducer() = default;
  virtual void SumInt64(std::span<int64_t> values) = 0;
  virtual void SumFloat(std::span<float> values) = 0;
};

class LocalReducer final : public Reducer {
 public:
  void SumInt64(std::span<int64_t>) override {}
  void SumFloat(std::span<float>) override {}
};

// Per-element gradient sums over examples, in fixed point or float. `padded_size` >= the number
// of parameters (the driver pads to a multiple of the world size for reduce-scatter).
class GradAccumulator {
 public:
  GradAccumulator(ReduceMode mode, size_t padded_size, int64_t global_terms);
  ReduceMode mode() const { return mode_; }
  void Clear();
  void Add(size_t i, float value) {
    if (mode_ == ReduceMode::kFloat) {
      floats_[i] += value;
      return;
    }
    int64_t q;
    if (Quantize(value, bound_, q)) {
      fixed_[i] += q;
    } else if (!overflowed_) {
      overflowed_ = true;
      overflow_value_ = value;
    }
  }
  // kResourceExhausted naming the value if any Add overflowed since Clear().
  Status CheckOverflow() const;
  std::vector<int64_t>& fixed() { return fixed_; }
  std::vector<float>& floats() { return floats_; }
  int64_t bound() const { return bound_; }
  int64_t global_terms() const { return terms_; }

 private:
  ReduceMode mode_;
  int64_t terms_;
  int64_t bound_;
  std::vector<int64_t> fixed_;
  std::vector<float> floats_;
  bool overflowed_ = false;
  double overflow_value_ = 0;
};

struct LossStats {
  double loss_sum = 0;  // summed cross-entropy of the local examples
  int64_t correct = 0;  // local examples whose argmax is the label
};

// Forward and backward pass of the local examples of a global batch of `global_batch`
// examples; adds d(sum of losses)/d(params) into `grad`. Fails (kResourceExhausted) on a
// fixed-point overflow in exact mode.
Result<LossStats> ForwardBackward(const ModelConfig& config, const ParamLayout& layout,
                                  std::span<const float> params, const Dataset& local,
                                  int global_batch, Reducer& reducer, GradAccumulator& grad);

// Mean loss and accuracy of `data` on one process (batch norm uses the statistics of `data`).
struct EvalStats {
  double mean_loss = 0;
  double accuracy = 0;
};
EvalStats Evaluate(const ModelConfig& config, std::span<const float> params, const Dataset& data);

// ---- Batch-norm statistics, exposed for tests: local partial sums, then finalisation. ----
// Exact mode: per-feature sums of quantize(z) over the local rows of z (n x features).
std::vector<int64_t> LocalSumFixed(std::span<const float> z, int features, int64_t bound);
// Exact mode: per-feature sums of quantize((z - mean)^2).
std::vector<int64_t> LocalSquaredDevFixed(std::span<const float> z, std::span<const float> mean,
                                          int64_t bound);
struct BatchStats {
  std::vector<float> mean, var;
};
// Mean and (biased) variance over the global batch through `reducer`.
Result<BatchStats> ComputeBatchStats(std::span<const float> z, int features, int global_n,
                                     ReduceMode mode, Reducer& reducer);

}  // namespace podsched::train
