#include "worker/train/data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace podsched::train {
namespace {

TEST(DataTest, GenerationIsAPureFunctionOfSeedAndIndex) {
  const DataSpec spec{7, 8, 4, 16};
  const Dataset all = GenerateExamples(spec, 0, 100);
  const Dataset tail = GenerateExamples(spec, 60, 40);
  EXPECT_TRUE(std::equal(tail.x.begin(), tail.x.end(), all.x.begin() + 60 * 8));
  EXPECT_TRUE(std::equal(tail.label.begin(), tail.label.end(), all.label.begin() + 60));
  const Dataset other = GenerateExamples(DataSpec{8, 8, 4, 16}, 0, 100);
  EXPECT_NE(other.x, all.x);
}

TEST(DataTest, TeacherUsesSeveralClasses) {
  const Dataset d = GenerateExamples(DataSpec{1, 16, 8, 32}, 0, 2000);
  std::set<int32_t> seen(d.label.begin(), d.label.end());
  EXPECT_GE(seen.size(), 4u);
  // No class dominates so much that predicting it would be a good classifier.
  for (int32_t c : seen) EXPECT_LT(std::count(d.label.begin(), d.label.end(), c), 1400);
}

TEST(DataTest, StreamVisitsEveryExampleOncePerPassInADifferentOrder) {
  ExampleStream s(3, 50);
  std::vector<uint64_t> p0, p1;
  for (uint64_t g = 0; g < 50; ++g) p0.push_back(s.IndexOf(g));
  for (uint64_t g = 50; g < 100; ++g) p1.push_back(s.IndexOf(g));
  EXPECT_NE(p0, p1);
  std::sort(p0.begin(), p0.end());
  std::sort(p1.begin(), p1.end());
  for (uint64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(p0[i], i);
    EXPECT_EQ(p1[i], i);
  }
  ExampleStream again(3, 50);  // fresh cache, same answer (resume in the middle of a pass)
  EXPECT_EQ(again.IndexOf(73), s.IndexOf(73));
}

TEST(DataTest, LocalBatchesOfAllRanksFormTheSameGlobalBatchForAnyWorld) {
  const Dataset train = GenerateExamples(DataSpec{5, 4, 3, 8}, 0, 37);
  for (uint64_t cursor : {0ull, 24ull, 100ull}) {
    ExampleStream one(5, train.size());
    const Dataset whole = LocalBatch(train, one, cursor, 24, 1, 0);
    for (int world : {2, 3, 4, 8}) {
      std::vector<float> x;
      std::vector<int32_t> y;
      for (int r = 0; r < world; ++r) {
        ExampleStream s(5, train.size());
        const Dataset part = LocalBatch(train, s, cursor, 24, world, r);
        EXPECT_EQ(part.size(), 24u / world);
        x.insert(x.end(), part.x.begin(), part.x.end());
        y.insert(y.end(), part.label.begin(), part.label.end());
      }
      EXPECT_EQ(x, whole.x) << "world " << world;
      EXPECT_EQ(y, whole.label);
    }
  }
}

}  // namespace
}  // namespace podsched::train
