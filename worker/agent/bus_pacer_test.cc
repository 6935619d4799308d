#include "worker/agent/bus_pacer.h"

#include <gtest/gtest.h>

namespace podsched::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(BusPacerTest, RegistersUntilWelcomedThenHeartbeats) {
  FakeMonotonicClock clock;
  BusPacer pacer(clock.Now());
  EXPECT_TRUE(pacer.RegisterDue(clock.Now()));
  EXPECT_FALSE(pacer.HeartbeatDue(clock.Now()));
  pacer.RegisterSent(clock.Now(), /*queued=*/false);  // not connected yet
  clock.Advance(milliseconds(99));
  EXPECT_FALSE(pacer.RegisterDue(clock.Now()));
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(pacer.RegisterDue(clock.Now()));
  pacer.RegisterSent(clock.Now(), /*queued=*/true);
  clock.Advance(milliseconds(1999));
  EXPECT_FALSE(pacer.RegisterDue(clock.Now()));
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(pacer.RegisterDue(clock.Now())) << "repeated every 2 s until Welcome";

  EXPECT_TRUE(pacer.Welcome(clock.Now(), 200));
  EXPECT_FALSE(pacer.RegisterDue(clock.Now()));
  EXPECT_TRUE(pacer.HeartbeatDue(clock.Now())) << "the first heartbeat at once";
  pacer.HeartbeatSent(clock.Now());
  clock.Advance(milliseconds(199));
  EXPECT_FALSE(pacer.HeartbeatDue(clock.Now()));
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(pacer.HeartbeatDue(clock.Now()));
  EXPECT_FALSE(pacer.Welcome(clock.Now(), 200)) << "already welcomed";

  pacer.Reregister();
  EXPECT_FALSE(pacer.welcomed());
  EXPECT_FALSE(pacer.HeartbeatDue(clock.Now()));
}

TEST(BusPacerTest, HeartbeatIntervalOutOfRangeIsOneSecond) {
  FakeMonotonicClock clock;
  for (int32_t ms : {0, 9, 600001, -5}) {
    BusPacer pacer(clock.Now());
    pacer.Welcome(clock.Now(), ms);
    EXPECT_EQ(pacer.heartbeat_interval(), seconds(1)) << ms;
  }
  BusPacer pacer(clock.Now());
  pacer.Welcome(clock.Now(), 10);
  EXPECT_EQ(pacer.heartbeat_interval(), milliseconds(10));
}

TEST(BusPacerTest, ANewSocketAfterThreeSecondsOfFailedSends) {
  FakeMonotonicClock clock;
  BusPacer pacer(clock.Now());
  pacer.Welcome(clock.Now(), 1000);
  EXPECT_FALSE(pacer.SendResult(clock.Now(), false).reconnect);
  clock.Advance(seconds(3));
  EXPECT_FALSE(pacer.SendResult(clock.Now(), false).reconnect) << "not at 3 s";
  clock.Advance(milliseconds(1));
  auto out = pacer.SendResult(clock.Now(), false);
  EXPECT_TRUE(out.reconnect);
  EXPECT_TRUE(out.outage_began);
  EXPECT_FALSE(pacer.welcomed());
  EXPECT_TRUE(pacer.RegisterDue(clock.Now()));
  // Still failing: another new socket 3 s later, without a second warning.
  EXPECT_FALSE(pacer.SendResult(clock.Now(), false).reconnect);
  clock.Advance(milliseconds(3001));
  out = pacer.SendResult(clock.Now(), false);
  EXPECT_TRUE(out.reconnect);
  EXPECT_FALSE(out.outage_began);
  out = pacer.SendResult(clock.Now(), true);
  EXPECT_TRUE(out.recovered);
  EXPECT_FALSE(pacer.SendResult(clock.Now(), true).recovered);
  // A success resets the count.
  EXPECT_FALSE(pacer.SendResult(clock.Now(), false).reconnect);
  clock.Advance(seconds(2));
  EXPECT_FALSE(pacer.SendResult(clock.Now(), true).reconnect);
  clock.Advance(seconds(2));
  EXPECT_FALSE(pacer.SendResult(clock.Now(), false).reconnect);
}

}  // namespace
}  // namespace podsched::agent
