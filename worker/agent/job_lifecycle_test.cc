#include "worker/agent/job_lifecycle.h"

#include <gtest/gtest.h>

namespace podsched::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

auto Handles(std::set<pid_t> with_handler) {
  return [with_handler](pid_t p) { return with_handler.count(p) > 0; };
}

TEST(JobLifecycleTest, RanksGetSigtermOnceWithAHandlerOrAfterOneSecond) {
  FakeMonotonicClock clock;
  JobLifecycle job(clock.Now(), 30);
  EXPECT_TRUE(job.RanksToTerminate(clock.Now(), {10, 11}, Handles({10, 11})).empty())
      << "nothing before a Preempt";
  ASSERT_TRUE(job.Preempt(clock.Now(), 10));
  EXPECT_EQ(job.RanksToTerminate(clock.Now(), {10, 11}, Handles({10})), std::vector<pid_t>{10});
  clock.Advance(milliseconds(999));
  EXPECT_TRUE(job.RanksToTerminate(clock.Now(), {10, 11}, Handles({10})).empty());
  clock.Advance(milliseconds(1));
  EXPECT_EQ(job.RanksToTerminate(clock.Now(), {10, 11}, Handles({})), std::vector<pid_t>{11})
      << "1 s after it was first seen, even without a handler";
  EXPECT_TRUE(job.RanksToTerminate(clock.Now(), {10, 11}, Handles({10, 11})).empty());
  // A rank that appears later gets its own second.
  EXPECT_TRUE(job.RanksToTerminate(clock.Now(), {12}, Handles({})).empty());
  EXPECT_EQ(job.RanksToTerminate(clock.Now(), {12}, Handles({12})), std::vector<pid_t>{12});
}

TEST(JobLifecycleTest, GraceExpiresAtTheDeadlineNotBefore) {
  FakeMonotonicClock clock;
  JobLifecycle job(clock.Now(), 30);
  ASSERT_TRUE(job.Preempt(clock.Now(), 2));
  EXPECT_FALSE(job.Preempt(clock.Now(), 5)) << "a second Preempt is ignored";
  clock.Advance(milliseconds(1999));
  EXPECT_FALSE(job.GraceOver(clock.Now(), /*ranks_alive=*/true));
  EXPECT_FALSE(job.killing());
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(job.GraceOver(clock.Now(), true));
  EXPECT_TRUE(job.grace_expired());
  EXPECT_TRUE(job.killing());
  EXPECT_FALSE(job.GraceOver(clock.Now(), true)) << "once";
  job.Abort();  // the agent's own SIGKILL at the expiry
  const Verdict v = ClassifyExit(job.Facts(9));  // killed by SIGKILL
  EXPECT_EQ(v.reason, ExitReason::kKilledAfterGrace) << v.message;
  EXPECT_EQ(v.message, "SIGKILL after 2 s grace");
  job.Kill();  // the scheduler's Kill racing the expiry
  EXPECT_EQ(ClassifyExit(job.Facts(9)).reason, ExitReason::kKilled);
}

TEST(JobLifecycleTest, RanksGoneGivesMpirunUpToFiveMoreSeconds) {
  FakeMonotonicClock clock;
  JobLifecycle job(clock.Now(), 0);
  ASSERT_TRUE(job.Preempt(clock.Now(), 1));
  clock.Advance(seconds(1));
  for (int i = 0; i < JobLifecycle::kMaxGraceExtensions; ++i) {
    EXPECT_FALSE(job.GraceOver(clock.Now(), /*ranks_alive=*/false)) << i;
    clock.Advance(milliseconds(500));
    EXPECT_FALSE(job.GraceOver(clock.Now(), false)) << "within the extension " << i;
    clock.Advance(milliseconds(500));
  }
  EXPECT_TRUE(job.GraceOver(clock.Now(), false));
}

TEST(JobLifecycleTest, KillWinsAndBlocksAPreempt) {
  FakeMonotonicClock clock;
  JobLifecycle job(clock.Now(), 30);
  job.Kill();
  EXPECT_TRUE(job.killing());
  EXPECT_FALSE(job.Preempt(clock.Now(), 10));
  EXPECT_TRUE(job.RanksToTerminate(clock.Now(), {10}, Handles({10})).empty());
  EXPECT_EQ(ClassifyExit(job.Facts(9)).reason, ExitReason::kKilled);
}

TEST(JobLifecycleTest, ReleaseAfterSessionsKillGraceOrStartTimeout) {
  const Duration timeout = seconds(120);
  FakeMonotonicClock clock;
  JobLifecycle waiting(clock.Now(), 30);
  EXPECT_FALSE(waiting.MayRelease(clock.Now(), false, timeout));
  EXPECT_TRUE(waiting.MayRelease(clock.Now(), true, timeout));
  clock.Advance(seconds(120));
  EXPECT_FALSE(waiting.MayRelease(clock.Now(), false, timeout)) << "not at the timeout";
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(waiting.MayRelease(clock.Now(), false, timeout)) << "after it";

  JobLifecycle killed(clock.Now(), 30);
  killed.Kill();
  EXPECT_TRUE(killed.MayRelease(clock.Now(), false, timeout));

  JobLifecycle preempted(clock.Now(), 30);
  ASSERT_TRUE(preempted.Preempt(clock.Now(), 3));
  clock.Advance(milliseconds(2999));
  EXPECT_FALSE(preempted.MayRelease(clock.Now(), false, timeout))
      << "a late rsh request during the grace is still accepted";
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(preempted.MayRelease(clock.Now(), false, timeout));
}

}  // namespace
}  // namespace podsched::agent
