// ArraysAndDependencies alone, over a JobTable the test fills and moves by hand: the arrays'
// counts and throttle, waiting jobs and their verdicts, and what retention asks of it.
#include "scheduler/core/arrays_dependencies.h"

#include <gtest/gtest.h>

namespace podsched::core {
namespace {

class ArraysAndDependenciesTest : public ::testing::Test {
 protected:
  // A job of ada in `state`, indexed as the scheduler does.
  JobRecord& Add(int64_t id, std::vector<Dependency> deps = {},
                 std::optional<ArrayTask> task = std::nullopt,
                 JobState state = JobState::kQueued) {
    JobRecord job;
    job.id = JobId(id);
    job.spec.user = UserName("ada");
    job.spec.accelerator = "v2-8";
    job.spec.dependencies = std::move(deps);
    job.spec.array = std::move(task);
    job.state = state;
    job.reason = "submitted";
    JobRecord& added = jobs_.Add(std::move(job), *pod::AcceleratorType::Parse("v2-8"));
    if (!IsTerminal(state)) index_.CountTargets(added.spec, +1);
    index_.Index(added);
    return added;
  }
  void Move(JobId id, JobState to) {
    JobRecord& job = jobs_.at(id);
    index_.NoteTransition(job, job.state, to);
    if (IsTerminal(to)) index_.CountTargets(job.spec, -1);
    jobs_.Move(job, to);
  }
  static Dependency AfterOk(int64_t job, std::optional<int> index = std::nullopt) {
    return Dependency{DependencyKind::kAfterOk, JobId(job), index};
  }

  JobTable jobs_;
  ArraysAndDependencies index_;
};

TEST_F(ArraysAndDependenciesTest, AnArrayCountsItsTasksByStateAndItsThrottleHoldsTheRest) {
  for (int i = 0; i < 3; ++i) Add(10 + i, {}, ArrayTask{JobId(10), i, 2, "0-2%2"});
  const JobArray* array = index_.FindArray(JobId(10));
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(array->tasks.size(), 3u);
  EXPECT_EQ(array->Count(JobState::kQueued), 3);
  EXPECT_EQ(index_.FindArray(JobId(11)), nullptr) << "an array is known by its first task";
  EXPECT_FALSE(index_.HeldBack(jobs_.at(JobId(12))).has_value());

  Move(JobId(10), JobState::kPlaced);
  Move(JobId(11), JobState::kRunning);
  EXPECT_EQ(array->Holding(), 2);
  EXPECT_EQ(index_.HeldBack(jobs_.at(JobId(12))),
            "array throttle: at most 2 tasks of array 10 at once");
  Move(JobId(10), JobState::kFailed);
  EXPECT_FALSE(index_.HeldBack(jobs_.at(JobId(12))).has_value());
  EXPECT_EQ(array->unsuccessful, JobId(10));
  EXPECT_EQ(array->Ended(), 1);
}

TEST_F(ArraysAndDependenciesTest, AWaitingJobIsSettledOnlyWhenItsTargetChanges) {
  Add(1);
  Add(2, {AfterOk(1)});
  EXPECT_EQ(index_.HeldBack(jobs_.at(JobId(2))), "waiting for dependencies")
      << "held back until its first verdict";
  auto first = index_.SettleNext(jobs_);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->job, JobId(2));
  EXPECT_EQ(first->kind, ArraysAndDependencies::Verdict::kWaiting);
  EXPECT_EQ(first->reason, "waiting for afterok:1 (QUEUED)");
  EXPECT_EQ(index_.HeldBack(jobs_.at(JobId(2))), first->reason);
  EXPECT_FALSE(index_.SettleNext(jobs_).has_value()) << "nothing changed since";

  Move(JobId(1), JobState::kPlaced);
  auto placed = index_.SettleNext(jobs_);
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->reason, "waiting for afterok:1 (PLACED)");
  Move(JobId(1), JobState::kSucceeded);
  auto met = index_.SettleNext(jobs_);
  ASSERT_TRUE(met.has_value());
  EXPECT_EQ(met->kind, ArraysAndDependencies::Verdict::kFree);
  EXPECT_FALSE(index_.HeldBack(jobs_.at(JobId(2))).has_value());
}

TEST_F(ArraysAndDependenciesTest, ATargetThatFailedIsNeverMet) {
  Add(1);
  Add(2, {AfterOk(1)});
  index_.SettleNext(jobs_);
  Move(JobId(1), JobState::kFailed);
  auto never = index_.SettleNext(jobs_);
  ASSERT_TRUE(never.has_value());
  EXPECT_EQ(never->kind, ArraysAndDependencies::Verdict::kNever);
  EXPECT_EQ(never->reason, "dependency never satisfied: job 1 ended FAILED (afterok)");
  EXPECT_FALSE(index_.HeldBack(jobs_.at(JobId(2))).has_value()) << "it waits no more";
}

// A target not in memory (only a damaged store gets there) can never end well.
TEST_F(ArraysAndDependenciesTest, AMissingTargetIsNeverMet) {
  Add(2, {AfterOk(7)});
  EXPECT_EQ(index_.Target(AfterOk(7), jobs_), nullptr);
  EXPECT_EQ(index_.TargetOf(AfterOk(7), jobs_).state, "missing");
  auto never = index_.SettleNext(jobs_);
  ASSERT_TRUE(never.has_value());
  EXPECT_EQ(never->kind, ArraysAndDependencies::Verdict::kNever);
}

TEST_F(ArraysAndDependenciesTest, AJobPlacedBeforeNeverWaitsAgain) {
  Add(1);
  JobRecord requeued;
  requeued.id = JobId(2);
  requeued.epoch = 1;  // placed once: its dependencies were met then
  requeued.spec.user = UserName("ada");
  requeued.spec.dependencies = {AfterOk(1)};
  index_.Index(jobs_.Add(std::move(requeued), *pod::AcceleratorType::Parse("v2-8")));
  EXPECT_FALSE(index_.HeldBack(jobs_.at(JobId(2))).has_value());
  EXPECT_FALSE(index_.SettleNext(jobs_).has_value());
}

TEST_F(ArraysAndDependenciesTest, ADependencyNamesAnArraysTaskOrTheWholeArray) {
  for (int i = 0; i < 2; ++i) Add(10 + i, {}, ArrayTask{JobId(10), i, 0, "0-1"});
  EXPECT_EQ(index_.Target(AfterOk(10, 1), jobs_), &jobs_.at(JobId(11)));
  EXPECT_EQ(index_.Target(AfterOk(10, 5), jobs_), nullptr);
  Move(JobId(10), JobState::kSucceeded);
  EXPECT_EQ(index_.TargetOf(AfterOk(10), jobs_).state, "1/2 ended");
  EXPECT_EQ(index_.TargetOf(AfterOk(10, 1), jobs_).name, "job 10_1");
}

// Retention keeps what an active job names, and an array goes with its last task.
TEST_F(ArraysAndDependenciesTest, WhatActiveJobsNameIsNeededAndForgettingEmptiesAnArray) {
  Add(1, {}, std::nullopt, JobState::kSucceeded);
  Add(2, {AfterOk(1)});
  EXPECT_TRUE(index_.NamedByActive(jobs_.at(JobId(1))));
  EXPECT_FALSE(index_.NamedByActive(jobs_.at(JobId(2))));
  Move(JobId(2), JobState::kCancelled);
  EXPECT_FALSE(index_.NamedByActive(jobs_.at(JobId(1))));

  for (int i = 0; i < 2; ++i) {
    Add(10 + i, {}, ArrayTask{JobId(10), i, 0, "0-1"}, JobState::kSucceeded);
  }
  index_.Forget(jobs_.at(JobId(10)));
  ASSERT_NE(index_.FindArray(JobId(10)), nullptr);
  index_.Forget(jobs_.at(JobId(11)));
  EXPECT_EQ(index_.FindArray(JobId(10)), nullptr);
}

}  // namespace
}  // namespace podsched::core
