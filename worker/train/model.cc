#include "worker/train/model.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace podsched::train {
namespace {

constexpr float kBnEps = 1e-5f;
constexpr uint64_t kInitSalt = 0x696e6974ULL;

// What the backward pass needs from the forward pass of one layer.
struct LayerCache {
  std::vector<float> in;       // n x layer.in
  std::vector<float> z;        // n x layer.out, before batch norm (logits for the last layer)
  std::vector<float> xhat;     // n x out, normalised z (bn only)
  std::vector<float> inv_std;  // out (bn only)
  std::vector<float> u;        // n x out, input of the ReLU (hidden layers)
};

void Linear(const LayerLayout& lay, std::span<const float> params, const std::vector<float>& in,
            size_t n, std::vector<float>& z) {
  z.assign(n * lay.out, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    const float* x = &in[i * lay.in];
    for (int o = 0; o < lay.out; ++o) {
      const float* w = &params[lay.w + static_cast<size_t>(o) * lay.in];
      float acc = params[lay.b + o];
      for (int j = 0; j < lay.in; ++j) acc += w[j] * x[j];
      z[i * lay.out + o] = acc;
    }
  }
}

Result<std::vector<LayerCache>> Forward(const ParamLayout& layout, std::span<const float> params,
                                        const Dataset& data, int global_n, ReduceMode mode,
                                        Reducer& reducer) {
  const size_t n = data.size();
  std::vector<LayerCache> caches(layout.layers().size());
  std::vector<float> act = data.x;
  for (size_t l = 0; l < layout.layers().size(); ++l) {
    const LayerLayout& lay = layout.layers()[l];
    LayerCache& c = caches[l];
    c.in = std::move(act);
    Linear(lay, params, c.in, n, c.z);
    if (l + 1 == layout.layers().size()) break;
    c.u = c.z;
    if (lay.bn) {
      auto stats = ComputeBatchStats(c.z, lay.out, global_n, mode, reducer);
      if (!stats) return std::unexpected(stats.error());
      c.inv_std.resize(lay.out);
      for (int o = 0; o < lay.out; ++o) c.inv_std[o] = 1.0f / std::sqrt(stats->var[o] + kBnEps);
      c.xhat.resize(n * lay.out);
      for (size_t i = 0; i < n; ++i) {
        for (int o = 0; o < lay.out; ++o) {
          const size_t k = i * lay.out + o;
          c.xhat[k] = (c.z[k] - stats->mean[o]) * c.inv_std[o];
          c.u[k] = params[lay.gamma + o] * c.xhat[k] + params[lay.beta + o];
        }
      }
    }
    act.resize(c.u.size());
    for (size_t k = 0; k < c.u.size(); ++k) act[k] = std::max(0.0f, c.u[k]);
  }
  return caches;
}

// Softmax cross-entropy of each row of `logits`; writes d(loss_i)/d(logits_i) into `dlogits`.
LossStats SoftmaxCrossEntropy(const std::vector<float>& logits, const Dataset& data,
                              std::vector<float>* dlogits) {
  const int classes = data.classes;
  LossStats stats;
  if (dlogits) dlogits->resize(logits.size());
  for (size_t i = 0; i < data.size(); ++i) {
    const float* row = &logits[i * classes];
    const float mx = *std::max_element(row, row + classes);
    double denom = 0;
    for (int c = 0; c < classes; ++c) denom += std::exp(static_cast<double>(row[c] - mx));
    const int label = data.label[i];
    stats.loss_sum += std::log(denom) - (row[label] - mx);
    if (std::max_element(row, row + classes) - row == label) ++stats.correct;
    if (!dlogits) continue;
    for (int c = 0; c < classes; ++c) {
      const double p = std::exp(static_cast<double>(row[c] - mx)) / denom;
      (*dlogits)[i * classes + c] = static_cast<float>(p - (c == label ? 1.0 : 0.0));
    }
  }
  return stats;
}

// Sums per-feature terms (n x features) across the global batch: [sum of t1 | sum of t2].
Result<std::vector<double>> GlobalFeatureSums(const std::vector<float>& t1,
                                              const std::vector<float>& t2, int features,
                                              ReduceMode mode, int64_t terms, Reducer& reducer) {
  const int64_t bound = FixedBound(terms);
  const size_t n = t1.size() / features;
  std::vector<double> out(2 * features);
  if (mode == ReduceMode::kFloat) {
    std::vector<float> s(2 * features, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      for (int f = 0; f < features; ++f) {
        s[f] += t1[i * features + f];
        s[features + f] += t2[i * features + f];
      }
    }
    reducer.SumFloat(s);
    std::copy(s.begin(), s.end(), out.begin());
    return out;
  }
  std::vector<int64_t> s(2 * features, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int f = 0; f < features; ++f) {
      int64_t q1, q2;
      if (!Quantize(t1[i * features + f], bound, q1) ||
          !Quantize(t2[i * features + f], bound, q2)) {
        return std::unexpected(Status(StatusCode::kResourceExhausted,
                                      OverflowMessage(std::max(std::fabs(t1[i * features + f]),
                                                               std::fabs(t2[i * features + f])),
                                                      terms)));
      }
      s[f] += q1;
      s[features + f] += q2;
    }
  }
  reducer.SumInt64(s);
  for (size_t k = 0; k < s.size(); ++k) out[k] = Dequantize(s[k]);
  return out;
}

// Backward through ReLU and (optionally) batch norm of hidden layer `lay`: turns d/d(output
// activation) in `delta` into d/d(z), adding the gamma and beta gradients into `grad`.
Status HiddenBackward(const LayerLayout& lay, const LayerCache& c, std::span<const float> params,
                      int global_n, Reducer& reducer, GradAccumulator& grad,
                      std::vector<float>& delta) {
  const size_t n = c.u.size() / lay.out;
  for (size_t k = 0; k < delta.size(); ++k) {
    if (c.u[k] <= 0.0f) delta[k] = 0.0f;
  }
  if (!lay.bn) return Status::Ok();
  std::vector<float> dxhat_terms(delta.size());
  for (size_t i = 0; i < n; ++i) {
    for (int o = 0; o < lay.out; ++o) {
      const size_t k = i * lay.out + o;
      dxhat_terms[k] = delta[k] * c.xhat[k];
      grad.Add(lay.beta + o, delta[k]);
      grad.Add(lay.gamma + o, dxhat_terms[k]);
    }
  }
  auto sums =
      GlobalFeatureSums(delta, dxhat_terms, lay.out, grad.mode(), grad.global_terms(), reducer);
  if (!sums) return sums.error();
  const double inv_n = 1.0 / global_n;
  for (size_t i = 0; i < n; ++i) {
    for (int o = 0; o < lay.out; ++o) {
      const size_t k = i * lay.out + o;
      const double mean_du = (*sums)[o] * inv_n;
      const double mean_du_xhat = (*sums)[lay.out + o] * inv_n;
      delta[k] = static_cast<float>(params[lay.gamma + o] * c.inv_std[o] *
                                    (delta[k] - mean_du - c.xhat[k] * mean_du_xhat));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateModelConfig(const ModelConfig& c) {
  if (c.input_dim < 1) return ToStatus(InvalidArgument("--input-dim must be >= 1"));
  if (c.hidden < 1) return ToStatus(InvalidArgument("--hidden must be >= 1"));
  if (c.depth < 0) return ToStatus(InvalidArgument("--depth must be >= 0"));
  if (c.classes < 2) return ToStatus(InvalidArgument("--classes must be >= 2"));
  if (c.batchnorm && c.depth == 0) {
    return ToStatus(InvalidArgument("--batchnorm sync needs at least one hidden layer (--depth)"));
  }
  return Status::Ok();
}

ParamLayout::ParamLayout(const ModelConfig& config) {
  int in = config.input_dim;
  for (int l = 0; l <= config.depth; ++l) {
    LayerLayout lay;
    lay.in = in;
    lay.out = l == config.depth ? config.classes : config.hidden;
    lay.w = size_;
    size_ += static_cast<size_t>(lay.in) * lay.out;
    lay.b = size_;
    size_ += lay.out;
    lay.bn = config.batchnorm && l < config.depth;
    if (lay.bn) {
      lay.gamma = size_;
      size_ += lay.out;
      lay.beta = size_;
      size_ += lay.out;
    }
    layers_.push_back(lay);
    in = lay.out;
  }
}

std::vector<float> InitParams(const ModelConfig& config, uint64_t seed) {
  const ParamLayout layout(config);
  std::vector<float> p(layout.size(), 0.0f);
  const uint64_t key = Mix64(seed, kInitSalt);
  for (const LayerLayout& lay : layout.layers()) {
    const bool output = !lay.bn && &lay == &layout.layers().back();
    const double scale = std::sqrt((output ? 1.0 : 2.0) / lay.in);
    for (size_t k = 0; k < static_cast<size_t>(lay.in) * lay.out; ++k) {
      p[lay.w + k] = static_cast<float>(NormalAt(key, lay.w + k) * scale);
    }
    if (lay.bn) std::fill_n(p.begin() + lay.gamma, lay.out, 1.0f);
  }
  return p;
}

GradAccumulator::GradAccumulator(ReduceMode mode, size_t padded_size, int64_t global_terms)
    : mode_(mode), terms_(global_terms), bound_(FixedBound(global_terms)) {
  if (mode == ReduceMode::kExact) {
    fixed_.assign(padded_size, 0);
  } else {
    floats_.assign(padded_size, 0.0f);
  }
}

void GradAccumulator::Clear() {
  std::fill(fixed_.begin(), fixed_.end(), 0);
  std::fill(floats_.begin(), floats_.end(), 0.0f);
  overflowed_ = false;
}

Status GradAccumulator::CheckOverflow() const {
  if (!overflowed_) return Status::Ok();
  return Status(StatusCode::kResourceExhausted, OverflowMessage(overflow_value_, terms_));
}

Result<LossStats> ForwardBackward(const ModelConfig& config, const ParamLayout& layout,
                                  std::span<const float> params, const Dataset& local,
                                  int global_batch, Reducer& reducer, GradAccumulator& grad) {
  PODSCHED_CHECK(params.size() == layout.size() && local.input_dim == config.input_dim &&
                 local.classes == config.classes);
  auto caches = Forward(layout, params, local, global_batch, grad.mode(), reducer);
  if (!caches) return std::unexpected(caches.error());
  std::vector<float> delta;
  const LossStats stats = SoftmaxCrossEntropy(caches->back().z, local, &delta);
  const size_t n = local.size();
  for (size_t l = layout.layers().size(); l-- > 0;) {
    const LayerLayout& lay = layout.layers()[l];
    const LayerCache& c = (*caches)[l];
    for (size_t i = 0; i < n; ++i) {
      const float* x = &c.in[i * lay.in];
      for (int o = 0; o < lay.out; ++o) {
        const float d = delta[i * lay.out + o];
        grad.Add(lay.b + o, d);
        const size_t row = lay.w + static_cast<size_t>(o) * lay.in;
        for (int j = 0; j < lay.in; ++j) grad.Add(row + j, d * x[j]);
      }
    }
    if (l == 0) break;
    std::vector<float> din(n * lay.in, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      for (int o = 0; o < lay.out; ++o) {
        const float d = delta[i * lay.out + o];
        const float* w = &params[lay.w + static_cast<size_t>(o) * lay.in];
        for (int j = 0; j < lay.in; ++j) din[i * lay.in + j] += w[j] * d;
      }
    }
    delta = std::move(din);
    const Status s = HiddenBackward(layout.layers()[l - 1], (*caches)[l - 1], params, global_batch,
                                    reducer, grad, delta);
    if (!s.ok()) return std::unexpected(s);
  }
  if (Status s = grad.CheckOverflow(); !s.ok()) return std::unexpected(s);
  return stats;
}

EvalStats Evaluate(const ModelConfig& config, std::span<const float> params, const Dataset& data) {
  const ParamLayout layout(config);
  LocalReducer local;
  auto caches =
      Forward(layout, params, data, static_cast<int>(data.size()), ReduceMode::kFloat, local);
  PODSCHED_CHECK(caches.has_value());  // float mode cannot overflow
  const LossStats s = SoftmaxCrossEntropy(caches->back().z, data, nullptr);
  EvalStats out;
  if (data.size() == 0) return out;
  out.mean_loss = s.loss_sum / data.size();
  out.accuracy = static_cast<double>(s.correct) / data.size();
  return out;
}

std::vector<int64_t> LocalSumFixed(std::span<const float> z, int features, int64_t bound) {
  std::vector<int64_t> s(features, 0);
  for (size_t k = 0; k < z.size(); ++k) {
    int64_t q = 0;
    if (!Quantize(z[k], bound, q)) return {};
    s[k % features] += q;
  }
  return s;
}

std::vector<int64_t> LocalSquaredDevFixed(std::span<const float> z, std::span<const float> mean,
                                          int64_t bound) {
  const size_t features = mean.size();
  std::vector<int64_t> s(features, 0);
  for (size_t k = 0; k < z.size(); ++k) {
    const double d = static_cast<double>(z[k]) - mean[k % features];
    int64_t q = 0;
    if (!Quantize(d * d, bound, q)) return {};
    s[k % features] += q;
  }
  return s;
}

Result<BatchStats> ComputeBatchStats(std::span<const float> z, int features, int global_n,
                                     ReduceMode mode, Reducer& reducer) {
  BatchStats st;
  st.mean.resize(features);
  st.var.resize(features);
  if (mode == ReduceMode::kFloat) {
    std::vector<float> s(features, 0.0f);
    for (size_t k = 0; k < z.size(); ++k) s[k % features] += z[k];
    reducer.SumFloat(s);
    for (int f = 0; f < features; ++f) st.mean[f] = s[f] / global_n;
    std::fill(s.begin(), s.end(), 0.0f);
    for (size_t k = 0; k < z.size(); ++k) {
      const float d = z[k] - st.mean[k % features];
      s[k % features] += d * d;
    }
    reducer.SumFloat(s);
    for (int f = 0; f < features; ++f) st.var[f] = s[f] / global_n;
    return st;
  }
  const int64_t bound = FixedBound(global_n);
  // An empty vector from the helpers means overflow; every replica still joins the reductions
  // with zeros so none is left waiting, and the error is returned afterwards.
  bool overflow = false;
  std::vector<int64_t> s = LocalSumFixed(z, features, bound);
  if (s.empty()) overflow = true, s.assign(features, 0);
  reducer.SumInt64(s);
  for (int f = 0; f < features; ++f) {
    st.mean[f] = static_cast<float>(Dequantize(s[f]) / global_n);
  }
  std::vector<int64_t> d = LocalSquaredDevFixed(z, st.mean, bound);
  if (d.empty()) overflow = true, d.assign(features, 0);
  reducer.SumInt64(d);
  for (int f = 0; f < features; ++f) st.var[f] = static_cast<float>(Dequantize(d[f]) / global_n);
  if (overflow) {
    return std::unexpected(Status(StatusCode::kResourceExhausted,
                                  "fixed-point overflow in batch-norm statistics: an activation "
                                  "is too large for scale 2^32 with this global batch"));
  }
  return st;
}

}  // namespace podsched::train
