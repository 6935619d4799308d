// Property test: seeded random sequences of submissions, cancellations, manual preemptions,
// host failures, worker reports and ticks, on one pod (seeds 1-4) and on random fleets of v2 and
// v3 pods and standalone devices (seeds 5-8). After every step: no host is held by two jobs, a
// job's hosts are all in the pod of its placement, no user exceeds a quota (fleet-wide), and
// every job that has not ended holds hosts or waits with a reason.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::At;

class SchedulerPropertyTest : public testing::SchedulerFixture,
                              public ::testing::WithParamInterface<uint64_t> {
 protected:
  void CheckInvariants() {
    std::set<HostId> held;
    std::map<UserName, QuotaUsage> use;
    for (const auto& [id, job] : sched_->jobs()) {
      if (IsTerminal(job.state)) continue;
      if (HoldsHosts(job.state)) {
        ASSERT_TRUE(job.placement.has_value()) << id;
        // Every slice: its own hosts, all of them in one zone.
        ASSERT_EQ(static_cast<int>(job.more_slices.size()), job.spec.slices - 1) << id;
        for (const pod::FleetPlacement& slice : SlicesOf(job)) {
          for (HostId h : sched_->fleet().HostsIn(slice)) {
            ASSERT_TRUE(held.insert(h).second) << "host " << h << " held twice";
            ASSERT_TRUE(sched_->fleet().host(h).allocation.has_value());
            ASSERT_EQ(sched_->fleet().Locate(h).pod, slice.pod) << "host " << h;
          }
          // A pod that can hold its type and takes its class (pod::PodClass).
          ASSERT_TRUE(sched_->fleet().CanHold(slice.pod, *sched_->TypeOf(id), "", "",
                                              job.spec.preemptible))
              << id;
          ASSERT_EQ(sched_->fleet().zone(slice.pod), sched_->fleet().zone(job.placement->pod)) << id;
        }
        QuotaUsage& u = use[job.spec.user];
        (job.spec.preemptible ? u.preemptible_cores : u.on_demand_cores) += sched_->CoresOf(job);
      } else {
        ASSERT_EQ(job.state, JobState::kQueued);
        ASSERT_FALSE(job.reason.empty()) << "job " << id << " waits without a reason";
      }
    }
    std::map<JobState, int64_t> in_state;
    for (const auto& [id, job] : sched_->jobs()) ++in_state[job.state];
    for (int st = 0; st < kJobStateCount; ++st) {
      const auto state = static_cast<JobState>(st);
      ASSERT_EQ(sched_->JobsIn(state), in_state[state]) << JobStateName(state);
    }
    QuotaUsage total;
    for (const auto& [user, u] : use) {
      total.on_demand_cores += u.on_demand_cores;
      total.preemptible_cores += u.preemptible_cores;
    }
    ASSERT_EQ(sched_->CoresHeld().on_demand_cores, total.on_demand_cores);
    ASSERT_EQ(sched_->CoresHeld().preemptible_cores, total.preemptible_cores);
    ASSERT_EQ(sched_->ActiveJobIds().size(),
              static_cast<size_t>(sched_->ActiveJobs()));
    for (const auto& [user, u] : use) {
      const Quota q = sched_->QuotaOf(user);
      ASSERT_LE(u.on_demand_cores, q.on_demand_cores) << user;
      ASSERT_LE(u.preemptible_cores, q.preemptible_cores) << user;
      ASSERT_EQ(sched_->UsageOf(user).on_demand_cores, u.on_demand_cores);
      ASSERT_EQ(sched_->UsageOf(user).preemptible_cores, u.preemptible_cores);
    }
  }
};

TEST_P(SchedulerPropertyTest, RandomSequencesKeepInvariants) {
  SchedulerConfig config = DefaultConfig();
  config.default_quota = Quota{64, 96};
  config.reclaim_rate_per_hour = 0.5;
  config.min_runtime_before_preemption = std::chrono::seconds(30);
  config.profile = GetParam() % 2 == 0 ? "fair-best-fit" : "fifo-first-fit";
  config.seed = GetParam();
  // Half the seeds forget ended jobs after 30 minutes (of about 50 hours simulated).
  if (GetParam() % 4 > 2 || GetParam() % 4 == 0) config.ended_job_retention = std::chrono::minutes(30);
  // A third of the seeds defragment (moves of young preemptible jobs, within a budget).
  const bool defrag = GetParam() % 3 == 1;
  if (defrag) {
    config.defrag_budget_core_seconds_per_hour = 20000;
    config.min_runtime_before_preemption = std::chrono::minutes(10);  // young jobs to move
  }
  std::mt19937_64 rng(GetParam());
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const bool fleet = GetParam() > 4;
  const bool multislice = fleet && GetParam() % 5 == 3;
  const bool classes = fleet && GetParam() % 7 == 5;
  std::mt19937_64 slice_rng(GetParam() * 7919);
  if (fleet) {
    // 2..5 pods: v2 grids from 1x1 (a device) to 4x4, at most one small v3 pod.
    std::vector<pod::FleetPodSpec> pods;
    const int n = 2 + pick(4);
    for (int i = 0; i < n; ++i) {
      const bool v3 = i == 0 && pick(2) == 0;
      const int rows = pick(2) == 0 ? 1 : 1 + pick(4), cols = rows == 1 ? 1 + pick(2) : 2 + pick(3);
      pods.push_back({"p" + std::to_string(i), v3 ? pod::Generation::kV3 : pod::Generation::kV2,
                      rows, cols, i % 2 == 0 ? "zone-a" : "zone-b"});
    }
    // A seventh of the fleet seeds reserve pods to a class (drawn apart, as the slices are).
    if (classes) {
      std::mt19937_64 class_rng(GetParam() * 104729);
      for (pod::FleetPodSpec& p : pods) p.job_class = static_cast<pod::PodClass>(class_rng() % 3);
    }
    StartFleet(pods, config);
  } else {
    Start(4, 4, config);
  }
  if (HasFatalFailure()) return;
  const int hosts = sched_->fleet().num_hosts();
  const char* users[] = {"ada", "bob", "carl"};
  // v3 types and the v2-128 fit only some fleets: elsewhere they are refused at submission.
  const std::vector<const char*> types =
      fleet ? std::vector<const char*>{"v2-8", "v2-8", "v2-8", "v2-32", "v3-8", "v3-32"}
            : std::vector<const char*>{"v2-8", "v2-8", "v2-8", "v2-32", "v2-128"};
  std::map<JobEpoch, std::vector<HostId>> running;  // what the fake workers run
  std::vector<JobId> ids;
  double now = 0;
  for (int step = 0; step < 3000; ++step) {
    now += pick(120);
    const int op = pick(100);
    if (op < 25) {
      JobSpec spec = testing::Spec(users[pick(3)], types[static_cast<size_t>(pick(static_cast<int>(types.size())))],
                                   pick(2) == 0, pick(3));
      if (pick(2)) spec.expected_runtime = std::chrono::seconds(60 + pick(3600));
      // Multislice on a fifth of the fleet seeds (refused when no zone holds the slices), drawn
      // apart so that the other seeds' sequences stay what they were.
      if (multislice && slice_rng() % 4 == 0) spec.slices = 2 + static_cast<int>(slice_rng() % 2);
      auto id = sched_->Submit(spec, At(now));
      if (id) ids.push_back(*id);  // v2-128 on-demand exceeds the quota: rejected
    } else if (op < 28 && !ids.empty()) {
      (void)sched_->Cancel(ids[static_cast<size_t>(pick(static_cast<int>(ids.size())))], At(now));
    } else if (op < 31 && !ids.empty()) {
      (void)sched_->Preempt(ids[static_cast<size_t>(pick(static_cast<int>(ids.size())))], "test",
                            At(now));
    } else if (op < 33) {
      const HostId h(pick(hosts));
      auto r = pick(4) == 0 ? sched_->HostDown(h, At(now)) : sched_->HostUp(h, At(now));
      ASSERT_TRUE(r.has_value());
      for (const Action& a : *r) {
        if (auto* k = std::get_if<KillAction>(&a); k && running.erase(k->job)) {
          ASSERT_TRUE(sched_->ReportExited(k->job, std::nullopt, ExitKind::kKilled, "", At(now)));
        }
      }
    } else if (op < 60 && !running.empty()) {
      auto it = running.begin();
      std::advance(it, pick(static_cast<int>(running.size())));
      const JobEpoch je = it->first;
      const int what = pick(10);
      if (what < 4) {
        ASSERT_TRUE(sched_->ReportProgress(je, 10 * step, 10 * step - pick(5), At(now)));
      } else if (what < 5) {
        ASSERT_TRUE(sched_->ReportStarted(je, At(now)));
      } else {
        // Exits are reported host by host, sometimes for every host at once.
        const ExitKind kind = what < 8 ? ExitKind::kSucceeded : ExitKind::kFailed;
        if (pick(2)) {
          for (HostId h : it->second) {
            ASSERT_TRUE(sched_->ReportExited(je, h, kind, "exit", At(now)));
          }
        } else {
          ASSERT_TRUE(sched_->ReportExited(je, std::nullopt, kind, "exit", At(now)));
        }
        running.erase(it);
      }
    } else {
      for (const Action& a : sched_->Tick(At(now))) {
        if (auto* l = std::get_if<LaunchPlan>(&a)) {
          // Every slice's hosts, in rank order.
          ASSERT_EQ(l->hosts.size(),
                    static_cast<size_t>(l->accelerator.hosts()) * (1 + l->more_slices.size()));
          ASSERT_EQ(l->pod_hosts.size(), l->hosts.size());
          running[l->job] = l->hosts;
        }
        // Preempted processes usually exit at once; otherwise at the Kill after the grace.
        if (auto* p = std::get_if<PreemptAction>(&a); p && pick(4) != 0 && running.erase(p->job)) {
          ASSERT_TRUE(sched_->ReportExited(p->job, std::nullopt, ExitKind::kPreempted, "",
                                           At(now)));
        }
        if (auto* k = std::get_if<KillAction>(&a); k && running.erase(k->job)) {
          ASSERT_TRUE(sched_->ReportExited(k->job, std::nullopt, ExitKind::kKilled, "", At(now)));
        }
      }
    }
    CheckInvariants();
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(sched_->stats().launches, 50);
  // (Pods reserved to a class can leave a class without victims it may take.)
  if (!classes) EXPECT_GT(sched_->stats().preemptions, 5);
  if (!defrag) EXPECT_EQ(sched_->stats().defrag_moves, 0);
  // The gate's seeds that exercise the moves (below) keep doing so.
  if (GetParam() == 1 || GetParam() == 25) EXPECT_GT(sched_->stats().defrag_moves, 0);
  if (GetParam() % 4 > 2 || GetParam() % 4 == 0) {
    EXPECT_GT(sched_->stats().forgotten, 100);
  } else {
    EXPECT_EQ(sched_->stats().forgotten, 0);
  }
}

// 8 and 13 place multislice jobs; 5 reserves pods to a class; 1, 4, 7, 13 and 25 defragment (1, 13 and 25 move 10, 2 and 18
// jobs; seeds 1-3000 all pass). 15 and 2512 found wrong skips of blocked jobs in a run of seeds 1-3000 (2026-12-06): an aside
// job skipped behind strict order's first blocked job, and a blocked job whose reason depended on
// whether a job of its shape came before the backfill head. Both fail without the fixes.
INSTANTIATE_TEST_SUITE_P(Seeds, SchedulerPropertyTest,
                         ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 13, 15, 25, 2512));

}  // namespace
}  // namespace podsched::core
