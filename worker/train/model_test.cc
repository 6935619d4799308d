#include "worker/train/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "worker/train/optimizer.h"

namespace podsched::train {
namespace {

Dataset Data(const ModelConfig& c, uint64_t first, uint64_t n) {
  return GenerateExamples(DataSpec{11, c.input_dim, c.classes, 32}, first, n);
}

// Sum of d(loss)/d(params) over `data`, as doubles, in the given mode on one process.
std::vector<double> Gradient(const ModelConfig& c, std::span<const float> params,
                             const Dataset& data, ReduceMode mode) {
  const ParamLayout layout(c);
  LocalReducer reducer;
  GradAccumulator acc(mode, layout.size(), static_cast<int64_t>(data.size()));
  auto r = ForwardBackward(c, layout, params, data, static_cast<int>(data.size()), reducer, acc);
  EXPECT_TRUE(r.has_value());
  std::vector<double> g(layout.size());
  for (size_t k = 0; k < g.size(); ++k) {
    g[k] = mode == ReduceMode::kExact ? Dequantize(acc.fixed()[k]) : acc.floats()[k];
  }
  return g;
}

TEST(ModelTest, LayoutCountsEveryTensor) {
  const ParamLayout plain(ModelConfig{4, 5, 2, 3, false});
  EXPECT_EQ(plain.size(), 4u * 5 + 5 + 5 * 5 + 5 + 5 * 3 + 3);
  const ParamLayout bn(ModelConfig{4, 5, 2, 3, true});
  EXPECT_EQ(bn.size(), plain.size() + 2 * 2 * 5);
  EXPECT_TRUE(bn.layers()[0].bn);
  EXPECT_FALSE(bn.layers()[2].bn);
}

TEST(ModelTest, BackwardMatchesFiniteDifferences) {
  for (bool batchnorm : {false, true}) {
    const ModelConfig c{5, 6, 2, 3, batchnorm};
    std::vector<float> p = InitParams(c, 3);
    const Dataset data = Data(c, 0, 16);
    const std::vector<double> g = Gradient(c, p, data, ReduceMode::kFloat);
    for (size_t k = 0; k < p.size(); k += 7) {
      const float saved = p[k];
      const float h = 1e-3f;  // small: batch norm puts many units near the ReLU kink
      p[k] = saved + h;
      const double up = Evaluate(c, p, data).mean_loss;
      p[k] = saved - h;
      const double down = Evaluate(c, p, data).mean_loss;
      p[k] = saved;
      const double numeric = (up - down) / (2 * h);
      const double analytic = g[k] / data.size();
      EXPECT_NEAR(analytic, numeric, 3e-4 + 0.03 * std::fabs(numeric))
          << "param " << k << " batchnorm " << batchnorm;
    }
  }
}

TEST(ModelTest, ExactGradientOfSplitBatchIsBitIdentical) {
  const ModelConfig c{8, 16, 2, 4, false};
  const std::vector<float> p = InitParams(c, 5);
  const ParamLayout layout(c);
  const Dataset whole = Data(c, 0, 24);
  LocalReducer reducer;
  GradAccumulator one(ReduceMode::kExact, layout.size(), 24);
  ASSERT_TRUE(ForwardBackward(c, layout, p, whole, 24, reducer, one));
  for (int world : {2, 3, 4, 8}) {
    std::vector<int64_t> sum(layout.size(), 0);
    for (int r = 0; r < world; ++r) {
      Dataset part;
      part.input_dim = whole.input_dim;
      part.classes = whole.classes;
      const size_t n = 24 / world;
      part.x.assign(whole.x.begin() + r * n * c.input_dim,
                    whole.x.begin() + (r + 1) * n * c.input_dim);
      part.label.assign(whole.label.begin() + r * n, whole.label.begin() + (r + 1) * n);
      GradAccumulator acc(ReduceMode::kExact, layout.size(), 24);
      ASSERT_TRUE(ForwardBackward(c, layout, p, part, 24, reducer, acc));
      for (size_t k = 0; k < sum.size(); ++k) sum[k] += acc.fixed()[k];
    }
    EXPECT_EQ(sum, one.fixed()) << "world " << world;
  }
}

TEST(ModelTest, SyncBatchNormStatisticsEqualThoseOfOneProcessOverTheGlobalBatch) {
  const int features = 6, n = 24;
  std::vector<float> z(n * features);
  for (size_t k = 0; k < z.size(); ++k) z[k] = static_cast<float>(NormalAt(9, k) * 3 + 1);
  LocalReducer local;
  auto whole = ComputeBatchStats(z, features, n, ReduceMode::kExact, local);
  ASSERT_TRUE(whole);
  for (int world : {2, 3, 4}) {
    const size_t rows = n / world;
    const int64_t bound = FixedBound(n);
    // What the replicas' all-reduce computes: the sum of every replica's partial sums.
    std::vector<int64_t> s(features, 0), d(features, 0);
    for (int r = 0; r < world; ++r) {
      auto part = std::span<const float>(z).subspan(r * rows * features, rows * features);
      auto ps = LocalSumFixed(part, features, bound);
      for (int f = 0; f < features; ++f) s[f] += ps[f];
    }
    std::vector<float> mean(features), var(features);
    for (int f = 0; f < features; ++f) mean[f] = static_cast<float>(Dequantize(s[f]) / n);
    for (int r = 0; r < world; ++r) {
      auto part = std::span<const float>(z).subspan(r * rows * features, rows * features);
      auto pd = LocalSquaredDevFixed(part, mean, bound);
      for (int f = 0; f < features; ++f) d[f] += pd[f];
    }
    for (int f = 0; f < features; ++f) var[f] = static_cast<float>(Dequantize(d[f]) / n);
    EXPECT_EQ(0, std::memcmp(mean.data(), whole->mean.data(), features * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(var.data(), whole->var.data(), features * sizeof(float)));
  }
  // And they are the true statistics of the batch.
  for (int f = 0; f < features; ++f) {
    double m = 0, v = 0;
    for (int i = 0; i < n; ++i) m += z[i * features + f];
    m /= n;
    for (int i = 0; i < n; ++i) v += (z[i * features + f] - m) * (z[i * features + f] - m);
    EXPECT_NEAR(whole->mean[f], m, 1e-5);
    EXPECT_NEAR(whole->var[f], v / n, 1e-4);
  }
}

TEST(ModelTest, OverflowIsReportedNotWrapped) {
  GradAccumulator acc(ReduceMode::kExact, 4, 1024);
  acc.Add(0, 1.0f);
  EXPECT_TRUE(acc.CheckOverflow().ok());
  acc.Add(1, 3e9f);  // 3e9 * 2^32 is far beyond 2^62 / 1024
  const Status s = acc.CheckOverflow();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("--allreduce float"), std::string::npos);
  acc.Clear();
  EXPECT_TRUE(acc.CheckOverflow().ok());
  int64_t q;
  EXPECT_FALSE(Quantize(std::nan(""), FixedBound(1), q));
}

// Trains on one process and returns (first loss, last loss, held-out accuracy).
std::array<double, 3> Train(const ModelConfig& c, OptimizerKind kind, int steps) {
  const ParamLayout layout(c);
  std::vector<float> p = InitParams(c, 1);
  std::vector<float> s0(p.size(), 0.0f), s1(p.size(), 0.0f);
  const Dataset train = Data(c, 0, 1024), held_out = Data(c, 1024, 512);
  ExampleStream stream(1, train.size());
  OptimizerConfig oc;
  oc.kind = kind;
  oc.lr = kind == OptimizerKind::kAdam ? 0.01f : 0.05f;
  LocalReducer reducer;
  const int batch = 32;
  double first = 0, last = 0;
  for (int t = 1; t <= steps; ++t) {
    const Dataset b = LocalBatch(train, stream, static_cast<uint64_t>(t - 1) * batch, batch, 1, 0);
    GradAccumulator acc(ReduceMode::kExact, p.size(), batch);
    auto r = ForwardBackward(c, layout, p, b, batch, reducer, acc);
    EXPECT_TRUE(r);
    std::vector<float> g(p.size());
    for (size_t k = 0; k < g.size(); ++k)
      g[k] = static_cast<float>(Dequantize(acc.fixed()[k]) / batch);
    UpdateShard(oc, t, g, p, s0,
                kind == OptimizerKind::kAdam ? std::span<float>(s1) : std::span<float>());
    const double loss = r->loss_sum / batch;
    if (t <= 10) first += loss / 10;
    if (t > steps - 10) last += loss / 10;
  }
  return {first, last, Evaluate(c, p, held_out).accuracy};
}

TEST(ModelTest, LossGoesDownAndHeldOutAccuracyBeatsChance) {
  for (bool batchnorm : {false, true}) {
    for (OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kSgd}) {
      const ModelConfig c{8, 32, 2, 4, batchnorm};
      const auto [first, last, accuracy] = Train(c, kind, 150);
      EXPECT_LT(last, 0.7 * first) << "batchnorm " << batchnorm << " " << OptimizerName(kind);
      EXPECT_GT(accuracy, 0.5) << "chance is 0.25";
    }
  }
}

}  // namespace
}  // namespace podsched::train
