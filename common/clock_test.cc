#include "common/clock.h"

#include <gtest/gtest.h>

namespace podsched {
namespace {

TEST(FakeClockTest, AdvancesOnlyWhenTold) {
  FakeClock clock(TimePoint(Duration(1000)));
  EXPECT_EQ(clock.Now().time_since_epoch().count(), 1000);
  clock.Advance(std::chrono::seconds(2));
  EXPECT_EQ(clock.Now().time_since_epoch().count(), 2'001'000);
  clock.Set(TimePoint(Duration(5)));
  EXPECT_EQ(clock.Now().time_since_epoch().count(), 5);
}

TEST(RealClockTest, IsMonotonicEnoughForTimestamps) {
  RealClock clock;
  TimePoint a = clock.Now();
  TimePoint b = clock.Now();
  EXPECT_LE(a, b);
  // After 2020-01-01: a real wall clock, not a zero epoch.
  EXPECT_GT(a.time_since_epoch(), std::chrono::seconds(1'577'836'800));
}

TEST(FakeMonotonicClockTest, AdvancesOnlyWhenTold) {
  FakeMonotonicClock clock;
  const MonotonicTime start = clock.Now();
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(std::chrono::milliseconds(1500));
  EXPECT_EQ(clock.Now() - start, std::chrono::microseconds(1'500'000));
}

TEST(RealMonotonicClockTest, NeverGoesBack) {
  RealMonotonicClock clock;
  MonotonicTime last = clock.Now();
  for (int i = 0; i < 1000; ++i) {
    const MonotonicTime now = clock.Now();
    EXPECT_LE(last, now);
    last = now;
  }
}

TEST(ClockTest, SecondsRoundTrip) {
  EXPECT_DOUBLE_EQ(ToSeconds(std::chrono::milliseconds(1500)), 1.5);
  EXPECT_EQ(FromSeconds(2.25), std::chrono::microseconds(2'250'000));
}

}  // namespace
}  // namespace podsched
