#include "scheduler/daemon/backlog.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace podsched::daemon {
namespace {

TEST(BacklogTest, AdmitsUpToTheLimitThenDropsAndCounts) {
  Backlog b(3 * (1000 + Backlog::kOverheadBytes));
  EXPECT_TRUE(b.TryAdd(1000));
  EXPECT_TRUE(b.TryAdd(1000));
  EXPECT_TRUE(b.TryAdd(1000));
  EXPECT_FALSE(b.TryAdd(1000));
  EXPECT_FALSE(b.TryAdd(0));  // tiny messages cost their overhead
  EXPECT_EQ(b.dropped(), 2);
  b.Remove(1000);  // one handled: room for one more
  EXPECT_TRUE(b.TryAdd(1000));
  EXPECT_FALSE(b.TryAdd(1));
  EXPECT_EQ(b.queued_bytes(), 3 * (1000 + Backlog::kOverheadBytes));
}

TEST(BacklogTest, ConcurrentProducerAndConsumerNeverExceedTheLimit) {
  constexpr int64_t kLimit = 100 * (10 + Backlog::kOverheadBytes);
  Backlog b(kLimit);
  std::atomic<int64_t> admitted{0}, peak{0};
  std::thread producer([&] {
    for (int i = 0; i < 200000; ++i) {
      if (b.TryAdd(10)) {
        admitted.fetch_add(1);
        int64_t q = b.queued_bytes();
        int64_t p = peak.load();
        while (q > p && !peak.compare_exchange_weak(p, q)) {
        }
      }
    }
  });
  int64_t removed = 0;
  while (producer.joinable()) {
    if (removed < admitted.load()) {
      b.Remove(10);
      ++removed;
    } else if (admitted.load() + b.dropped() == 200000) {
      break;
    }
  }
  producer.join();
  while (removed < admitted.load()) {
    b.Remove(10);
    ++removed;
  }
  EXPECT_EQ(admitted.load() + b.dropped(), 200000);
  EXPECT_EQ(b.queued_bytes(), 0);
  EXPECT_LE(peak.load(), kLimit);
}

}  // namespace
}  // namespace podsched::daemon
