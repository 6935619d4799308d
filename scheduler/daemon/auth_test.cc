#include "scheduler/daemon/auth.h"

#include <gtest/gtest.h>

namespace podsched::daemon {
namespace {

TEST(Sha256, KnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(NewToken, IsFreshHex) {
  std::string a = NewToken(), b = NewToken();
  EXPECT_EQ(a.size(), 48u);
  EXPECT_NE(a, b);
}

TEST(RateLimiter, BurstThenRate) {
  RateLimiter limiter(10, 3);
  TimePoint t0{std::chrono::seconds(1000)};
  EXPECT_TRUE(limiter.Allow("a", t0));
  EXPECT_TRUE(limiter.Allow("a", t0));
  EXPECT_TRUE(limiter.Allow("a", t0));
  EXPECT_FALSE(limiter.Allow("a", t0));
  EXPECT_TRUE(limiter.Allow("b", t0));  // buckets are per key
  EXPECT_FALSE(limiter.Allow("a", t0 + std::chrono::milliseconds(50)));
  EXPECT_TRUE(limiter.Allow("a", t0 + std::chrono::milliseconds(100)));
  // Refill is capped at the burst.
  TimePoint later = t0 + std::chrono::seconds(60);
  int allowed = 0;
  while (limiter.Allow("a", later)) ++allowed;
  EXPECT_EQ(allowed, 3);
}

}  // namespace
}  // namespace podsched::daemon
