// Multislice jobs in the core (issue 28, stage 2; JobSpec::slices): placed all or nothing, in one
// zone, counted whole by the quota, preempted and requeued whole.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::At;
using testing::Only;
using testing::Spec;
using S = JobState;

class MultisliceTest : public testing::SchedulerFixture {
 protected:
  static SchedulerConfig Roomy() {
    SchedulerConfig config = DefaultConfig();
    config.default_quota = Quota{1000, 1000};
    return config;
  }
  // `a` v2-8 devices in zone-a, then `b` in zone-b, then (if `pod`) a 4x4 v2 pod in zone-b.
  void StartDevices(int a, int b, bool pod, SchedulerConfig config = Roomy()) {
    std::vector<pod::FleetPodSpec> pods;
    for (int i = 0; i < a; ++i) pods.push_back({"a" + std::to_string(i), pod::Generation::kV2, 1, 1, "zone-a"});
    for (int i = 0; i < b; ++i) pods.push_back({"b" + std::to_string(i), pod::Generation::kV2, 1, 1, "zone-b"});
    if (pod) pods.push_back({"pod-b", pod::Generation::kV2, 4, 4, "zone-b"});
    StartFleet(pods, config);
  }
  static JobSpec Slices(std::string user, std::string type, int n, bool preemptible = false) {
    JobSpec spec = Spec(std::move(user), std::move(type), preemptible);
    spec.slices = n;
    return spec;
  }
  // The pods of every slice the job holds, in slice order.
  std::vector<std::string> PodsOf(JobId id) {
    std::vector<std::string> pods;
    const JobRecord& job = Job(id);
    if (!job.placement) return pods;
    pods.push_back(sched_->fleet().pod(job.placement->pod).name());
    for (const pod::FleetPlacement& p : job.more_slices) pods.push_back(sched_->fleet().pod(p.pod).name());
    return pods;
  }
  std::set<std::string> ZonesOf(JobId id) {
    std::set<std::string> zones;
    const JobRecord& job = Job(id);
    zones.insert(sched_->fleet().zone(job.placement->pod));
    for (const pod::FleetPlacement& p : job.more_slices) zones.insert(sched_->fleet().zone(p.pod));
    return zones;
  }
};

TEST_F(MultisliceTest, SlicesArePlacedTogetherInOneZoneAndCountedWhole) {
  StartDevices(4, 2, true);
  const JobId ada = Submit(Slices("ada", "v2-8", 4), 0);
  Tick(1);
  ASSERT_EQ(Job(ada).state, S::kPlaced);
  EXPECT_EQ(PodsOf(ada), (std::vector<std::string>{"a0", "a1", "a2", "a3"}));
  EXPECT_EQ(sched_->UsageOf(UserName("ada")).on_demand_cores, 32);
  EXPECT_EQ(sched_->CoresOf(Job(ada)), 32);
  // Its PLACED event names every slice: the first in `pod` and `hosts`, the others after.
  auto events = repo_.EventsOf(ada);
  ASSERT_TRUE(events.has_value());
  const JobEvent& placed = events->back();
  ASSERT_EQ(placed.to, S::kPlaced);
  EXPECT_EQ(placed.pod, "a0");
  ASSERT_EQ(placed.more_slices.size(), 3u);
  EXPECT_EQ(placed.more_slices[2].pod, "a3");
  EXPECT_EQ(placed.more_slices[2].hosts, std::vector<HostId>{HostId(0)});

  // Zone a is full: three slices go to zone b (its devices first: best fit), none to zone a.
  const JobId bob = Submit(Slices("bob", "v2-8", 3), 2);
  Tick(3);
  ASSERT_EQ(Job(bob).state, S::kPlaced);
  EXPECT_EQ(ZonesOf(bob), std::set<std::string>{"zone-b"});
  EXPECT_EQ(PodsOf(bob), (std::vector<std::string>{"b0", "b1", "pod-b"}));

  // Two 2x2 slices in what is left of the 4x4 pod, disjoint.
  const JobId carl = Submit(Slices("carl", "v2-32", 2), 4);
  Tick(5);
  ASSERT_EQ(Job(carl).state, S::kPlaced);
  EXPECT_EQ(PodsOf(carl), (std::vector<std::string>{"pod-b", "pod-b"}));
  const std::vector<HostId> first = sched_->fleet().HostsIn(*Job(carl).placement);
  const std::vector<HostId> second = sched_->fleet().HostsIn(Job(carl).more_slices.at(0));
  for (HostId h : first) EXPECT_EQ(std::count(second.begin(), second.end(), h), 0);
  EXPECT_EQ(sched_->fleet().AllocatedHosts(), 4 + 3 + 8);

  // Its end frees every slice.
  Exited(carl, ExitKind::kSucceeded, 6);
  EXPECT_TRUE(Job(carl).more_slices.empty());
  EXPECT_EQ(sched_->fleet().AllocatedHosts(), 4 + 3);
  EXPECT_EQ(sched_->UsageOf(UserName("carl")).on_demand_cores, 0);
}

// Best fit puts a single v2-8 on a device rather than in a pod's corner; the slices of a
// multislice job go to that zone first, though the pod's zone comes first in the fleet.
TEST_F(MultisliceTest, BestFitTriesTheZoneOfItsChoiceForOneSliceFirst) {
  StartFleet({{"big", pod::Generation::kV2, 4, 4, "zone-a"},
              {"dev-0", pod::Generation::kV2, 1, 1, "zone-b"},
              {"dev-1", pod::Generation::kV2, 1, 1, "zone-b"}},
             Roomy());
  const JobId two = Submit(Slices("ada", "v2-8", 2), 0);
  const JobId three = Submit(Slices("bob", "v2-8", 3), 0);
  Tick(1);
  ASSERT_EQ(Job(two).state, S::kPlaced);
  EXPECT_EQ(PodsOf(two), (std::vector<std::string>{"dev-0", "dev-1"}));
  // Three do not fit zone b: they go to the pod.
  ASSERT_EQ(Job(three).state, S::kPlaced);
  EXPECT_EQ(PodsOf(three), (std::vector<std::string>{"big", "big", "big"}));
}

TEST_F(MultisliceTest, AllOrNothingAJobWaitsWithoutHoldingAnyHost) {
  StartDevices(3, 2, false);
  const JobId one = Submit(Spec("ada", "v2-8", false), 0);
  Tick(1);
  ASSERT_EQ(Job(one).state, S::kPlaced);
  // Two devices free in each zone: three slices fit in neither, and nothing is held for them.
  const JobId three = Submit(Slices("bob", "v2-8", 3), 2);
  Tick(3);
  EXPECT_EQ(Job(three).state, S::kQueued);
  EXPECT_EQ(Job(three).reason,
            "no room for 3 v2-8 slices in one zone of pods a0, a1, a2 and 2 more");
  EXPECT_EQ(sched_->fleet().AllocatedHosts(), 1);
  // Behind a blocked multislice job nothing backfills, not even a job that fits now.
  const JobId small = Submit(Spec("carl", "v2-8", false), 4);
  Tick(5);
  EXPECT_EQ(Job(small).state, S::kQueued);
  EXPECT_EQ(Job(small).reason,
            "waiting for a multislice job ahead to start (no backfill behind a multislice job)");
  // The single job ends: zone a has three free devices.
  Exited(one, ExitKind::kSucceeded, 6);
  Tick(7);
  ASSERT_EQ(Job(three).state, S::kPlaced);
  EXPECT_EQ(ZonesOf(three), std::set<std::string>{"zone-a"});
  EXPECT_EQ(Job(small).state, S::kPlaced);  // on a zone-b device
}

// Found by the property test: a multislice job that only repairs could let start held up every
// job behind it (no backfill behind a multislice head). It waits aside, like a single slice.
TEST_F(MultisliceTest, AJobOnlyRepairsCouldLetStartWaitsAsideWithoutBlockingOthers) {
  StartDevices(3, 0, false);
  ASSERT_TRUE(sched_->HostDown(sched_->fleet().FleetHost(2, HostId(0)), At(0)).has_value());
  const JobId three = Submit(Slices("ada", "v2-8", 3), 1);
  const JobId one = Submit(Spec("bob", "v2-8", false), 2);
  Tick(3);
  EXPECT_EQ(Job(three).state, S::kQueued);
  EXPECT_EQ(Job(three).reason,
            "no 3 v2-8 slices fit the healthy hosts of one zone of pods a0, a1, a2: waits for "
            "repairs without blocking others");
  EXPECT_EQ(Job(one).state, S::kPlaced);
  Exited(one, ExitKind::kSucceeded, 4);
  ASSERT_TRUE(sched_->HostUp(sched_->fleet().FleetHost(2, HostId(0)), At(5)).has_value());
  Tick(6);
  EXPECT_EQ(Job(three).state, S::kPlaced);
}

TEST_F(MultisliceTest, ASubmissionNoZoneCouldHoldOrOverTheQuotaIsRefused) {
  StartDevices(3, 2, false, DefaultConfig());  // quota: 40 on-demand cores
  auto too_many = sched_->Submit(Slices("ada", "v2-8", 4), At(0));
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.error().message(),
            "slices is 4, but at most 3 v2-8 slices fit in one zone (zone-a) of this fleet: ask "
            "for fewer slices or a smaller type");
  auto scoped = Slices("ada", "v2-8", 3);
  scoped.zone = "zone-b";
  auto in_b = sched_->Submit(scoped, At(0));
  ASSERT_FALSE(in_b.has_value());
  EXPECT_NE(in_b.error().message().find("at most 2 v2-8 slices fit in one zone (zone-b) of this "
                                        "fleet within the job's scope"),
            std::string::npos)
      << in_b.error().message();
  auto none = sched_->Submit(Slices("ada", "v2-8", 0), At(0));
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("slices"), std::string::npos) << none.error().message();

  StartDevices(8, 0, false, DefaultConfig());
  auto over = sched_->Submit(Slices("ada", "v2-8", 6), At(0));
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.error().message(),
            "6 slices of v2-8 need 48 on-demand cores; the quota of ada is 40");
  EXPECT_EQ(sched_->ActiveJobs(), 0);
}

TEST_F(MultisliceTest, PreemptingItForOneSlicePreemptsAndRequeuesTheWholeJob) {
  StartDevices(3, 0, false);
  const JobId gang = Submit(Slices("ada", "v2-8", 3, /*preemptible=*/true), 0);
  Tick(1);
  ASSERT_EQ(Job(gang).state, S::kPlaced);
  const JobId urgent = Submit(Spec("bob", "v2-8", false), 2);
  const Actions actions = Tick(3);
  ASSERT_EQ(Job(gang).state, S::kPreempting);
  EXPECT_EQ(Only<PreemptAction>(actions).size(), 1u);
  Exited(gang, ExitKind::kPreempted, 4);
  Tick(5);
  EXPECT_EQ(Job(urgent).state, S::kPlaced);
  EXPECT_EQ(Job(gang).state, S::kQueued);
  EXPECT_TRUE(Job(gang).more_slices.empty());
  EXPECT_EQ(sched_->fleet().AllocatedHosts(), 1);
  EXPECT_EQ(sched_->UsageOf(UserName("ada")).preemptible_cores, 0);
}

// An on-demand multislice job preempts preemptible work for the slices it cannot find free, and
// keeps the free ones too while its victims stop: a job submitted meanwhile cannot take them.
TEST_F(MultisliceTest, OnDemandSlicesPreemptWhatTheyNeedAndKeepTheFreeOnes) {
  StartDevices(3, 0, false);
  const JobId cheap = Submit(Spec("ada", "v2-8", /*preemptible=*/true), 0);
  const JobId also = Submit(Spec("ada", "v2-8", /*preemptible=*/true), 0);
  Tick(1);
  ASSERT_EQ(Job(cheap).state, S::kPlaced);
  ASSERT_EQ(Job(also).state, S::kPlaced);
  // `also` checkpointed later, so preempting it loses less work.
  Progress(cheap, 10, 0, 2);
  Progress(also, 10, 10, 2);
  // Two slices: the free device and one victim's.
  const JobId gang = Submit(Slices("bob", "v2-8", 2), 3);
  const Actions actions = Tick(100);
  EXPECT_EQ(Job(gang).state, S::kQueued);
  const std::vector<PreemptAction> preempted = Only<PreemptAction>(actions);
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(preempted[0].job.job, also) << "the victim that loses the least work";
  EXPECT_EQ(Job(also).state, S::kPreempting);
  EXPECT_EQ(Job(gang).reason, "waiting for job " + std::to_string(also.value()) + " to checkpoint");
  // The free device is kept for it: a job submitted meanwhile (which may not preempt) waits,
  // though it would fit there.
  const JobId single = Submit(Spec("carl", "v2-8", /*preemptible=*/true), 101);
  Tick(102);
  EXPECT_EQ(Job(single).state, S::kQueued);
  Exited(also, ExitKind::kPreempted, 103);
  Tick(104);
  ASSERT_EQ(Job(gang).state, S::kPlaced);
  EXPECT_EQ(Job(gang).more_slices.size(), 1u);
  EXPECT_EQ(Job(cheap).state, S::kRunning);
  EXPECT_EQ(Job(single).state, S::kQueued);
  EXPECT_EQ(Job(also).state, S::kQueued);  // requeued, waits for a device
}

TEST_F(MultisliceTest, AFailedHostRequeuesTheJobAndKillsEverySlice) {
  StartDevices(3, 0, false);
  const JobId gang = Submit(Slices("ada", "v2-8", 2), 0);
  Tick(1);
  ASSERT_EQ(Job(gang).state, S::kPlaced);
  const JobEpoch epoch = Epoch(gang);
  const HostId second = sched_->fleet().HostsIn(Job(gang).more_slices.at(0)).at(0);
  auto down = sched_->HostDown(second, At(2));
  ASSERT_TRUE(down.has_value()) << down.error().ToString();
  const std::vector<KillAction> kills = Only<KillAction>(*down);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].hosts.size(), 2u);
  EXPECT_EQ(Job(gang).state, S::kQueued);
  // The first slice's host is held until it reports its processes gone; then both are free.
  EXPECT_EQ(sched_->fleet().AllocatedHosts(), 1);
  const HostId first = kills[0].hosts[0] == second ? kills[0].hosts[1] : kills[0].hosts[0];
  ASSERT_TRUE(sched_->ReportHostReleased(epoch, first, At(3)).has_value());
  EXPECT_EQ(sched_->fleet().AllocatedHosts(), 0);
}

}  // namespace
}  // namespace podsched::core
