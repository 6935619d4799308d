#include "worker/train/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "worker/train/data.h"

namespace podsched::train {
namespace {

TEST(OptimizerTest, ShardsTileTheParametersForAnyWorld) {
  for (size_t p : {0ul, 1ul, 7ul, 64ul, 1001ul}) {
    for (int w : {1, 2, 3, 4, 8}) {
      EXPECT_EQ(PaddedSize(p, w) % w, 0u);
      size_t next = 0;
      for (int r = 0; r < w; ++r) {
        const ShardRange s = ShardOf(p, w, r);
        EXPECT_EQ(s.begin, next);
        EXPECT_LE(s.size(), PaddedSize(p, w) / w);
        next = s.end;
      }
      EXPECT_EQ(next, p);
    }
  }
}

std::vector<float> Values(uint64_t key, size_t n, double scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(NormalAt(key, i) * scale);
  return v;
}

// Runs `steps` updates on parameters split into `world` shards; returns params and state.
std::vector<float> RunSharded(const OptimizerConfig& c, int world, int steps) {
  const size_t n = 103;
  std::vector<float> params = Values(1, n, 1.0), s0(n, 0.0f), s1(n, 0.0f);
  for (int t = 1; t <= steps; ++t) {
    const std::vector<float> grad = Values(100 + t, n, 0.1);
    for (int r = 0; r < world; ++r) {
      const ShardRange sh = ShardOf(n, world, r);
      std::span<float> st1 = c.kind == OptimizerKind::kAdam
                                 ? std::span<float>(s1).subspan(sh.begin, sh.size())
                                 : std::span<float>();
      UpdateShard(c, t, std::span<const float>(grad).subspan(sh.begin, sh.size()),
                  std::span<float>(params).subspan(sh.begin, sh.size()),
                  std::span<float>(s0).subspan(sh.begin, sh.size()), st1);
    }
  }
  params.insert(params.end(), s0.begin(), s0.end());
  params.insert(params.end(), s1.begin(), s1.end());
  return params;
}

TEST(OptimizerTest, ShardedUpdateIsBitIdenticalToUnsharded) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam}) {
    OptimizerConfig c;
    c.kind = kind;
    const std::vector<float> one = RunSharded(c, 1, 5);
    for (int w : {2, 3, 4, 8}) {
      const std::vector<float> many = RunSharded(c, w, 5);
      ASSERT_EQ(one.size(), many.size());
      EXPECT_EQ(0, std::memcmp(one.data(), many.data(), one.size() * sizeof(float)))
          << OptimizerName(kind) << " world " << w;
    }
  }
}

TEST(OptimizerTest, AdamFirstStepMovesEachParameterByAboutLr) {
  OptimizerConfig c;
  c.lr = 0.01f;
  std::vector<float> p{1.0f, -2.0f}, m(2, 0.0f), v(2, 0.0f);
  const std::vector<float> g{0.5f, -3.0f};
  UpdateShard(c, 1, g, p, m, v);
  EXPECT_NEAR(p[0], 1.0f - 0.01f, 1e-5);
  EXPECT_NEAR(p[1], -2.0f + 0.01f, 1e-5);
}

TEST(OptimizerTest, SgdMomentumAccumulates) {
  OptimizerConfig c;
  c.kind = OptimizerKind::kSgd;
  c.lr = 0.1f;
  c.momentum = 0.5f;
  std::vector<float> p{0.0f}, m{0.0f};
  const std::vector<float> g{1.0f};
  UpdateShard(c, 1, g, p, m, {});
  UpdateShard(c, 2, g, p, m, {});
  EXPECT_FLOAT_EQ(m[0], 1.5f);
  EXPECT_FLOAT_EQ(p[0], -0.25f);
}

TEST(OptimizerTest, ParseNamesTheValidOptimizers) {
  EXPECT_EQ(*ParseOptimizer("sgd"), OptimizerKind::kSgd);
  auto bad = ParseOptimizer("rmsprop");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("sgd, adam"), std::string::npos);
}

}  // namespace
}  // namespace podsched::train
