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

TEST(Authenticator, MapsTokensToUsers) {
  Authenticator auth({{"alice", Sha256Hex("t-alice"), false}, {"root", Sha256Hex("t-root"), true}});
  auto alice = auth.Authenticate("Bearer t-alice");
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->user, "alice");
  EXPECT_FALSE(alice->admin);
  auto root = auth.Authenticate("Bearer t-root");
  ASSERT_TRUE(root.has_value());
  EXPECT_TRUE(root->admin);
  for (const char* bad :
       {"", "Bearer ", "Bearer t-bob", "Basic dDp0", "t-alice", "bearer t-alice"}) {
    auto r = auth.Authenticate(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kUnauthenticated);
  }
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
