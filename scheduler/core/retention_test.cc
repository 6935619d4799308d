// Retention of ended jobs (retention.cc; audit H1): an ended job leaves memory one retention
// after it ended, unless something in memory still needs it, and reads back from the store.
#include <gtest/gtest.h>

#include "scheduler/core/dependency.h"
#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::At;
using testing::Only;
using testing::Spec;
using S = JobState;

constexpr double kHour = 3600;

class RetentionTest : public testing::SchedulerFixture {
 protected:
  static SchedulerConfig WithRetention() {
    SchedulerConfig config = DefaultConfig();
    config.ended_job_retention = std::chrono::hours(1);
    return config;
  }
  void StartPod(int rows, int cols) {
    rows_ = rows;
    cols_ = cols;
    Start(rows, cols, WithRetention());
  }
  void Restart(double t) {
    sched_.reset();
    auto pod = pod::Pod::Create("test", pod::Generation::kV2, rows_, cols_);
    auto s = Scheduler::Create(std::move(*pod), WithRetention(), &repo_, At(t));
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    sched_ = std::move(*s);
  }
  JobSpec After(const std::string& deps, JobSpec spec = Spec("ada", "v2-8", false)) {
    spec.dependencies = *ParseDependencies(deps);
    return spec;
  }
  bool InMemory(JobId id) { return sched_->Find(id) != nullptr; }
  std::optional<JobState> StoredState(JobId id) {
    auto stored = sched_->FindStored(id);
    EXPECT_TRUE(stored.has_value());
    if (!stored || !*stored) return std::nullopt;
    return (*stored)->state;
  }
  int rows_ = 1, cols_ = 1;
};

TEST_F(RetentionTest, AnEndedJobIsForgottenOneRetentionAfterItEndedAndReadsBackFromTheStore) {
  StartPod(1, 1);
  JobId id = Submit(Spec("ada", "v2-8", false), 0);
  ASSERT_TRUE(sched_->Cancel(id, At(10)).has_value());
  EXPECT_EQ(sched_->JobsIn(S::kCancelled), 1);
  Tick(10 + kHour - 1);
  EXPECT_TRUE(InMemory(id));
  Tick(10 + kHour);
  EXPECT_FALSE(InMemory(id));
  EXPECT_EQ(sched_->JobsIn(S::kCancelled), 0);
  EXPECT_EQ(sched_->stats().forgotten, 1);
  EXPECT_EQ(StoredState(id), S::kCancelled);  // history is kept
  EXPECT_EQ(StoredState(JobId(99)), std::nullopt);
  // Cancelling it again is refused as for an unknown job, and changes nothing.
  EXPECT_FALSE(sched_->Cancel(id, At(2 * kHour)).has_value());
  // The ids go on: a new job never reuses a forgotten one's, also after a restart.
  Restart(3 * kHour);
  EXPECT_FALSE(InMemory(id));
  EXPECT_GT(Submit(Spec("ada", "v2-8", false), 3 * kHour), id);
}

// Hosts not all released: the lease looks its job up, so the job stays until they are.
TEST_F(RetentionTest, AJobWhoseHostsAreStillHeldStays) {
  StartPod(2, 2);
  JobId id = Submit(Spec("ada", "v2-32", false), 0);
  auto launches = Only<LaunchPlan>(Tick(1));
  ASSERT_EQ(launches.size(), 1u);
  const std::vector<HostId> hosts = launches[0].hosts;
  ASSERT_TRUE(
      sched_->ReportExited(Epoch(id), hosts[0], ExitKind::kSucceeded, "", At(2)).has_value());
  EXPECT_EQ(Job(id).state, S::kSucceeded);
  Tick(2 + 2 * kHour);
  ASSERT_TRUE(InMemory(id));
  for (size_t i = 1; i < hosts.size(); ++i) {
    ASSERT_TRUE(sched_->ReportHostReleased(Epoch(id), hosts[i], At(2 + 2 * kHour)).has_value());
  }
  EXPECT_EQ(sched_->fleet().AvailableHosts(), 4);
  Tick(2 + 2 * kHour + 60);
  EXPECT_FALSE(InMemory(id));
}

// A waiting job is judged by its targets' states: a target stays while an active job names it,
// and after a restart it is read back even though it ended long before the retention.
TEST_F(RetentionTest, ADependencyTargetStaysWhileAnActiveJobNamesItAlsoAfterARestart) {
  StartPod(1, 1);
  JobId holder = Submit(Spec("bob", "v2-8", false), 0);  // keeps the only host busy
  Tick(1);
  ASSERT_EQ(Job(holder).state, S::kPlaced);
  JobId target = Submit(Spec("ada", "v2-8", false), 1);
  JobId waiter = Submit(After("afterany:" + std::to_string(target.value())), 1);
  JobId unrelated = Submit(Spec("ada", "v2-8", false), 1);
  ASSERT_TRUE(sched_->Cancel(target, At(2)).has_value());
  ASSERT_TRUE(sched_->Cancel(unrelated, At(2)).has_value());
  Tick(3);
  EXPECT_EQ(Job(waiter).state, S::kQueued);  // its dependency is met; the host is not free
  Tick(2 + 2 * kHour);
  EXPECT_TRUE(InMemory(target));
  EXPECT_FALSE(InMemory(unrelated));

  Restart(3 * kHour);
  EXPECT_TRUE(InMemory(target)) << "read back as the waiting job's target";
  EXPECT_FALSE(InMemory(unrelated));
  ASSERT_TRUE(InMemory(waiter));
  Tick(3 * kHour + 1);
  EXPECT_EQ(Job(waiter).state, S::kQueued) << Job(waiter).reason;  // not "never satisfied"
  Exited(holder, ExitKind::kSucceeded, 3 * kHour + 2);
  Tick(3 * kHour + 3);
  EXPECT_EQ(Job(waiter).state, S::kPlaced);
  // Once nothing names it, it goes.
  Exited(waiter, ExitKind::kSucceeded, 3 * kHour + 4);
  Tick(5 * kHour);
  EXPECT_FALSE(InMemory(target));
  EXPECT_FALSE(InMemory(waiter));
  EXPECT_EQ(sched_->ActiveJobs(), 0);
}

// An array's counts and ids are read together: it goes as a whole, after its last task.
TEST_F(RetentionTest, AnArrayIsForgottenAsAWholeAfterItsLastTaskEnded) {
  StartPod(1, 1);
  Submit(Spec("bob", "v2-8", false), 0);  // holds the only host: the tasks stay QUEUED
  Tick(0);
  auto ids = sched_->SubmitArray(Spec("ada", "v2-8", true), *ParseArraySpec("0-2"), At(0));
  ASSERT_TRUE(ids.has_value());
  ASSERT_TRUE(sched_->Cancel(ids->at(0), At(1)).has_value());
  Tick(2 * kHour);
  EXPECT_TRUE(InMemory(ids->at(0))) << "tasks 1 and 2 have not ended";
  ASSERT_TRUE(sched_->CancelArray(ids->front(), At(2 * kHour)).has_value());
  Tick(3 * kHour - 1);
  for (JobId id : *ids) EXPECT_TRUE(InMemory(id));
  ASSERT_NE(sched_->FindArray(ids->front()), nullptr);
  Tick(3 * kHour);
  for (JobId id : *ids) EXPECT_FALSE(InMemory(id));
  EXPECT_EQ(sched_->FindArray(ids->front()), nullptr);
  EXPECT_EQ(sched_->stats().forgotten, 3);
  EXPECT_EQ(StoredState(ids->at(2)), S::kCancelled);
}

// The bound the audit asks for: a user cycling submit-and-cancel leaves memory with at most one
// retention's worth of ended jobs, however long it goes on.
TEST_F(RetentionTest, SubmitAndCancelCyclesLeaveAtMostOneRetentionOfJobsInMemory) {
  StartPod(1, 1);
  size_t most = 0;
  for (int minute = 0; minute < 5 * 60; ++minute) {
    auto ids = sched_->SubmitArray(Spec("ada", "v2-8", true), *ParseArraySpec("0-9"),
                                   At(minute * 60));
    ASSERT_TRUE(ids.has_value()) << ids.error().ToString();
    ASSERT_TRUE(sched_->CancelArray(ids->front(), At(minute * 60)).has_value());
    Tick(minute * 60 + 1);
    most = std::max(most, sched_->jobs().size());
  }
  EXPECT_EQ(sched_->stats().forgotten, 10 * (5 * 60 - 60));
  EXPECT_LE(most, 10u * 60);
}

}  // namespace
}  // namespace podsched::core
