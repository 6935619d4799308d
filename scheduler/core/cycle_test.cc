// The steps of a pass that keep the queue from stalling: a job that cannot start for a reason of
// its own (quota, a shape the healthy pod cannot hold) never blocks others, and no reservation
// is held for a job its quota cannot admit.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "pod/placement.h"

#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::Only;
using testing::Spec;
using S = JobState;

class CycleTest : public testing::SchedulerFixture {};

TEST_F(CycleTest, FullPodJobWithAnUnhealthyHostDoesNotBlockFifo) {
  SchedulerConfig config = DefaultConfig();
  config.profile = "fifo-first-fit";
  config.default_quota = Quota{128, 800};
  Start(4, 4, config);
  ASSERT_TRUE(sched_->HostDown(HostId(5), testing::At(0)).has_value());
  JobId whole = Submit(Spec("ada", "v2-128", false), 1);  // needs all 16 hosts
  JobId small = Submit(Spec("bob", "v2-8", false), 2);
  auto launches = Only<LaunchPlan>(Tick(3));
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].job.job, small);
  EXPECT_EQ(Job(whole).state, S::kQueued);
  EXPECT_EQ(Job(whole).reason,
            "no 4x4 block of healthy hosts in the pod (1 unhealthy or draining): waits for "
            "repairs without blocking others");
  // Once the host is repaired it is the head again and waits its turn in line.
  ASSERT_TRUE(sched_->HostUp(HostId(5), testing::At(4)).has_value());
  Submit(Spec("carl", "v2-8", false), 5);
  Tick(6);
  EXPECT_EQ(Job(whole).reason, "no free 4x4 block of hosts");
}

TEST_F(CycleTest, QuotaLoweredBelowTheJobSaysSoAndDoesNotBlock) {
  SchedulerConfig config = DefaultConfig();
  config.profile = "fifo-first-fit";
  Start(2, 2, config);
  JobId big = Submit(Spec("ada", "v2-32", false), 0);
  ASSERT_TRUE(sched_->SetQuota(UserName("ada"), Quota{8, 800}, testing::At(0)).ok());
  JobId small = Submit(Spec("bob", "v2-8", false), 1);
  auto launches = Only<LaunchPlan>(Tick(2));
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].job.job, small);
  EXPECT_EQ(Job(big).reason,
            "quota: the on-demand quota of 8 cores is smaller than the job's 32; it can start "
            "only once the quota is raised");
}

TEST_F(CycleTest, ReservedCoresCountAgainstTheUsersQuota) {
  // bob's preemptible v2-8s fill a 4x4 pod; ada (on-demand quota 32) evicts a 2x2 block for her
  // v2-32. While the victims checkpoint, another of bob's jobs ends and frees one host. ada's
  // next job, a v2-8, must not take it: with the reservation's 32 cores she would be over quota,
  // and the v2-32 would then hold its reservation while it could not start.
  SchedulerConfig config = DefaultConfig();
  config.default_quota = Quota{32, 800};
  Start(4, 4, config);
  std::vector<JobId> bob;
  for (int i = 0; i < 16; ++i) bob.push_back(Submit(Spec("bob", "v2-8", true), 0));
  ASSERT_EQ(Only<LaunchPlan>(Tick(1)).size(), 16u);
  JobId gang = Submit(Spec("ada", "v2-32", false), 10);
  auto preempts = Only<PreemptAction>(Tick(11));
  ASSERT_EQ(preempts.size(), 4u);
  std::set<JobId> victims;
  for (const auto& p : preempts) victims.insert(p.job.job);
  JobId survivor;
  for (JobId b : bob) {
    if (!victims.contains(b)) survivor = b;
  }
  Exited(survivor, ExitKind::kSucceeded, 12);
  JobId extra = Submit(Spec("ada", "v2-8", false), 13);
  EXPECT_TRUE(Only<LaunchPlan>(Tick(14)).empty());
  EXPECT_EQ(Job(extra).state, S::kQueued);
  EXPECT_EQ(Job(extra).reason,
            "quota: 0/32 on-demand cores in use, 32 reserved for other jobs");
  for (JobId v : victims) Exited(v, ExitKind::kPreempted, 20);
  Tick(21);
  EXPECT_EQ(Job(gang).state, S::kPlaced);
  EXPECT_EQ(Job(extra).reason, "quota: 32/32 on-demand cores in use");
}

TEST_F(CycleTest, ReservationIsDroppedWhenTheQuotaNoLongerAdmitsTheJob) {
  Start(1, 2);
  Submit(Spec("bob", "v2-8", true), 0);
  Submit(Spec("bob", "v2-8", true), 0);
  Tick(1);
  JobId od = Submit(Spec("ada", "v2-8", false), 10);
  auto preempts = Only<PreemptAction>(Tick(10));
  ASSERT_EQ(preempts.size(), 1u);
  // The admin takes ada's on-demand quota away while the victim checkpoints: the hosts are not
  // kept for a job that cannot use them.
  ASSERT_TRUE(sched_->SetQuota(UserName("ada"), Quota{0, 800}, testing::At(11)).ok());
  Tick(11);
  EXPECT_NE(Job(od).reason.str().find("smaller than the job's 8"), std::string::npos)
      << Job(od).reason;
  Exited(preempts[0].job.job, ExitKind::kPreempted, 12);
  auto launches = Only<LaunchPlan>(Tick(12));
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].job.job, preempts[0].job.job);  // the victim gets its host back
}


// Property: random sequences with large gangs (up to the whole pod), tight quotas, both classes,
// host failures and repairs. Right after every Tick, an idle pod (nothing holds hosts) means no
// queued job could start: each is in backoff, beyond its quota, or of a shape the healthy pod
// cannot hold. A stall (an eligible job left waiting on an idle pod) fails the test.
class CyclePropertyTest : public testing::SchedulerFixture,
                          public ::testing::WithParamInterface<uint64_t> {};

TEST_P(CyclePropertyTest, IdlePodOnlyWhenNoQueuedJobCouldStart) {
  SchedulerConfig config = DefaultConfig();
  config.default_quota = Quota{128, 256};
  config.min_runtime_before_preemption = std::chrono::seconds(60);
  const char* profiles[] = {"fifo-first-fit", "fifo-backfill", "fair-first-fit", "fair-best-fit"};
  config.profile = profiles[GetParam() % 4];
  config.seed = GetParam();
  Start(8, 8, config);
  auto first_fit = pod::MakePlacementPolicy("first-fit");
  ASSERT_TRUE(first_fit.has_value());
  std::mt19937_64 rng(GetParam());
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const char* users[] = {"ada", "bob", "carl", "dora"};
  const char* types[] = {"v2-8", "v2-8", "v2-32", "v2-128", "v2-256", "v2-512"};
  std::map<JobEpoch, std::vector<HostId>> running;
  std::set<HostId> down;
  double now = 0;
  int idle_checks = 0;
  for (int step = 0; step < 2000; ++step) {
    now += pick(300);
    const int op = pick(100);
    if (op < 30) {
      JobSpec spec = Spec(users[pick(4)], types[pick(6)], pick(3) == 0, pick(2));
      if (pick(2)) spec.expected_runtime = std::chrono::seconds(60 + pick(7200));
      (void)sched_->Submit(spec, testing::At(now));  // beyond the quota: refused at submit
    } else if (op < 34) {
      const HostId h(pick(64));
      const bool fail = !down.contains(h) && pick(2) == 0;
      auto r = fail ? sched_->HostDown(h, testing::At(now)) : sched_->HostUp(h, testing::At(now));
      ASSERT_TRUE(r.has_value());
      if (fail) down.insert(h); else down.erase(h);
      for (const KillAction& k : Only<KillAction>(*r)) {
        if (running.erase(k.job)) {
          ASSERT_TRUE(sched_->ReportExited(k.job, std::nullopt, ExitKind::kKilled, "", testing::At(now)));
        }
      }
    } else if (op < 60 && !running.empty()) {
      auto it = running.begin();
      std::advance(it, pick(static_cast<int>(running.size())));
      const JobEpoch je = it->first;
      running.erase(it);
      ASSERT_TRUE(sched_->ReportExited(je, std::nullopt,
                                       pick(5) == 0 ? ExitKind::kFailed : ExitKind::kSucceeded,
                                       "exit", testing::At(now)));
    } else {
      for (const Action& a : sched_->Tick(testing::At(now))) {
        if (auto* l = std::get_if<LaunchPlan>(&a)) running[l->job] = l->hosts;
        if (auto* p = std::get_if<PreemptAction>(&a); p && running.erase(p->job)) {
          ASSERT_TRUE(sched_->ReportExited(p->job, std::nullopt, ExitKind::kPreempted, "",
                                           testing::At(now)));
        }
        if (auto* k = std::get_if<KillAction>(&a); k && running.erase(k->job)) {
          ASSERT_TRUE(sched_->ReportExited(k->job, std::nullopt, ExitKind::kKilled, "",
                                           testing::At(now)));
        }
      }
      if (sched_->dirty() || sched_->fleet().AllocatedHosts() > 0) continue;
      ++idle_checks;
      for (const auto& [id, job] : sched_->jobs()) {
        if (job.state != S::kQueued || job.not_before > testing::At(now)) continue;
        const Quota q = sched_->QuotaOf(job.spec.user);
        const int cores = sched_->CoresOf(job);
        if (cores > (job.spec.preemptible ? q.preemptible_cores : q.on_demand_cores)) continue;
        auto type = sched_->fleet().ParseType(job.spec.accelerator);
        ASSERT_TRUE(type.has_value());
        ASSERT_FALSE((*first_fit)->Choose(sched_->fleet().pod(0), *type).has_value())
            << "step " << step << ": job " << id << " (" << job.spec.accelerator
            << ") waits on an idle pod: " << job.reason;
      }
    }
  }
  EXPECT_GT(sched_->stats().launches, 100);
  EXPECT_GT(idle_checks, 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, CyclePropertyTest, ::testing::Range<uint64_t>(1, 9));

}  // namespace
}  // namespace podsched::core
