// Defragmentation (issue 28 stage 3, SchedulerConfig::defrag_budget_core_seconds_per_hour): an
// on-demand job blocked only by fragmentation moves young preemptible jobs within the budget.
#include <gtest/gtest.h>

#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::Only;
using testing::Spec;

class DefragTest : public testing::SchedulerFixture {
 protected:
  // A 2x4 pod under first fit, filled with eight preemptible v2-8 jobs at t=1 (host i holds
  // jobs_[i]); then the jobs of `ended` hosts end at t=2. Preemption waits 10 minutes.
  void Fill(double budget, const std::vector<int>& ended) {
    SchedulerConfig config = DefaultConfig();
    config.profile = "fair-first-fit";
    config.min_runtime_before_preemption = std::chrono::minutes(10);
    config.defrag_budget_core_seconds_per_hour = budget;
    Start(2, 4, config);
    for (int i = 0; i < 8; ++i) jobs_.push_back(Submit(Spec("pre", "v2-8", true), 0));
    Tick(1);
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(Job(jobs_[static_cast<size_t>(i)]).state, JobState::kPlaced);
      ASSERT_EQ(Job(jobs_[static_cast<size_t>(i)]).placement->rect.origin,
                (pod::HostCoord{i / 4, i % 4}));
    }
    for (int h : ended) Exited(jobs_[static_cast<size_t>(h)], ExitKind::kSucceeded, 2);
  }
  std::vector<JobId> jobs_;
};

// Hosts 0, 2, 5 and 7 free: four hosts, no free 2x2. An on-demand v2-32 waits for the young
// jobs to pass their minimum runtime without a budget, and moves two of them with one.
TEST_F(DefragTest, AnOnDemandJobBlockedOnlyByFragmentationMovesYoungJobsWithinTheBudget) {
  Fill(/*budget=*/3600, {0, 2, 5, 7});
  const JobId od = Submit(Spec("od", "v2-32", false), 3);
  const Actions actions = Tick(4);
  const std::vector<PreemptAction> moved = Only<PreemptAction>(actions);
  ASSERT_EQ(moved.size(), 2u) << Job(od).reason;
  for (const PreemptAction& p : moved) {
    EXPECT_NE(p.reason.find("moved to make room for job " + std::to_string(od.value())),
              std::string::npos)
        << p.reason;
  }
  EXPECT_EQ(sched_->stats().defrag_moves, 2);
  // Each lost 3 s of 8 cores since its start (its last checkpoint).
  EXPECT_DOUBLE_EQ(sched_->stats().defrag_lost_core_seconds, 2 * 8 * 3.0);
  for (const PreemptAction& p : moved) Exited(p.job.job, ExitKind::kPreempted, 5);
  Tick(6);
  EXPECT_EQ(Job(od).state, JobState::kPlaced);
  // The moved jobs start again at once on the hosts left free.
  for (const PreemptAction& p : moved) EXPECT_EQ(Job(p.job.job).state, JobState::kPlaced);
}

TEST_F(DefragTest, WithoutABudgetTheJobWaitsForTheMinimumRuntime) {
  Fill(/*budget=*/0, {0, 2, 5, 7});
  const JobId od = Submit(Spec("od", "v2-32", false), 3);
  EXPECT_TRUE(Only<PreemptAction>(Tick(4)).empty());
  EXPECT_NE(Job(od).reason.str().find("after their minimum runtime"), std::string::npos)
      << Job(od).reason;
  EXPECT_EQ(Job(od).reason.str().find("defragment"), std::string::npos) << Job(od).reason;
  EXPECT_EQ(sched_->stats().defrag_moves, 0);
  EXPECT_EQ(Only<PreemptAction>(Tick(601)).size(), 2u) << "after the minimum runtime";
}

// A budget smaller than what the move would lose (2 x 8 cores x 3 s = 48) moves nothing: the job
// says it waits for the budget, and starts once the victims pass their minimum runtime.
TEST_F(DefragTest, AMoveTheBudgetCannotPayWaits) {
  Fill(/*budget=*/40, {0, 2, 5, 7});
  const JobId od = Submit(Spec("od", "v2-32", false), 3);
  EXPECT_TRUE(Only<PreemptAction>(Tick(4)).empty());
  EXPECT_NE(Job(od).reason.str().find("moving them to defragment waits for its budget"),
            std::string::npos)
      << Job(od).reason;
  EXPECT_EQ(sched_->stats().defrag_moves, 0);
  const std::vector<PreemptAction> later = Only<PreemptAction>(Tick(601));
  ASSERT_EQ(later.size(), 2u);
  EXPECT_NE(later[0].reason.find("preempted for job"), std::string::npos) << later[0].reason;
  EXPECT_EQ(sched_->stats().defrag_moves, 0);
}

// Only three hosts free: the block is missing hosts, not just shape. Nothing moves.
TEST_F(DefragTest, NotFragmentationAloneMovesNothing) {
  Fill(/*budget=*/1e6, {0, 2, 5});
  const JobId od = Submit(Spec("od", "v2-32", false), 3);
  EXPECT_TRUE(Only<PreemptAction>(Tick(4)).empty());
  EXPECT_EQ(Job(od).reason.str().find("defragment"), std::string::npos) << Job(od).reason;
  EXPECT_EQ(sched_->stats().defrag_moves, 0);
}

// A preemptible job blocked by fragmentation does not move others (only on-demand work does).
TEST_F(DefragTest, APreemptibleJobMovesNothing) {
  Fill(/*budget=*/1e6, {0, 2, 5, 7});
  Submit(Spec("hi", "v2-32", true, /*priority=*/5), 3);
  EXPECT_TRUE(Only<PreemptAction>(Tick(4)).empty());
  EXPECT_EQ(sched_->stats().defrag_moves, 0);
}

TEST_F(DefragTest, ABadBudgetIsRefused) {
  SchedulerConfig config = DefaultConfig();
  config.defrag_budget_core_seconds_per_hour = -1;
  auto pod = pod::Pod::Create("test", pod::Generation::kV2, 2, 4);
  ASSERT_TRUE(pod.has_value());
  auto s = Scheduler::Create(std::move(*pod), config, &repo_, testing::At(0));
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message().find("defrag_budget_core_seconds_per_hour"), std::string::npos);
}

}  // namespace
}  // namespace podsched::core
