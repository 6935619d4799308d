#include "scheduler/daemon/metrics.h"

#include <gtest/gtest.h>

#include <sstream>

namespace podsched::daemon {
namespace {

TEST(PreemptionCause, FromCoreReasons) {
  EXPECT_EQ(PreemptionCause("preempted for job 7 (on-demand)"), "on_demand");
  EXPECT_EQ(PreemptionCause("preempted for job 7 (higher priority)"), "priority");
  EXPECT_EQ(PreemptionCause("provider reclaim of a preemptible allocation"), "reclaim");
  EXPECT_EQ(PreemptionCause("24-hour preemptible lifetime reached"), "lifetime");
  EXPECT_EQ(PreemptionCause("preempted by alice"), "manual");
  EXPECT_EQ(PreemptionCause("moved to make room for job 7 (defragmentation: its pod has the hosts, "
                            "not the block)"),
            "defrag");
  EXPECT_EQ(PreemptionCause("cancelled"), "");
}

TEST(Metrics, FormatIsPrometheusText) {
  Metrics m;
  m.CountRequest(200);
  m.CountRequest(200);
  m.CountRequest(404);
  m.CountPreemption("manual");
  m.ObservePass(0.0003);
  m.ObservePass(0.02);
  m.ObservePass(5);
  MetricGauges g;
  g.jobs_by_state = {{"QUEUED", 2}, {"RUNNING", 1}};
  g.cores_on_demand = 32;
  std::string text = m.Format(g);
  EXPECT_NE(text.find("podsched_jobs{state=\"QUEUED\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("podsched_cores_in_use{class=\"on-demand\"} 32\n"), std::string::npos);
  EXPECT_NE(text.find("podsched_api_requests_total{code=\"200\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("podsched_preemptions_total{cause=\"manual\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("podsched_scheduling_pass_seconds_bucket{le=\"0.0005\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("podsched_scheduling_pass_seconds_bucket{le=\"0.025\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("podsched_scheduling_pass_seconds_bucket{le=\"+Inf\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("podsched_scheduling_pass_seconds_count 3\n"), std::string::npos);
  // Every sample line belongs to a family declared by a preceding # TYPE line.
  std::istringstream lines(text);
  std::string line, family;
  while (std::getline(lines, line)) {
    if (line.starts_with("# TYPE ")) {
      family = line.substr(7, line.find(' ', 7) - 7);
    } else if (!line.starts_with("#")) {
      ASSERT_FALSE(family.empty());
      EXPECT_TRUE(line.starts_with(family)) << line;
    }
  }
}

}  // namespace
}  // namespace podsched::daemon
