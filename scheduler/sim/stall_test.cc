// The replay never stalls: traces with large gangs and tight quotas end with every job finished
// (or refused with a reason), the cluster is never idle while jobs wait, and a job that can
// never finish is reported with its reason instead of keeping the replay running.
#include <gtest/gtest.h>

#include "scheduler/sim/generator.h"
#include "scheduler/sim/simulator.h"

namespace podsched::sim {
namespace {

// A v2-8 row of a trace.
TraceJob Row(double submit_s, const char* user, bool preemptible, double duration_s,
             double checkpoint_interval_s) {
  TraceJob job;
  job.submit_s = submit_s;
  job.user = user;
  job.accelerator = "v2-8";
  job.preemptible = preemptible;
  job.duration_s = duration_s;
  job.checkpoint_interval_s = checkpoint_interval_s;
  return job;
}

class GangTraceTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(GangTraceTest, EveryJobEndsAndTheClusterIsNeverIdleWhileJobsWait) {
  Trace trace;
  trace.jobs = Generate({600, GetParam(), Mix::kGangs, 1.3, 10});
  for (const char* policy : {"fifo-first-fit", "fifo-backfill", "fair-first-fit", "fair-best-fit"}) {
    SimOptions options;
    options.profile = policy;
    options.seed = GetParam();
    options.pods = 2;
    options.quota_on_demand_cores = 256;   // v2-512 on-demand is refused at submit
    options.quota_preemptible_cores = 384;
    options.reclaim_rate_per_hour = 0.05;
    options.timeseries_interval_s = 600;
    options.check_pass_memos = true;
    auto r = Simulate(trace, options);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->unfinished, 0) << policy << ": "
                                << (r->unfinished_jobs.empty() ? "" : r->unfinished_jobs[0].reason);
    EXPECT_GT(r->rejected, 0) << policy;
    ASSERT_EQ(static_cast<int64_t>(r->rejected_jobs.size()), r->rejected);
    for (const JobOutcome& o : r->rejected_jobs) {
      EXPECT_NE(o.reason.find("quota"), std::string::npos) << o.reason;
    }
    for (const Sample& s : r->timeseries) {
      EXPECT_FALSE(s.queued > 0 && s.running == 0)
          << policy << ": idle at t=" << s.t_s << " s with " << s.queued << " jobs queued";
    }
    EXPECT_GT(r->utilization, 0.3) << policy;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, GangTraceTest, ::testing::Values(1, 2, 3, 4));

// The grant's kind of fleet, smaller: a pod for any job and devices for one class each, where a
// job's class narrows the pods it may use (the memos' class scope, Pass::ClassScope). Every skip
// of every pass is checked against a full evaluation.
class ClassFleetTraceTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ClassFleetTraceTest, EveryJobEndsWithEverySkipChecked) {
  Trace trace;
  trace.jobs = Generate({800, GetParam(), Mix::kGangs, 1.2, 12});
  std::vector<pod::FleetPodSpec> fleet = {{"v2-pod", pod::Generation::kV2, 8, 8, "", {}}};
  for (int i = 0; i < 3; ++i) {
    fleet.push_back(
        {"od-" + std::to_string(i), pod::Generation::kV2, 1, 1, "", pod::PodClass::kOnDemand});
  }
  for (int i = 0; i < 12; ++i) {
    fleet.push_back(
        {"pre-" + std::to_string(i), pod::Generation::kV2, 1, 1, "", pod::PodClass::kPreemptible});
  }
  for (const char* policy :
       {"fifo-first-fit", "fifo-backfill", "fair-first-fit", "fair-best-fit"}) {
    SimOptions options;
    options.profile = policy;
    options.seed = GetParam();
    options.fleet = fleet;
    options.reclaim_rate_per_hour = 0.05;
    options.check_pass_memos = true;
    auto r = Simulate(trace, options);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->unfinished, 0) << policy << ": "
                                << (r->unfinished_jobs.empty() ? "" : r->unfinished_jobs[0].reason);
    EXPECT_GT(r->overall.completed, 0) << policy;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ClassFleetTraceTest, ::testing::Values(1, 2));

TEST(StallTest, PreemptibleJobThatCanNeverSaveWithinItsLifetimeIsRefusedWithTheReason) {
  Trace trace;
  trace.jobs = {Row(0, "ada", true, 30 * 3600.0, 0),      // 30 h, no checkpoint
                Row(0, "ada", true, 30 * 3600.0, 1800),   // checkpoints: finishes
                Row(10, "bob", false, 600, 0)};
  auto r = Simulate(trace, SimOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->rejected_jobs.size(), 1u);
  EXPECT_EQ(r->rejected_jobs[0].trace_index, 0);
  EXPECT_EQ(r->rejected_jobs[0].reason,
            "a preemptible job of 108000 s that saves no checkpoint within the 86400 s "
            "preemptible lifetime can never finish");
  EXPECT_EQ(r->overall.completed, 2);
  EXPECT_EQ(r->unfinished, 0);
}

TEST(StallTest, FruitlessWorkEndsTheReplayAndIsReportedWithItsReason) {
  // Reclaimed every few minutes, a 20-hour job that never checkpoints restarts for ever.
  Trace trace;
  trace.jobs = {Row(0, "ada", true, 20 * 3600.0, 0), Row(0, "bob", false, 3600, 0)};
  SimOptions options;
  options.reclaim_rate_per_hour = 20;
  options.min_runtime_before_preemption_s = 0;
  options.stall_horizon_s = 10 * 86400.0;
  auto r = Simulate(trace, options);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->overall.completed, 1);
  ASSERT_EQ(r->unfinished, 1);
  ASSERT_EQ(r->unfinished_jobs.size(), 1u);
  EXPECT_EQ(r->unfinished_jobs[0].trace_index, 0);
  EXPECT_EQ(r->unfinished_jobs[0].user, "ada");
  EXPECT_FALSE(r->unfinished_jobs[0].reason.empty());
  // It stopped after the horizon, not at the end of simulated time.
  EXPECT_LT(r->makespan_s, 12 * 86400.0);
}

}  // namespace
}  // namespace podsched::sim
