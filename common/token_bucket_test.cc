#include "common/token_bucket.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/clock.h"

namespace podsched {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucketTest, FullAtFirstUseThenRefillsAtTheRateUpToTheBurst) {
  const MonotonicTime t0{};
  TokenBucket<MonotonicTime> b(100, 300);  // 100 a second, 300 saved up
  EXPECT_TRUE(b.Take(300, t0));
  EXPECT_FALSE(b.Take(1, t0));
  EXPECT_FALSE(b.Take(60, t0 + 500ms)) << "50 refilled, not 60";
  EXPECT_TRUE(b.Take(50, t0 + 500ms));
  EXPECT_TRUE(b.Take(300, t0 + 1h)) << "an hour refills only the burst";
  EXPECT_FALSE(b.Take(1, t0 + 1h));
}

TEST(TokenBucketTest, AllOrNothingAndNoCreditFromABackwardClock) {
  const MonotonicTime t0 = MonotonicTime{} + 10s;
  TokenBucket<MonotonicTime> b(10, 10);
  EXPECT_FALSE(b.Take(11, t0)) << "more than the burst never passes";
  EXPECT_TRUE(b.Take(10, t0));
  EXPECT_FALSE(b.Take(1, t0 - 5s));
  EXPECT_FALSE(b.Take(1, t0 + 50ms)) << "the step back gave nothing; 0.5 tokens now";
  EXPECT_TRUE(b.Take(1, t0 + 100ms));
}

TEST(TokenBucketTest, AvailableAndSecondsUntilTakeNothing) {
  const MonotonicTime t0{};
  TokenBucket<MonotonicTime> b(10, 100);  // 10 a second, 100 saved up
  EXPECT_EQ(b.Available(t0), 100);
  EXPECT_EQ(b.Available(t0), 100);  // looking takes nothing
  ASSERT_TRUE(b.Take(100, t0));
  EXPECT_EQ(b.Available(t0), 0);
  EXPECT_DOUBLE_EQ(b.SecondsUntil(30, t0), 3.0);
  EXPECT_EQ(b.Available(t0 + 2s), 20);
  EXPECT_EQ(b.SecondsUntil(20, t0 + 2s), 0);
  EXPECT_TRUE(std::isinf(b.SecondsUntil(101, t0 + 60s)));  // more than it ever holds
  EXPECT_FALSE(b.Take(30, t0 + 2s));
  EXPECT_TRUE(b.Take(20, t0 + 2s));
}

}  // namespace
}  // namespace podsched
