#include "common/clock.h"
#include "common/steady_wall_clock.h"

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

class SteadyWallClockTest : public ::testing::Test {
 protected:
  FakeClock wall_{TimePoint(std::chrono::seconds(1'700'000'000))};
  FakeMonotonicClock mono_;
  SteadyWallClock clock_{wall_, mono_};
  // Both clocks move together by `d`, as they do when nobody sets the time.
  void Pass(Duration d) {
    wall_.Advance(d);
    mono_.Advance(d);
  }
};

TEST_F(SteadyWallClockTest, IsTheWallClockWhileNobodySetsIt) {
  EXPECT_EQ(clock_.Now(), wall_.Now());
  Pass(std::chrono::seconds(3));
  EXPECT_EQ(clock_.Now(), wall_.Now());
  Pass(std::chrono::hours(50));
  EXPECT_EQ(clock_.Now(), wall_.Now());
}

TEST_F(SteadyWallClockTest, AForwardStepMovesItOnlyByTheElapsedTimeAndFivePercent) {
  const TimePoint before = clock_.Now();
  wall_.Advance(std::chrono::seconds(60));  // the step
  Pass(std::chrono::milliseconds(200));
  EXPECT_EQ(clock_.Now() - before, std::chrono::milliseconds(210));
  // It catches up with the wall clock after 60 s / 5% = 20 minutes of slewing, and stays.
  Pass(std::chrono::minutes(19));
  EXPECT_LT(clock_.Now(), wall_.Now());
  Pass(std::chrono::minutes(1));
  EXPECT_EQ(clock_.Now(), wall_.Now());
  Pass(std::chrono::seconds(1));
  EXPECT_EQ(clock_.Now(), wall_.Now());
}

TEST_F(SteadyWallClockTest, ABackwardStepSlowsItButItNeverGoesBack) {
  TimePoint last = clock_.Now();
  wall_.Set(wall_.Now() - std::chrono::seconds(60));
  for (int i = 0; i < 100; ++i) {
    Pass(std::chrono::milliseconds(200));
    const TimePoint now = clock_.Now();
    EXPECT_EQ(now - last, std::chrono::milliseconds(190));  // 5% slower, still advancing
    last = now;
  }
  Pass(std::chrono::minutes(20));
  EXPECT_EQ(clock_.Now(), wall_.Now());
}

TEST_F(SteadyWallClockTest, StandsStillWhenTheMonotonicClockDoes) {
  const TimePoint before = clock_.Now();
  wall_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(clock_.Now(), before);
}

TEST(ClockTest, SecondsRoundTrip) {
  EXPECT_DOUBLE_EQ(ToSeconds(std::chrono::milliseconds(1500)), 1.5);
  EXPECT_EQ(FromSeconds(2.25), std::chrono::microseconds(2'250'000));
}

}  // namespace
}  // namespace podsched
