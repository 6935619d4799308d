#include "worker/train/optimizer.h"

#include <cmath>

#include "common/check.h"

namespace podsched::train {

std::string_view OptimizerName(OptimizerKind kind) {
  return kind == OptimizerKind::kSgd ? "sgd" : "adam";
}

Result<OptimizerKind> ParseOptimizer(std::string_view name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "adam") return OptimizerKind::kAdam;
  return InvalidArgument("unknown optimizer '" + std::string(name) + "'; valid: sgd, adam");
}

int NumStateTensors(OptimizerKind kind) { return kind == OptimizerKind::kSgd ? 1 : 2; }

size_t PaddedSize(size_t num_params, int world) {
  PODSCHED_CHECK(world > 0);
  const size_t w = static_cast<size_t>(world);
  return (num_params + w - 1) / w * w;
}

ShardRange ShardOf(size_t num_params, int world, int rank) {
  PODSCHED_CHECK(rank >= 0 && rank < world);
  const size_t s = PaddedSize(num_params, world) / world;
  ShardRange r;
  r.begin = std::min(num_params, s * rank);
  r.end = std::min(num_params, s * (rank + 1));
  return r;
}

void UpdateShard(const OptimizerConfig& c, int64_t t, std::span<const float> grad,
                 std::span<float> params, std::span<float> state0, std::span<float> state1) {
  PODSCHED_CHECK(grad.size() == params.size() && state0.size() == params.size());
  if (c.kind == OptimizerKind::kSgd) {
    for (size_t k = 0; k < params.size(); ++k) {
      state0[k] = c.momentum * state0[k] + grad[k];
      params[k] -= c.lr * state0[k];
    }
    return;
  }
  PODSCHED_CHECK(state1.size() == params.size() && t >= 1);
  // Bias corrections in double, computed the same way on every rank from t alone.
  const double c1 = 1.0 - std::pow(static_cast<double>(c.beta1), static_cast<double>(t));
  const double c2 = 1.0 - std::pow(static_cast<double>(c.beta2), static_cast<double>(t));
  for (size_t k = 0; k < params.size(); ++k) {
    const float g = grad[k];
    state0[k] = c.beta1 * state0[k] + (1.0f - c.beta1) * g;
    state1[k] = c.beta2 * state1[k] + (1.0f - c.beta2) * g * g;
    const double mhat = state0[k] / c1;
    const double vhat = state1[k] / c2;
    params[k] -= static_cast<float>(c.lr * mhat / (std::sqrt(vhat) + c.eps));
  }
}

}  // namespace podsched::train
