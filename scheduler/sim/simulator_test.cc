#include "scheduler/sim/simulator.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "pod/cost.h"
#include "scheduler/sim/generator.h"
#include "scheduler/sim/report.h"

namespace podsched::sim {
namespace {

Trace Small(Mix mix, int64_t jobs, uint64_t seed) {
  Trace trace;
  trace.jobs = Generate({jobs, seed, mix, 1.2, 8});
  return trace;
}

TEST(SimulatorTest, EveryJobCompletesAndMetricsAreSane) {
  const Trace trace = Small(Mix::kSlices, 300, 5);
  for (const char* policy : {"fifo-first-fit", "fair-best-fit"}) {
    SimOptions options;
    options.profile = policy;
    auto r = Simulate(trace, options);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->overall.jobs, 300) << policy;
    EXPECT_EQ(r->overall.completed + r->rejected + r->unfinished + r->failed, 300) << policy;
    EXPECT_EQ(r->unfinished, 0) << policy;
    EXPECT_EQ(r->on_demand.jobs + r->preemptible.jobs, 300) << policy;
    EXPECT_GT(r->utilization, 0.2) << policy;
    EXPECT_LE(r->utilization, 1.0) << policy;
    EXPECT_GT(r->events, 600) << policy;
    EXPECT_GT(r->overall.cost_usd, 0) << policy;
    // Useful work never exceeds what was held.
    EXPECT_LE(r->overall.useful_core_h, r->overall.held_core_h * (1 + 1e-9)) << policy;
  }
}

TEST(SimulatorTest, OnDemandWorkPreemptsPreemptibleWorkAndLosesNothing) {
  const Trace trace = Small(Mix::kGrant, 400, 9);
  SimOptions options;
  auto r = Simulate(trace, options);
  ASSERT_TRUE(r.has_value());
  EXPECT_GT(r->preemptions, 0);
  EXPECT_EQ(r->on_demand.preemptions, 0);
  EXPECT_GT(r->preemptible.work_lost_core_h, 0);
  EXPECT_EQ(r->on_demand.work_lost_core_h, 0);
}

TEST(SimulatorTest, DeterministicForASeed) {
  const Trace trace = Small(Mix::kSlices, 200, 2);
  SimOptions options;
  options.reclaim_rate_per_hour = 0.05;
  options.host_failures_per_host_day = 0.05;
  auto a = Simulate(trace, options);
  auto b = Simulate(trace, options);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(a->events, b->events);
  EXPECT_EQ(a->preemptions, b->preemptions);
  EXPECT_EQ(a->overall.jct_s, b->overall.jct_s);
  EXPECT_EQ(a->unfinished, 0);
}

// The report of `results` without the measured fields (wall_s, events_per_s): what a replay
// decides, which must not depend on how runs were spread over threads.
nlohmann::json Decided(const std::vector<SimResult>& results) {
  auto json = nlohmann::json::parse(ResultsJson(results));
  for (auto& [policy, r] : json.items()) {
    r.erase("wall_s");
    r.erase("events_per_s");
  }
  return json;
}

TEST(SimulatorTest, RunsSideBySideGiveTheResultsOfRunsAlone) {
  // Four policies at once on four threads (more than this machine's cores), with reclaims and
  // host failures drawn from each run's generator: every result is the one of its run alone.
  const Trace trace = Small(Mix::kGrant, 600, 4);
  std::vector<SimOptions> runs;
  for (const char* policy :
       {"fifo-first-fit", "fifo-backfill", "fair-first-fit", "fair-best-fit"}) {
    SimOptions options;
    options.profile = policy;
    options.reclaim_rate_per_hour = 0.05;
    options.host_failures_per_host_day = 0.05;
    runs.push_back(options);
  }
  std::vector<SimResult> alone;
  for (const SimOptions& options : runs) {
    auto r = Simulate(trace, options);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    alone.push_back(std::move(*r));
  }
  FakeClock clock(TimePoint{});
  for (int threads : {4, 0}) {
    std::vector<SimResult> together;
    for (auto& r : SimulateEach(trace, runs, threads, clock)) {
      ASSERT_TRUE(r.has_value()) << r.error().ToString();
      together.push_back(std::move(*r));
    }
    EXPECT_EQ(Decided(together), Decided(alone)) << threads << " threads";
  }
  // A run that fails is reported as failed, in its place, and the others still run.
  runs[1].profile = "no-such-policy";
  auto mixed = SimulateEach(trace, runs, 2, clock);
  ASSERT_EQ(mixed.size(), 4U);
  EXPECT_TRUE(mixed[0].has_value());
  ASSERT_FALSE(mixed[1].has_value());
  EXPECT_NE(mixed[1].error().message().find("no-such-policy"), std::string::npos)
      << mixed[1].error().message();
  EXPECT_TRUE(mixed[2].has_value() && mixed[3].has_value());
}

TEST(ReportTest, JsonHasEveryPolicyAndTheRequiredFields) {
  const Trace trace = Small(Mix::kGrant, 50, 1);
  std::vector<SimResult> results;
  for (const char* policy : {"fifo-first-fit", "fair-best-fit"}) {
    SimOptions options;
    options.profile = policy;
    results.push_back(*Simulate(trace, options));
  }
  auto json = nlohmann::json::parse(ResultsJson(results));
  for (const char* policy : {"fifo-first-fit", "fair-best-fit"}) {
    ASSERT_TRUE(json.contains(policy));
    for (const char* field : {"jobs", "jct_mean_s", "jct_p99_s", "wait_mean_s", "utilization",
                              "preemptions", "events", "wall_s", "goodput", "cost_usd"}) {
      EXPECT_TRUE(json[policy].contains(field)) << field;
    }
    EXPECT_EQ(json[policy]["jobs"], 50);
  }
  EXPECT_EQ(Percentile({5, 1, 3, 2, 4}, 50), 3);
  EXPECT_EQ(Percentile({5, 1, 3, 2, 4}, 100), 5);
  EXPECT_EQ(Percentile({}, 99), 0);
}

Trace Csv(const std::string& text) {
  std::istringstream in(text);
  auto trace = ParsePodsimCsv(in);
  EXPECT_TRUE(trace.has_value()) << trace.error().ToString();
  return trace.value_or(Trace{});
}

TEST(SimulatorTest, ADependencyChainRunsInOrder) {
  // Three 100 s jobs on an empty pod: without dependencies they would all end at 100 s.
  const Trace trace = Csv(
      "submit_time_s,user,accelerator,preemptible,duration_s,job_id,dependency\n"
      "0,ada,v2-8,0,100,1,\n"
      "0,ada,v2-8,0,100,2,afterok:1\n"
      "0,ada,v2-8,0,100,3,afterok:2\n");
  SimOptions options;
  options.tick_s = 1;
  auto r = Simulate(trace, options);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->overall.completed, 3);
  std::vector<double> jct = r->overall.jct_s;
  std::sort(jct.begin(), jct.end());
  ASSERT_EQ(jct.size(), 3u);
  EXPECT_NEAR(jct[0], 100, 2);
  EXPECT_NEAR(jct[1], 200, 4);
  EXPECT_NEAR(jct[2], 300, 6);
}

TEST(SimulatorTest, AFailingParentEndsItsAfterOkChainWithTheReason) {
  const Trace trace = Csv(
      "submit_time_s,user,accelerator,preemptible,duration_s,job_id,array_id,array_index,"
      "array_throttle,dependency,fails\n"
      "0,ada,v2-8,0,100,1,,,,,1\n"
      "0,ada,v2-8,0,100,2,,,,afterok:1,\n"
      "0,ada,v2-8,0,100,3,,,,afterok:2,\n"
      "0,ada,v2-8,0,100,4,,,,afternotok:1,\n"
      "0,ada,v2-8,0,100,,9,0,1,afterany:1,\n"
      "0,ada,v2-8,0,100,,9,1,1,afterany:1,\n"
      "0,ada,v2-8,0,100,,9,2,1,afterany:1,\n");
  SimOptions options;
  options.tick_s = 1;
  auto r = Simulate(trace, options);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->failed, 1);
  EXPECT_EQ(r->cancelled, 2);
  EXPECT_EQ(r->unfinished, 0);
  EXPECT_EQ(r->overall.completed, 4);  // the afternotok child and the three array tasks
  ASSERT_EQ(r->cancelled_jobs.size(), 2u);
  std::vector<std::string> reasons = {r->cancelled_jobs[0].reason, r->cancelled_jobs[1].reason};
  std::sort(reasons.begin(), reasons.end());
  EXPECT_NE(reasons[0].find("dependency never satisfied: job"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[0].find("ended FAILED (afterok)"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[1].find("dependency never satisfied: job"), std::string::npos) << reasons[1];
  EXPECT_NE(reasons[1].find("ended CANCELLED (afterok)"), std::string::npos) << reasons[1];
  // The throttled array (%1) runs its three tasks one after another, after its parent.
  std::vector<double> jct = r->overall.jct_s;
  std::sort(jct.begin(), jct.end());
  EXPECT_NEAR(jct.back(), 400, 8);
}

TEST(SimulatorTest, GeneratedSweepsReplayWithoutStalling) {
  GenOptions gen;
  gen.jobs = 300;
  gen.seed = 4;
  gen.mix = Mix::kSlices;
  gen.arrays = 0.2;
  gen.chains = 0.4;
  gen.fails = 0.1;
  Trace trace;
  trace.jobs = Generate(gen);
  auto r = Simulate(trace, SimOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->unfinished, 0);
  EXPECT_GT(r->cancelled, 0);
  EXPECT_EQ(r->overall.completed + r->rejected + r->failed + r->cancelled, 300);
}

}  // namespace
}  // namespace podsched::sim

namespace podsched::sim {
namespace {

// One core over a fleet (issue 28): a 4x4 v2 pod and eight standalone v2-8 devices.
std::vector<pod::FleetPodSpec> SmallFleet() {
  std::vector<pod::FleetPodSpec> pods = {{"pod", pod::Generation::kV2, 4, 4, "zone-a"}};
  for (int i = 0; i < 8; ++i) {
    pods.push_back({"dev-" + std::to_string(i), pod::Generation::kV2, 1, 1, "zone-b"});
  }
  return pods;
}

TEST(SimulatorFleetTest, OneCoreReplaysOnAFleetAndRefusesWhatNoPodHolds) {
  const Trace trace = Small(Mix::kSlices, 300, 5);
  for (const char* policy : {"fifo-first-fit", "fair-best-fit"}) {
    SimOptions options;
    options.profile = policy;
    options.fleet = SmallFleet();
    options.host_failures_per_host_day = 0.5;  // pods of two sizes: one draw over all hosts
    auto r = Simulate(trace, options);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->overall.jobs, 300) << policy;
    EXPECT_EQ(r->unfinished, 0) << policy;
    EXPECT_GT(r->overall.completed, 200) << policy;
    // Slices larger than the 4x4 pod are refused with the fleet's reason.
    ASSERT_GT(r->rejected, 0) << policy;
    for (const JobOutcome& o : r->rejected_jobs) {
      EXPECT_NE(o.reason.find("no pod of this fleet can hold a " + o.accelerator),
                std::string::npos)
          << o.reason;
      EXPECT_TRUE(o.accelerator == "v2-256" || o.accelerator == "v2-512") << o.accelerator;
    }
    EXPECT_GT(r->utilization, 0.1) << policy;
    EXPECT_LE(r->utilization, 1.0) << policy;
    // The same result for the same inputs.
    auto again = Simulate(trace, options);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->events, r->events) << policy;
    EXPECT_EQ(again->preemptions, r->preemptions) << policy;
    EXPECT_EQ(again->overall.jct_s, r->overall.jct_s) << policy;
  }
}

// Multislice rows (column `slices`, issue 28 stage 2): placed whole in one zone, waiting whole,
// refused when no zone could ever hold them.
TEST(SimulatorFleetTest, MultisliceRowsArePlacedWholeInOneZone) {
  const Trace trace = Csv(
      "submit_time_s,user,accelerator,preemptible,duration_s,slices\n"
      "0,ada,v2-32,0,100,4\n"     // the whole 4x4 pod (zone-a)
      "0,bob,v2-8,0,100,8\n"      // zone-a is full: the eight devices of zone-b
      "1,carl,v2-8,0,100,8\n"     // waits for either to end
      "2,dave,v2-8,0,100,20\n");  // no zone holds twenty
  SimOptions options;
  options.tick_s = 1;
  options.fleet = SmallFleet();
  options.quota_on_demand_cores = 1000;
  auto r = Simulate(trace, options);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->overall.completed, 3);
  ASSERT_EQ(r->rejected, 1);
  EXPECT_NE(r->rejected_jobs[0].reason.find("at most 16 v2-8 slices fit in one zone (zone-a)"),
            std::string::npos)
      << r->rejected_jobs[0].reason;
  std::vector<double> jct = r->overall.jct_s;
  std::sort(jct.begin(), jct.end());
  ASSERT_EQ(jct.size(), 3u);
  EXPECT_NEAR(jct[0], 100, 2);
  EXPECT_NEAR(jct[1], 100, 2);
  EXPECT_NEAR(jct[2], 199, 3);
  // Every slice is paid for: 4 v2-32s and 16 v2-8s for 100 s each, on demand.
  const double want = 4 * pod::SliceUsd(*pod::AcceleratorType::Parse("v2-32"), pod::PriceClass::kOnDemand, std::chrono::seconds(100)) +
                      16 * pod::SliceUsd(*pod::AcceleratorType::Parse("v2-8"), pod::PriceClass::kOnDemand, std::chrono::seconds(100));
  EXPECT_NEAR(r->overall.cost_usd, want, want * 0.03);

  std::istringstream zero(
      "submit_time_s,user,accelerator,preemptible,duration_s,slices\n0,ada,v2-8,0,100,0\n");
  auto bad = ParsePodsimCsv(zero);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "line 2: slices is '0'; use an integer 1..64");
  std::ostringstream written;
  WritePodsimCsv(trace.jobs, written);
  EXPECT_NE(written.str().find(",slices\n"), std::string::npos) << written.str();
  std::istringstream read_back(written.str());
  auto again = ParsePodsimCsv(read_back);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  ASSERT_EQ(again->jobs.size(), trace.jobs.size());
  for (size_t i = 0; i < trace.jobs.size(); ++i) EXPECT_EQ(again->jobs[i].slices, trace.jobs[i].slices);
}

// Checkpoints of a size (replay --checkpoint-gib) stay in the zone a job first ran in; a job
// resumed in the other zone, and each checkpoint it writes there, is billed egress. The size
// changes nothing else (a job resuming prefers its store's zone whatever the size).
TEST(SimulatorFleetTest, CheckpointsCrossingZonesAreBilledAsEgress) {
  const Trace trace = Small(Mix::kGrant, 400, 9);
  SimOptions options;
  options.fleet = SmallFleet();  // zone-a and zone-b: one region, $0.01/GB between them
  options.reclaim_rate_per_hour = 0.5;
  auto plain = Simulate(trace, options);
  options.checkpoint_gib = 1.0 / (1 << 30);  // one byte
  auto tiny = Simulate(trace, options);
  options.checkpoint_gib = 2;
  auto billed = Simulate(trace, options);
  ASSERT_TRUE(plain.has_value() && tiny.has_value() && billed.has_value());
  EXPECT_FALSE(plain->egress_modelled);
  EXPECT_EQ(plain->overall.egress_gib, 0);
  ASSERT_TRUE(billed->egress_modelled);
  EXPECT_GT(billed->preemptible.egress_gib, 0);
  EXPECT_EQ(billed->on_demand.egress_gib, 0);  // never preempted: never moved
  // Whole checkpoints of 2 GiB, at $0.01/GB, added to the cost; the replay is otherwise the same.
  EXPECT_EQ(std::fmod(billed->overall.egress_gib, 2.0), 0.0);
  EXPECT_NEAR(billed->overall.egress_usd, billed->overall.egress_gib * 0.01, 1e-9);
  EXPECT_NEAR(billed->overall.egress_gib, tiny->overall.egress_gib * (int64_t{2} << 30), 1e-6);
  EXPECT_NEAR(billed->overall.cost_usd - tiny->overall.cost_usd,
              billed->overall.egress_usd - tiny->overall.egress_usd, 1e-6);
  EXPECT_EQ(billed->events, tiny->events);
  EXPECT_EQ(billed->overall.jct_s, tiny->overall.jct_s);
  EXPECT_NE(ResultsJson({*billed}).find("\"egress_usd\""), std::string::npos);
  EXPECT_EQ(ResultsJson({*plain}).find("egress"), std::string::npos);  // the JSON of before
  // One pod, no zone: nothing crosses.
  options.fleet.clear();
  auto one = Simulate(trace, options);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->overall.egress_gib, 0);
}

TEST(SimulatorFleetTest, AFleetWithANameTwiceIsRefused) {
  SimOptions options;
  options.fleet = {{"a", pod::Generation::kV2, 1, 1, ""}, {"a", pod::Generation::kV2, 1, 1, ""}};
  auto r = Simulate(Small(Mix::kGrant, 10, 1), options);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("two pods of the fleet are named 'a'"), std::string::npos);
}

}  // namespace
}  // namespace podsched::sim
