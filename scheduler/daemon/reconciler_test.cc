#include "scheduler/daemon/reconciler.h"

#include <gtest/gtest.h>

#include "scheduler/core/test_util.h"

namespace podsched::daemon {
namespace {

using core::testing::At;
using core::testing::Only;
using core::testing::Spec;

// A 4x4-host pod with an in-memory store.
class ReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pod = pod::Pod::Create("pod0", pod::Generation::kV2, 4, 4);
    ASSERT_TRUE(pod.has_value());
    core::SchedulerConfig sc;
    sc.min_runtime_before_preemption = Duration::zero();
    auto s = core::Scheduler::Create(std::move(*pod), sc, &repo_, At(0));
    ASSERT_TRUE(s.has_value()) << s.error().message();
    sched_ = std::move(*s);
  }
  // Submits a job and places it; returns its plan.
  core::LaunchPlan Place(const std::string& type) {
    auto id = sched_->Submit(Spec("alice", type, false), At(t_));
    EXPECT_TRUE(id.has_value());
    auto plans = Only<core::LaunchPlan>(sched_->Tick(At(t_ += 1)));
    EXPECT_EQ(plans.size(), 1u);
    return plans.at(0);  // throws (the test fails) when nothing was placed
  }
  void Finish(JobEpoch je) {
    ASSERT_TRUE(
        sched_->ReportExited(je, std::nullopt, core::ExitKind::kSucceeded, "", At(t_ += 1)));
  }

  core::InMemoryJobRepository repo_;
  std::unique_ptr<core::Scheduler> sched_;
  double t_ = 1;
};

TEST_F(ReconcilerTest, RegisterCostIsPerAgentNotPerJobEverSubmitted) {
  for (int i = 0; i < 300; ++i) Finish(Place("v2-8").job);  // history the scheduler keeps
  Reconciler rec(sched_.get());
  rec.Start(At(t_ + 10));
  EXPECT_FALSE(rec.reconciling());  // nothing holds hosts
  core::LaunchPlan running = Place("v2-32");
  rec.Placed(running);
  ASSERT_GT(sched_->jobs().size(), 300u);
  // An agent serving 4 hosts registers and runs nothing: the launcher's host is missing.
  int missing = 0;
  for (int h = 0; h < 4; ++h) {
    if (auto m = rec.MissingOn(HostId(h), {})) {
      ++missing;
      EXPECT_EQ(m->job, running.job);
    }
  }
  EXPECT_GE(missing, 1);
  // At most one job looked up per host asked about, whatever the history holds.
  EXPECT_LE(rec.jobs_examined(), 4);
}

TEST_F(ReconcilerTest, StartIndexesWhatHoldsHostsAndWaitsForTheirAgents) {
  core::LaunchPlan plan = Place("v2-32");
  Reconciler rec(sched_.get());
  rec.Start(At(100));
  EXPECT_TRUE(rec.reconciling());
  for (HostId h : plan.hosts) EXPECT_TRUE(rec.Awaiting(h));
  EXPECT_EQ(rec.MissingOn(plan.hosts[0], {})->job, plan.job);
  EXPECT_TRUE(rec.Expire(At(99)).empty());
  rec.Registered({plan.hosts[0], plan.hosts[1]});
  EXPECT_FALSE(rec.Awaiting(plan.hosts[0]));
  EXPECT_TRUE(rec.reconciling());
  EXPECT_EQ(rec.Expire(At(100)), (std::set<HostId>{plan.hosts[2], plan.hosts[3]}));
  EXPECT_FALSE(rec.reconciling());
  EXPECT_FALSE(rec.Awaiting(plan.hosts[2]));
}

TEST_F(ReconcilerTest, WhatTheAgentReportsIsNotMissing) {
  core::LaunchPlan plan = Place("v2-32");
  Reconciler rec(sched_.get());
  rec.Start(At(100));
  const HostId launcher = plan.hosts[0], other = plan.hosts[1];
  // Nothing reported: the launcher's verdict, and a release for the other host.
  EXPECT_TRUE(rec.MissingOn(launcher, {})->launcher);
  EXPECT_FALSE(rec.MissingOn(other, {})->launcher);
  // Running there, or an unacked exit there: accounted for.
  Reconciler::AgentReport report;
  report.accounted.insert({plan.job, launcher});
  EXPECT_FALSE(rec.MissingOn(launcher, report).has_value());
  // The agent runs the epoch (on the launcher): the other host's part may not have started.
  report.running.insert(plan.job);
  EXPECT_FALSE(rec.MissingOn(other, report).has_value());
  // Hosts nothing was launched on, and placements that ended, are never missing.
  const HostId free = [&] {
    for (int h = 0; h < 16; ++h) {
      if (std::find(plan.hosts.begin(), plan.hosts.end(), HostId(h)) == plan.hosts.end()) {
        return HostId(h);
      }
    }
    return HostId(0);
  }();
  EXPECT_FALSE(rec.MissingOn(free, {}).has_value());
  Finish(plan.job);
  EXPECT_FALSE(rec.MissingOn(launcher, {}).has_value());
}

TEST_F(ReconcilerTest, ALeaseThatOutlivedItsEpochIsReleasedWhenNothingRunsThere) {
  core::LaunchPlan plan = Place("v2-32");
  Reconciler rec(sched_.get());
  rec.Placed(plan);
  const HostId launcher = plan.hosts[0], other = plan.hosts[1];
  // The launcher's verdict requeues the job; the other hosts' lease stays until they report.
  ASSERT_TRUE(sched_->ReportExited(plan.job, launcher, core::ExitKind::kKilled, "gone",
                                   At(t_ += 1)));
  ASSERT_EQ(sched_->Find(plan.job.job)->state, core::JobState::kQueued);
  ASSERT_TRUE(sched_->fleet().host(other).allocation.has_value());
  Reconciler::AgentReport running;
  running.running.insert(plan.job);
  EXPECT_FALSE(rec.MissingOn(other, running).has_value());  // still winding down there
  auto missing = rec.MissingOn(other, {});
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->job, plan.job);
  EXPECT_FALSE(missing->launcher);  // a release, not a verdict
}

}  // namespace
}  // namespace podsched::daemon
