#include "pod/fleet.h"

#include <gtest/gtest.h>

namespace podsched::pod {
namespace {

// A small grant-shaped fleet: a v2 pod, a v3 pod and three standalone v2-8 devices.
Fleet Grantish() {
  std::vector<FleetPodSpec> specs = {
      {"v2-pod", Generation::kV2, 8, 8, "us-central1-b"},
      {"v3-pod", Generation::kV3, 4, 4, "europe-west4-a"},
  };
  for (int i = 0; i < 3; ++i) {
    specs.push_back({"dev" + std::to_string(i), Generation::kV2, 1, 1, "us-central1-f"});
  }
  Result<Fleet> fleet = Fleet::Create(specs);
  EXPECT_TRUE(fleet.has_value()) << fleet.error().message();
  return std::move(*fleet);
}

TEST(FleetTest, HostsAreNumberedAcrossThePodsInFleetOrder) {
  Fleet fleet = Grantish();
  EXPECT_EQ(fleet.size(), 5);
  EXPECT_EQ(fleet.num_hosts(), 64 + 16 + 3);
  EXPECT_EQ(fleet.first_host(1), 64);
  EXPECT_EQ(fleet.first_host(4), 82);
  EXPECT_EQ(fleet.FleetHost(1, HostId(5)), HostId(69));
  for (int h = 0; h < fleet.num_hosts(); ++h) {
    const Fleet::Located at = fleet.Locate(HostId(h));
    EXPECT_EQ(fleet.FleetHost(at.pod, at.in_pod), HostId(h)) << h;
    EXPECT_TRUE(fleet.pod(at.pod).Contains(at.in_pod)) << h;
  }
  EXPECT_EQ(fleet.Locate(HostId(63)).pod, 0);
  EXPECT_EQ(fleet.Locate(HostId(64)).pod, 1);
  EXPECT_EQ(fleet.Locate(HostId(82)).pod, 4);
  EXPECT_FALSE(fleet.Contains(HostId(83)));
  EXPECT_EQ(fleet.HostsIn({1, {{1, 1}, {1, 2}}}), (std::vector<HostId>{HostId(69), HostId(70)}));
  EXPECT_EQ(fleet.IndexOf("dev2"), 4);
  EXPECT_EQ(fleet.IndexOf("nope"), std::nullopt);
  EXPECT_EQ(fleet.zone(1), "europe-west4-a");
}

TEST(FleetTest, AFleetOfOnePodNumbersHostsAsThePod) {
  Fleet fleet = Fleet::Of(Pod::Full("p", Generation::kV2));
  EXPECT_EQ(fleet.num_hosts(), 64);
  EXPECT_EQ(fleet.FleetHost(0, HostId(17)), HostId(17));
  EXPECT_EQ(fleet.Locate(HostId(17)).in_pod, HostId(17));
  // Exactly the pod's own parse errors.
  Result<AcceleratorType> bad = fleet.ParseType("v2-12");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), fleet.pod(0).ParseType("v2-12").error().message());
}

TEST(FleetTest, CreateRefusesNamesTwiceEmptyNamesImpossibleGridsAndNoPods) {
  EXPECT_FALSE(Fleet::Create({}).has_value());
  Result<Fleet> twice = Fleet::Create(
      {{"a", Generation::kV2, 8, 8, ""}, {"a", Generation::kV2, 1, 1, ""}});
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message().find("two pods of the fleet are named 'a'"), std::string::npos)
      << twice.error().message();
  Result<Fleet> unnamed = Fleet::Create({{"", Generation::kV2, 8, 8, ""}});
  ASSERT_FALSE(unnamed.has_value());
  EXPECT_NE(unnamed.error().message().find("no name"), std::string::npos);
  Result<Fleet> huge = Fleet::Create(
      {{"a", Generation::kV2, 8, 8, ""}, {"big", Generation::kV2, 16, 16, ""}});
  ASSERT_FALSE(huge.has_value());
  EXPECT_NE(huge.error().message().find("pod big"), std::string::npos) << huge.error().message();
  EXPECT_NE(huge.error().message().find("8x8"), std::string::npos) << huge.error().message();
}

TEST(FleetTest, ParseTypeAcceptsWhatSomePodHoldsAndSaysWhereEachTypeRuns) {
  Fleet fleet = Grantish();
  EXPECT_TRUE(fleet.ParseType("v2-8").has_value());
  EXPECT_TRUE(fleet.ParseType("v2-512").has_value());
  EXPECT_TRUE(fleet.ParseType("v3-32").has_value());
  Result<AcceleratorType> v3 = fleet.ParseType("v3-512");  // 8x8 hosts: the v3 pod is 4x4
  ASSERT_FALSE(v3.has_value());
  const std::string& m = v3.error().message();
  EXPECT_NE(m.find("no pod of this fleet can hold a v3-512"), std::string::npos) << m;
  EXPECT_NE(m.find("v2-8, v2-32, v2-128, v2-256, v2-512 on pod v2-pod (v2 8x8)"),
            std::string::npos) << m;
  EXPECT_NE(m.find("v3-8, v3-32, v3-64, v3-128 on pod v3-pod (v3 4x4)"), std::string::npos) << m;
  EXPECT_NE(m.find("v2-8 on 3 v2 1x1 pods dev0, dev1, dev2"), std::string::npos) << m;
  // Not a type at all: the parser's own error.
  Result<AcceleratorType> junk = fleet.ParseType("tpu");
  ASSERT_FALSE(junk.has_value());
  EXPECT_NE(junk.error().message().find("not an accelerator type"), std::string::npos);

  const AcceleratorType v2_32 = *fleet.ParseType("v2-32");
  EXPECT_TRUE(fleet.CanHold(0, v2_32));
  EXPECT_FALSE(fleet.CanHold(1, v2_32));  // v3
  EXPECT_FALSE(fleet.CanHold(2, v2_32));  // one host
  EXPECT_TRUE(fleet.CanHold(2, *fleet.ParseType("v2-8")));
  EXPECT_EQ(fleet.PodsThatCanHold(v2_32), std::vector<int>{0});
  EXPECT_EQ(fleet.PodsThatCanHold(*fleet.ParseType("v2-8")), (std::vector<int>{0, 2, 3, 4}));
}

// A job's scope: the pods of a zone, or one pod; errors say what is wrong and list what there is.
TEST(FleetTest, PodsThatCanHoldWithinAScopeAndCheckScopeNamesWhatIsWrong) {
  auto fleet = Fleet::Create({{"a", Generation::kV2, 4, 4, "us-1"},
                              {"dev-0", Generation::kV2, 1, 1, "us-2"},
                              {"dev-1", Generation::kV2, 1, 1, "us-2"},
                              {"v3", Generation::kV3, 2, 2, "eu-1"}});
  ASSERT_TRUE(fleet.has_value());
  const AcceleratorType v2_8 = *AcceleratorType::Parse("v2-8");
  const AcceleratorType v2_32 = *AcceleratorType::Parse("v2-32");
  EXPECT_EQ(fleet->PodsThatCanHold(v2_8), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(fleet->PodsThatCanHold(v2_8, "us-2"), (std::vector<int>{1, 2}));
  EXPECT_EQ(fleet->PodsThatCanHold(v2_8, "", "dev-1"), (std::vector<int>{2}));
  EXPECT_EQ(fleet->PodsThatCanHold(v2_8, "us-1", "dev-1"), (std::vector<int>{}));
  EXPECT_TRUE(fleet->CheckScope(v2_8, "", "").ok());
  EXPECT_TRUE(fleet->CheckScope(v2_8, "us-2", "dev-0").ok());
  auto error = [&](const AcceleratorType& t, const char* zone, const char* pod) {
    return fleet->CheckScope(t, zone, pod).message();
  };
  EXPECT_EQ(error(v2_8, "", "dev-9"), "pod: no pod 'dev-9' in this fleet; pods: a, dev-0, dev-1 and 1 more");
  EXPECT_EQ(error(v2_8, "us-1", "dev-0"), "pod dev-0 is in zone 'us-2', not 'us-1'");
  EXPECT_EQ(error(v2_32, "", "dev-0"), "pod dev-0 (v2 1x1) cannot hold a v2-32");
  EXPECT_EQ(error(v2_8, "mars-1", ""), "zone: no pod of this fleet is in zone 'mars-1'; zones: us-1, us-2, eu-1");
  EXPECT_EQ(error(v2_32, "us-2", ""), "no pod of zone us-2 can hold a v2-32");
}

// Pods reserved to one class: only jobs of that class may use them, and a job no pod of its
// class can hold is refused, naming the class.
TEST(FleetTest, PodsOfOneClassTakeOnlyItsJobs) {
  FleetPodSpec od{"od", Generation::kV2, 1, 1, "us-2", PodClass::kOnDemand};
  FleetPodSpec pre{"pre", Generation::kV2, 1, 1, "us-2", PodClass::kPreemptible};
  auto fleet = Fleet::Create({{"a", Generation::kV2, 2, 2, "us-1"}, od, pre});
  ASSERT_TRUE(fleet.has_value());
  EXPECT_TRUE(fleet->HasClassPods());
  const AcceleratorType v2_8 = *AcceleratorType::Parse("v2-8");
  const AcceleratorType v2_32 = *AcceleratorType::Parse("v2-32");
  EXPECT_EQ(fleet->PodsThatCanHold(v2_8), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(fleet->PodsThatCanHold(v2_8, "", "", /*preemptible=*/false), (std::vector<int>{0, 1}));
  EXPECT_EQ(fleet->PodsThatCanHold(v2_8, "", "", /*preemptible=*/true), (std::vector<int>{0, 2}));
  EXPECT_TRUE(fleet->CheckScope(v2_8, "", "od", false).ok());
  EXPECT_EQ(fleet->CheckScope(v2_8, "", "od", true).message(), "pod od takes on-demand jobs only");
  EXPECT_EQ(fleet->CheckScope(v2_8, "us-2", "", true).message(), "");
  auto devices = Fleet::Create({od, pre});
  ASSERT_TRUE(devices.has_value());
  EXPECT_EQ(devices->CheckScope(v2_32, "", "", true).message(),
            "no pod of this fleet that takes preemptible jobs can hold a v2-32");
  auto reserved = Fleet::Create({{"a", Generation::kV2, 2, 2, "us-1", PodClass::kOnDemand}, pre});
  ASSERT_TRUE(reserved.has_value());
  EXPECT_EQ(reserved->CheckScope(v2_32, "us-1", "", true).message(),
            "no pod of zone us-1 that takes preemptible jobs can hold a v2-32");
  EXPECT_EQ(PodClassName(PodClass::kPreemptible), "preemptible");
}

TEST(FleetTest, AllocationAndHealthChangeOnlyThePodNamed) {
  Fleet fleet = Grantish();
  const FleetPlacement on_v3{1, {{0, 0}, {2, 2}}};
  ASSERT_TRUE(fleet.CanPlace(on_v3));
  ASSERT_TRUE(fleet.Allocate(AllocationId(1), on_v3).ok());
  EXPECT_EQ(fleet.pod(1).AllocatedHosts(), 4);
  EXPECT_EQ(fleet.pod(0).AllocatedHosts(), 0);
  EXPECT_EQ(fleet.AllocatedHosts(), 4);
  EXPECT_TRUE(fleet.host(HostId(64)).allocation.has_value());
  EXPECT_FALSE(fleet.host(HostId(0)).allocation.has_value());
  EXPECT_FALSE(fleet.CanPlace(on_v3));
  EXPECT_FALSE(fleet.CanPlace({7, on_v3.rect}));
  EXPECT_FALSE(fleet.Allocate(AllocationId(2), {7, on_v3.rect}).ok());
  EXPECT_FALSE(fleet.Release(AllocationId(1), 0).ok());  // not in pod 0
  ASSERT_TRUE(fleet.Release(AllocationId(1), 1).ok());
  EXPECT_EQ(fleet.AllocatedHosts(), 0);

  ASSERT_TRUE(fleet.MarkUnhealthy(HostId(82)).ok());
  EXPECT_FALSE(fleet.pod(4).host(HostId(0)).healthy);
  EXPECT_TRUE(fleet.pod(3).host(HostId(0)).healthy);
  EXPECT_EQ(fleet.AvailableHosts(), fleet.num_hosts() - 1);
  Status unknown = fleet.MarkUnhealthy(HostId(83));
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("hosts 0..82"), std::string::npos) << unknown.message();
  ASSERT_TRUE(fleet.MarkHealthy(HostId(82)).ok());
  ASSERT_TRUE(fleet.SetDraining(HostId(70), true).ok());
  EXPECT_TRUE(fleet.pod(1).host(HostId(6)).draining);
}

}  // namespace
}  // namespace podsched::pod
