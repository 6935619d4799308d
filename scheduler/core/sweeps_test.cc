// Job arrays and dependencies in the scheduler (sweeps.cc).
#include <gtest/gtest.h>

#include <algorithm>

#include "scheduler/core/scheduler.h"
#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::At;
using testing::Only;
using testing::Spec;
using S = JobState;

class SweepsTest : public testing::SchedulerFixture {
 protected:
  std::vector<JobId> SubmitArray(const std::string& text, double t,
                                 JobSpec spec = Spec("ada", "v2-8", false)) {
    auto array = ParseArraySpec(text);
    EXPECT_TRUE(array.has_value()) << array.error().message();
    auto ids = sched_->SubmitArray(std::move(spec), *array, At(t));
    EXPECT_TRUE(ids.has_value()) << ids.error().ToString();
    return ids.value_or(std::vector<JobId>{});
  }
  JobSpec After(const std::string& deps, JobSpec spec = Spec("ada", "v2-8", false)) {
    auto parsed = ParseDependencies(deps);
    EXPECT_TRUE(parsed.has_value()) << parsed.error().message();
    spec.dependencies = *parsed;
    return spec;
  }
  void Restart() {
    sched_.reset();
    Start(rows_, cols_);
  }
  void StartPod(int rows, int cols) {
    rows_ = rows;
    cols_ = cols;
    Start(rows, cols);
  }
  int Holding(const std::vector<JobId>& ids) {
    return static_cast<int>(
        std::count_if(ids.begin(), ids.end(), [&](JobId id) { return HoldsHosts(Job(id).state); }));
  }
  int rows_ = 0, cols_ = 0;
};

TEST_F(SweepsTest, ArrayTasksAreJobsWithConsecutiveIdsAndOneCommit) {
  StartPod(2, 4);
  const int64_t commits = repo_.commits();
  auto ids = SubmitArray("1,3,5-7", 0);
  EXPECT_EQ(repo_.commits(), commits + 1);  // one store batch for the whole array
  ASSERT_EQ(ids.size(), 5u);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(ids[i], JobId(ids[0].value() + static_cast<int64_t>(i)));
    ASSERT_TRUE(Job(ids[i]).spec.array.has_value());
    EXPECT_EQ(Job(ids[i]).spec.array->array_id, ids[0]);
  }
  EXPECT_EQ(Job(ids[1]).spec.array->index, 3);
  EXPECT_EQ(TaskName(ids[4], Job(ids[4]).spec.array), std::to_string(ids[0].value()) + "_7");
  const JobArray* array = sched_->FindArray(ids[0]);
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(array->tasks.size(), 5u);
  EXPECT_EQ(array->Count(S::kQueued), 5);
  EXPECT_EQ(sched_->FindArray(ids[1]), nullptr);  // only the first id names the array
  auto launches = Only<LaunchPlan>(Tick(1));
  ASSERT_EQ(launches.size(), 5u);
  ASSERT_TRUE(launches[2].array.has_value());
  EXPECT_EQ(launches[2].array->index, 5);
  EXPECT_EQ(array->Holding(), 5);
}

TEST_F(SweepsTest, ThrottleHoldsAtMostNTasksAtOnce) {
  StartPod(2, 4);  // room for 8 v2-8s
  auto ids = SubmitArray("0-5%2", 0);
  Tick(1);
  EXPECT_EQ(Holding(ids), 2);
  EXPECT_EQ(Job(ids[2]).state, S::kQueued);
  EXPECT_EQ(Job(ids[2]).reason, "array throttle: at most 2 tasks of array " +
                                    std::to_string(ids[0].value()) + " at once");
  // Other work is not held up by a throttled array.
  JobId other = Submit(Spec("ada", "v2-8", false), 2);
  Tick(3);
  EXPECT_EQ(Job(other).state, S::kPlaced);
  double t = 10;
  for (int round = 0; round < 3; ++round) {
    for (JobId id : ids) {
      if (HoldsHosts(Job(id).state)) Exited(id, ExitKind::kSucceeded, t);
    }
    Tick(t + 1);
    EXPECT_LE(Holding(ids), 2);
    t += 10;
  }
  for (JobId id : ids) EXPECT_EQ(Job(id).state, S::kSucceeded);
}

TEST_F(SweepsTest, ThrottleCountsPreemptingTasks) {
  StartPod(2, 4);
  auto ids = SubmitArray("0-3%1", 0, Spec("ada", "v2-8", true));
  Tick(1);
  ASSERT_EQ(Job(ids[0]).state, S::kPlaced);
  ASSERT_TRUE(sched_->Preempt(ids[0], "test", At(2)).has_value());
  Tick(3);
  EXPECT_EQ(Job(ids[0]).state, S::kPreempting);  // still holds hosts: no second task
  EXPECT_EQ(Holding(ids), 1);
}

TEST_F(SweepsTest, AfterOkWaitsThenRuns) {
  StartPod(2, 4);
  JobId parent = Submit(Spec("ada", "v2-8", false), 0);
  JobId child = Submit(After("afterok:" + std::to_string(parent.value())), 0);
  Tick(1);
  EXPECT_EQ(Job(parent).state, S::kPlaced);
  EXPECT_EQ(Job(child).state, S::kQueued);
  EXPECT_EQ(Job(child).reason,
            "waiting for afterok:" + std::to_string(parent.value()) + " (PLACED)");
  Progress(parent, 5, 0, 2);
  EXPECT_EQ(Job(child).reason,
            "waiting for afterok:" + std::to_string(parent.value()) + " (RUNNING)");
  Exited(parent, ExitKind::kSucceeded, 3);
  Tick(4);
  EXPECT_EQ(Job(child).state, S::kPlaced);
}

TEST_F(SweepsTest, AfterOkOnAFailedJobEndsTheChildAndItsOwnDependents) {
  StartPod(2, 4);
  JobSpec once = Spec("ada", "v2-8", false);
  once.max_restarts = 0;
  JobId parent = Submit(once, 0);
  JobId ok = Submit(After("afterok:" + std::to_string(parent.value())), 0);
  JobId grandchild = Submit(After("afterany:" + std::to_string(ok.value())), 0);
  JobId notok = Submit(After("afternotok:" + std::to_string(parent.value())), 0);
  JobId any = Submit(After("afterany:" + std::to_string(parent.value())), 0);
  Tick(1);
  Exited(parent, ExitKind::kFailed, 2, "exit 3");
  ASSERT_EQ(Job(parent).state, S::kFailed);
  EXPECT_EQ(Job(ok).state, S::kCancelled);
  EXPECT_EQ(Job(ok).reason, "dependency never satisfied: job " + std::to_string(parent.value()) +
                                " ended FAILED (afterok)");
  Tick(3);
  // afterany on a cancelled job is met: the chain goes on as Slurm's does.
  EXPECT_EQ(Job(grandchild).state, S::kPlaced);
  EXPECT_EQ(Job(notok).state, S::kPlaced);
  EXPECT_EQ(Job(any).state, S::kPlaced);
}

TEST_F(SweepsTest, AfterNotOkOnASucceededJobIsNeverMet) {
  StartPod(2, 4);
  JobId parent = Submit(Spec("ada", "v2-8", false), 0);
  JobId child = Submit(After("afternotok:" + std::to_string(parent.value())), 0);
  Tick(1);
  Exited(parent, ExitKind::kSucceeded, 2);
  EXPECT_EQ(Job(child).state, S::kCancelled);
  EXPECT_EQ(Job(child).reason, "dependency never satisfied: job " + std::to_string(parent.value()) +
                                   " ended SUCCEEDED (afternotok)");
  // A dependency on a job that already ended badly is settled at once.
  JobId late = Submit(After("afternotok:" + std::to_string(parent.value())), 3);
  EXPECT_EQ(Job(late).state, S::kCancelled);
}

TEST_F(SweepsTest, AllDependenciesMustHold) {
  StartPod(2, 4);
  JobId a = Submit(Spec("ada", "v2-8", false), 0);
  JobId b = Submit(Spec("ada", "v2-8", false), 0);
  JobId c = Submit(
      After("afterok:" + std::to_string(a.value()) + ",afterany:" + std::to_string(b.value())), 0);
  Tick(1);
  Exited(a, ExitKind::kSucceeded, 2);
  Tick(3);
  EXPECT_EQ(Job(c).state, S::kQueued);
  EXPECT_EQ(Job(c).reason, "waiting for afterany:" + std::to_string(b.value()) + " (PLACED)");
  Exited(b, ExitKind::kFailed, 4);  // retried (max_restarts 3): not ended yet
  Tick(5);
  EXPECT_EQ(Job(c).state, S::kQueued);
  ASSERT_TRUE(sched_->Cancel(b, At(6)).has_value());
  Tick(7);
  EXPECT_EQ(Job(c).state, S::kPlaced);
}

TEST_F(SweepsTest, DependencyOnAnArrayMeansEveryTask) {
  StartPod(2, 4);
  auto ids = SubmitArray("0-2", 0);
  const std::string array = std::to_string(ids[0].value());
  JobId all = Submit(After("afterok:" + array), 0);
  JobId first = Submit(After("afterok:" + array + "_0"), 0);
  Tick(1);
  EXPECT_EQ(Job(all).reason, "waiting for afterok:" + array + " (0/3 ended)");
  Exited(ids[0], ExitKind::kSucceeded, 2);
  Tick(3);
  EXPECT_EQ(Job(first).state, S::kPlaced);  // task 0 alone
  EXPECT_EQ(Job(all).state, S::kQueued);
  EXPECT_EQ(Job(all).reason, "waiting for afterok:" + array + " (1/3 ended)");
  Exited(ids[1], ExitKind::kSucceeded, 4);
  Exited(ids[2], ExitKind::kSucceeded, 4);
  Tick(5);
  EXPECT_EQ(Job(all).state, S::kPlaced);

  auto more = SubmitArray("0-1", 6);
  const std::string second = std::to_string(more[0].value());
  JobId notok = Submit(After("afternotok:" + second), 6);
  JobId ok = Submit(After("afterok:" + second), 6);
  Tick(7);
  ASSERT_TRUE(sched_->Cancel(more[1], At(8)).has_value());
  EXPECT_EQ(Job(ok).state, S::kQueued);  // task 1 is stopping, not ended
  Exited(more[1], ExitKind::kPreempted, 8.5);
  ASSERT_EQ(Job(more[1]).state, S::kCancelled);
  EXPECT_EQ(Job(ok).state, S::kCancelled);
  EXPECT_EQ(Job(ok).reason,
            "dependency never satisfied: job " + second + "_1 ended CANCELLED (afterok)");
  EXPECT_EQ(Job(notok).state, S::kQueued);  // waits for task 0 to end too
  Exited(more[0], ExitKind::kSucceeded, 9);
  Tick(10);
  EXPECT_EQ(Job(notok).state, S::kPlaced);
}

TEST_F(SweepsTest, CancelArrayCancelsEveryTaskInOneBatch) {
  StartPod(1, 2);
  auto ids = SubmitArray("0-4", 0);
  Tick(1);
  ASSERT_EQ(Holding(ids), 2);
  Exited(ids[0], ExitKind::kSucceeded, 2);
  const int64_t commits = repo_.commits();
  auto actions = sched_->CancelArray(ids[0], At(3));
  ASSERT_TRUE(actions.has_value()) << actions.error().ToString();
  EXPECT_EQ(repo_.commits(), commits + 1);
  EXPECT_EQ(Only<PreemptAction>(*actions).size(), 1u);  // the running task stops gracefully
  EXPECT_EQ(Job(ids[0]).state, S::kSucceeded);
  for (size_t i = 1; i < ids.size(); ++i) {
    const S state = Job(ids[i]).state;
    EXPECT_TRUE(state == S::kCancelled || state == S::kPreempting) << JobStateName(state);
  }
  EXPECT_FALSE(sched_->CancelArray(ids[1], At(4)).has_value());  // not an array id
  auto again = sched_->CancelArray(ids[0], At(4));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SweepsTest, RestartKeepsDependenciesAndThrottle) {
  StartPod(2, 4);
  auto ids = SubmitArray("0-5%2", 0);
  JobId parent = Submit(Spec("ada", "v2-8", false), 0);
  JobId child = Submit(After("afterok:" + std::to_string(parent.value())), 0);
  JobId after_array = Submit(After("afterany:" + std::to_string(ids[0].value())), 0);
  Tick(1);
  ASSERT_EQ(Holding(ids), 2);
  Restart();
  Tick(2);
  EXPECT_EQ(Holding(ids), 2);
  EXPECT_EQ(Job(child).state, S::kQueued);
  EXPECT_EQ(Job(after_array).state, S::kQueued);
  const JobArray* array = sched_->FindArray(ids[0]);
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(array->throttle, 2);
  EXPECT_EQ(array->Holding(), 2);
  Exited(parent, ExitKind::kFailed, 3);  // retried: not ended
  ASSERT_TRUE(sched_->Cancel(parent, At(4)).has_value());
  EXPECT_EQ(Job(child).state, S::kCancelled);
  for (double t = 5; t < 60; t += 5) {
    for (JobId id : ids) {
      if (HoldsHosts(Job(id).state)) Exited(id, ExitKind::kSucceeded, t);
    }
    Tick(t + 1);
    ASSERT_LE(Holding(ids), 2);
    if (t == 10) Restart();
  }
  Tick(70);
  EXPECT_EQ(Job(after_array).state, S::kPlaced);
}

TEST_F(SweepsTest, ARequeuedJobDoesNotWaitForItsMetDependenciesAgain) {
  StartPod(1, 1);
  JobId parent = Submit(Spec("ada", "v2-8", false), 0);
  JobId child =
      Submit(After("afterok:" + std::to_string(parent.value()), Spec("ada", "v2-8", true)), 0);
  Tick(1);
  Exited(parent, ExitKind::kSucceeded, 2);
  Tick(3);
  ASSERT_EQ(Job(child).state, S::kPlaced);
  ASSERT_TRUE(sched_->Preempt(child, "by the test", At(4)).has_value());
  Exited(child, ExitKind::kPreempted, 5);
  ASSERT_EQ(Job(child).state, S::kQueued);
  Restart();
  ASSERT_TRUE(sched_->SetQuota(UserName("bob"), Quota{}, At(5.5)).ok());  // a call, no pass
  EXPECT_EQ(Job(child).reason, "preempted: by the test");                 // not re-evaluated
  Tick(6);
  EXPECT_EQ(Job(child).state, S::kPlaced);
}

TEST_F(SweepsTest, BadSubmissionsAreRefusedAndStoreNothing) {
  StartPod(2, 4);
  JobId bobs = Submit(Spec("bob", "v2-8", false), 0);
  auto array = SubmitArray("0-1", 0);
  const int64_t commits = repo_.commits();
  const size_t jobs = sched_->jobs().size();
  struct Case {
    std::string deps;
    std::string message;
  } cases[] = {
      {"afterok:999", "ada has no job 999"},
      {"afterok:" + std::to_string(bobs.value()), "ada has no job " + std::to_string(bobs.value())},
      {"afterok:" + std::to_string(array[0].value()) + "_5", "_5"},
      {"afterok:" + std::to_string(bobs.value()) + "_0", "_0"},
  };
  for (const Case& c : cases) {
    auto r = sched_->Submit(After(c.deps), At(1));
    ASSERT_FALSE(r.has_value()) << c.deps;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.message), std::string::npos) << r.error().message();
    auto as_array = sched_->SubmitArray(After(c.deps), *ParseArraySpec("0-3"), At(1));
    EXPECT_FALSE(as_array.has_value()) << c.deps;
  }
  ArraySpec empty;
  EXPECT_FALSE(sched_->SubmitArray(Spec("ada", "v2-8", false), empty, At(1)).has_value());
  ArraySpec huge;
  for (int i = 0; i <= kMaxArrayTasks; ++i) huge.indices.push_back(i);
  auto too_big = sched_->SubmitArray(Spec("ada", "v2-8", false), huge, At(1));
  ASSERT_FALSE(too_big.has_value());
  EXPECT_NE(too_big.error().message().find("at most 10000 tasks"), std::string::npos);
  JobSpec reserved = Spec("ada", "v2-8", false);
  reserved.env["MASTER_PORT"] = "1234";
  EXPECT_FALSE(sched_->SubmitArray(reserved, *ParseArraySpec("0-3"), At(1)).has_value());
  EXPECT_FALSE(sched_->Submit(reserved, At(1)).has_value());
  EXPECT_EQ(repo_.commits(), commits);
  EXPECT_EQ(sched_->jobs().size(), jobs);
}

TEST_F(SweepsTest, ManyDependentsAreSettledOnlyWhenTheirTargetChanges) {
  StartPod(2, 4);
  JobId parent = Submit(Spec("ada", "v2-8", false), 0);
  std::vector<JobId> children;
  for (int i = 0; i < 200; ++i) {
    children.push_back(
        Submit(After("afterok:" + std::to_string(parent.value()), Spec("ada", "v2-8", true)), 0));
  }
  Tick(1);
  // A pass that changes nothing for the dependents rewrites none of them.
  JobId unrelated = Submit(Spec("ada", "v2-8", false), 2);
  const int64_t events_before = sched_->stats().events;
  Tick(3);
  EXPECT_EQ(Job(unrelated).state, S::kPlaced);
  EXPECT_EQ(sched_->stats().events, events_before + 1);
  Exited(parent, ExitKind::kSucceeded, 4);
  Tick(5);
  int placed = 0;
  for (JobId c : children) placed += Job(c).state == S::kPlaced ? 1 : 0;
  EXPECT_EQ(placed, 7);  // the pod's 8 hosts less the unrelated job's; the rest wait for room
}

}  // namespace
}  // namespace podsched::core
