// Timers alone: due order, wake-ups, kills sent.
#include "scheduler/core/timers.h"

#include <gtest/gtest.h>

#include <chrono>

namespace podsched::core {
namespace {

using std::chrono::seconds;
const TimePoint t0 = TimePoint{} + std::chrono::hours(1);

TEST(TimersTest, DueTimersComeOneAtATimeEarliestFirstThenInTheOrderAdded) {
  Timers timers;
  EXPECT_EQ(timers.Next(), std::nullopt);
  EXPECT_EQ(timers.PopDue(t0), std::nullopt);
  timers.Add(t0 + seconds(20), TimerKind::kMaxRuntime, JobEpoch{JobId(1), 1});
  timers.Add(t0 + seconds(10), TimerKind::kLifetime, JobEpoch{JobId(2), 1});
  timers.Add(t0 + seconds(10), TimerKind::kReclaim, JobEpoch{JobId(3), 2});
  EXPECT_EQ(timers.Next(), t0 + seconds(10));
  EXPECT_EQ(timers.PopDue(t0 + seconds(9)), std::nullopt) << "not due yet";

  auto first = timers.PopDue(t0 + seconds(15));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->kind, TimerKind::kLifetime);
  EXPECT_EQ(first->job, (JobEpoch{JobId(2), 1}));
  // Acting on it adds a timer due at once: the next call returns it, before later ones.
  timers.Add(t0 + seconds(15), TimerKind::kKill, JobEpoch{JobId(2), 1});
  auto second = timers.PopDue(t0 + seconds(15));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->kind, TimerKind::kReclaim);
  auto third = timers.PopDue(t0 + seconds(15));
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->kind, TimerKind::kKill);
  EXPECT_EQ(timers.PopDue(t0 + seconds(15)), std::nullopt);
  EXPECT_EQ(timers.size(), 1u);
  EXPECT_EQ(timers.Next(), t0 + seconds(20));
}

TEST(TimersTest, OneWakeUpPerInstant) {
  Timers timers;
  timers.AddWakeup(t0);
  timers.AddWakeup(t0);
  timers.Add(t0, TimerKind::kKill, JobEpoch{JobId(1), 1});
  timers.AddWakeup(t0);
  timers.AddWakeup(t0 + seconds(1));
  EXPECT_EQ(timers.size(), 3u);
}

TEST(TimersTest, AKillIsTakenOncePerJobUntilCleared) {
  Timers timers;
  EXPECT_TRUE(timers.TakeKill(JobId(4)));
  EXPECT_FALSE(timers.TakeKill(JobId(4)));
  EXPECT_TRUE(timers.TakeKill(JobId(5)));
  timers.ClearKill(JobId(4));
  EXPECT_TRUE(timers.TakeKill(JobId(4)));
}

}  // namespace
}  // namespace podsched::core
