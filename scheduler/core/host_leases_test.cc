// HostLeases alone: holding, releasing host by host, failed holds, reservations.
#include "scheduler/core/host_leases.h"

#include <gtest/gtest.h>

namespace podsched::core {
namespace {

pod::Fleet FourByFour() {
  auto pod = pod::Pod::Create("test", pod::Generation::kV2, 4, 4);
  EXPECT_TRUE(pod.has_value());
  return pod::Fleet::Of(std::move(*pod));
}

// A 2x2 block at (row, col) of the pod `pod`.
pod::FleetPlacement Block(int row, int col, int pod = 0) {
  return pod::FleetPlacement{pod, pod::Placement{{row, col}, {2, 2}}};
}

JobEpoch Epoch(int64_t job, int64_t epoch) { return JobEpoch{JobId(job), epoch}; }

// A multislice job's epoch holds a lease per slice, all or nothing; each slice's hosts are free
// once they have all reported, and the epoch's other slices stay held until theirs have.
TEST(HostLeasesTest, SlicesAreHeldTogetherAndFreedEachWhenItsHostsAreGone) {
  auto fleet = pod::Fleet::Create({{"a", pod::Generation::kV2, 4, 4, "z"},
                                   {"b", pod::Generation::kV2, 4, 4, "z"}});
  ASSERT_TRUE(fleet.has_value());
  HostLeases hosts(std::move(*fleet));
  ASSERT_TRUE(hosts.Hold(Epoch(9, 1), Block(2, 2, 1)).has_value());
  // Two slices that overlap each other, or one that overlaps a held lease: nothing held.
  EXPECT_FALSE(hosts.Hold(Epoch(1, 1), {Block(0, 0), Block(1, 1)}).has_value());
  EXPECT_FALSE(hosts.Hold(Epoch(1, 1), {Block(0, 0), Block(2, 2, 1)}).has_value());
  EXPECT_FALSE(hosts.Hold(Epoch(1, 1), std::vector<pod::FleetPlacement>{}).has_value());
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 4);
  EXPECT_EQ(hosts.leases().size(), 1u);

  const uint64_t version = hosts.version();
  ASSERT_TRUE(hosts.Hold(Epoch(1, 1), {Block(0, 0), Block(0, 0, 1)}).has_value());
  EXPECT_GT(hosts.version(), version);
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 12);
  const std::vector<HostId> both = hosts.HostsOf(Epoch(1, 1));
  EXPECT_EQ(both.size(), 8u);
  EXPECT_EQ(hosts.LeaseOn(both.front())->owner, Epoch(1, 1));
  EXPECT_EQ(hosts.LeaseOn(both.back())->owner, Epoch(1, 1));
  EXPECT_NE(hosts.LeaseOn(both.front())->allocation, hosts.LeaseOn(both.back())->allocation);

  // The second slice's hosts report: it is freed, the first is still held.
  for (size_t i = 4; i < 7; ++i) EXPECT_FALSE(hosts.Gone(Epoch(1, 1), both[i]));
  EXPECT_TRUE(hosts.Gone(Epoch(1, 1), both[7]));
  EXPECT_EQ(hosts.LeaseOn(both[7]), nullptr);
  EXPECT_NE(hosts.LeaseOn(both[0]), nullptr);
  EXPECT_TRUE(hosts.HoldsAnyEpochOf(JobId(1)));
  EXPECT_EQ(hosts.HostsOf(Epoch(1, 1)).size(), 4u);
  EXPECT_TRUE(hosts.Gone(Epoch(1, 1), std::nullopt));  // every host: the first slice too
  EXPECT_FALSE(hosts.HoldsAnyEpochOf(JobId(1)));
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 4);
}

TEST(HostLeasesTest, AHoldAllocatesEveryHostAndAnOverlapChangesNothing) {
  HostLeases hosts(FourByFour());
  auto first = hosts.Hold(Epoch(1, 1), Block(0, 0));
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 4);
  for (HostId h : hosts.fleet().HostsIn(Block(0, 0))) {
    ASSERT_NE(hosts.LeaseOn(h), nullptr);
    EXPECT_EQ(hosts.LeaseOn(h)->owner, Epoch(1, 1));
    EXPECT_EQ(hosts.LeaseOn(h)->pending.size(), 4u);
  }
  EXPECT_EQ(hosts.LeaseOn(HostId(15)), nullptr);
  EXPECT_EQ(hosts.LeaseOn(HostId(99)), nullptr);  // not in the pod

  auto overlap = hosts.Hold(Epoch(2, 1), Block(1, 1));
  EXPECT_FALSE(overlap.has_value());
  auto twice = hosts.Hold(Epoch(1, 1), Block(2, 2));  // the same epoch holds already
  EXPECT_FALSE(twice.has_value());
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 4);
  EXPECT_EQ(hosts.leases().size(), 1u);

  auto second = hosts.Hold(Epoch(2, 1), Block(2, 2));
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(*first, *second);
  EXPECT_EQ(hosts.leases().size(), 2u);
}

TEST(HostLeasesTest, HostsAreFreedOnlyWhenTheLastOneReportsItsProcessesGone) {
  HostLeases hosts(FourByFour());
  ASSERT_TRUE(hosts.Hold(Epoch(7, 3), Block(0, 2)).has_value());
  const std::vector<HostId> held = hosts.fleet().HostsIn(Block(0, 2));
  EXPECT_FALSE(hosts.Gone(Epoch(7, 2), held[0]));  // another epoch of the job: nothing
  EXPECT_FALSE(hosts.Gone(Epoch(8, 3), held[0]));
  for (size_t i = 0; i + 1 < held.size(); ++i) {
    EXPECT_FALSE(hosts.Gone(Epoch(7, 3), held[i]));
    EXPECT_FALSE(hosts.Gone(Epoch(7, 3), held[i]));  // a repeated report changes nothing
    EXPECT_EQ(hosts.fleet().AllocatedHosts(), 4) << "freed before every host reported";
  }
  EXPECT_TRUE(hosts.HoldsAnyEpochOf(JobId(7)));
  EXPECT_TRUE(hosts.Gone(Epoch(7, 3), held.back()));
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 0);
  EXPECT_TRUE(hosts.leases().empty());
  EXPECT_FALSE(hosts.HoldsAnyEpochOf(JobId(7)));
  EXPECT_FALSE(hosts.Gone(Epoch(7, 3), std::nullopt));  // released already

  // The freed hosts can be held again, by the job's next epoch; all at once (a lost agent).
  ASSERT_TRUE(hosts.Hold(Epoch(7, 4), Block(0, 2)).has_value());
  EXPECT_TRUE(hosts.Gone(Epoch(7, 4), std::nullopt));
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 0);
}

TEST(HostLeasesTest, HoldsAnyEpochOfLooksAtEveryEpochAndNoOtherJob) {
  HostLeases hosts(FourByFour());
  ASSERT_TRUE(hosts.Hold(Epoch(5, 1), Block(0, 0)).has_value());  // lingering
  ASSERT_TRUE(hosts.Hold(Epoch(5, 2), Block(2, 2)).has_value());
  EXPECT_TRUE(hosts.HoldsAnyEpochOf(JobId(5)));
  EXPECT_FALSE(hosts.HoldsAnyEpochOf(JobId(4)));
  EXPECT_FALSE(hosts.HoldsAnyEpochOf(JobId(6)));
  EXPECT_TRUE(hosts.Gone(Epoch(5, 2), std::nullopt));
  EXPECT_TRUE(hosts.HoldsAnyEpochOf(JobId(5)));
}

TEST(HostLeasesTest, AnUnhealthyHostCannotBeHeldUntilItIsHealthyAgain) {
  HostLeases hosts(FourByFour());
  ASSERT_TRUE(hosts.MarkUnhealthy(HostId(0)).ok());
  EXPECT_FALSE(hosts.Hold(Epoch(1, 1), Block(0, 0)).has_value());
  EXPECT_FALSE(hosts.MarkUnhealthy(HostId(99)).ok());
  ASSERT_TRUE(hosts.MarkHealthy(HostId(0)).ok());
  EXPECT_TRUE(hosts.Hold(Epoch(1, 1), Block(0, 0)).has_value());
}

TEST(HostLeasesTest, AReservationIsKeptPerJobUntilDropped) {
  HostLeases hosts(FourByFour());
  EXPECT_EQ(hosts.ReservationOf(JobId(3)), nullptr);
  EXPECT_FALSE(hosts.Unreserve(JobId(3)));
  hosts.Reserve(JobId(3), Reservation{Block(0, 0), {JobId(1)}, {}});
  hosts.Reserve(JobId(3), Reservation{Block(2, 0), {JobId(2)}, {}});  // replaces
  ASSERT_NE(hosts.ReservationOf(JobId(3)), nullptr);
  EXPECT_EQ(hosts.ReservationOf(JobId(3))->placement, Block(2, 0));
  EXPECT_EQ(hosts.ReservationOf(JobId(3))->victims, std::vector<JobId>{JobId(2)});
  EXPECT_EQ(hosts.reservations().size(), 1u);
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 0);  // a reservation holds no host
  EXPECT_TRUE(hosts.Unreserve(JobId(3)));
  EXPECT_EQ(hosts.ReservationOf(JobId(3)), nullptr);
}

TEST(HostLeasesTest, InAFleetHostsAreTheFleetsAndALeaseHoldsHostsOfItsOwnPod) {
  auto fleet = pod::Fleet::Create({{"a", pod::Generation::kV2, 4, 4, ""},
                                   {"b", pod::Generation::kV2, 4, 4, ""}});
  ASSERT_TRUE(fleet.has_value());
  HostLeases hosts(std::move(*fleet));
  auto in_b = hosts.Hold(Epoch(1, 1), Block(2, 2, 1));
  ASSERT_TRUE(in_b.has_value()) << in_b.error().ToString();
  // The same rectangle of the other pod is free; pod b's hosts are 16..31.
  ASSERT_TRUE(hosts.Hold(Epoch(2, 1), Block(2, 2, 0)).has_value());
  EXPECT_EQ(hosts.fleet().pod(1).AllocatedHosts(), 4);
  const std::vector<HostId> held = hosts.fleet().HostsIn(Block(2, 2, 1));
  EXPECT_EQ(held, (std::vector<HostId>{HostId(26), HostId(27), HostId(30), HostId(31)}));
  ASSERT_NE(hosts.LeaseOn(HostId(26)), nullptr);
  EXPECT_EQ(hosts.LeaseOn(HostId(26))->owner, Epoch(1, 1));
  EXPECT_EQ(hosts.LeaseOn(HostId(10))->owner, Epoch(2, 1));  // (2,2) of pod a
  EXPECT_EQ(hosts.LeaseOn(HostId(16)), nullptr);
  for (size_t i = 0; i + 1 < held.size(); ++i) EXPECT_FALSE(hosts.Gone(Epoch(1, 1), held[i]));
  EXPECT_TRUE(hosts.Gone(Epoch(1, 1), held.back()));
  EXPECT_EQ(hosts.fleet().pod(1).AllocatedHosts(), 0);
  EXPECT_EQ(hosts.fleet().pod(0).AllocatedHosts(), 4);
  // A pod the fleet does not have: refused, nothing changes.
  EXPECT_FALSE(hosts.Hold(Epoch(3, 1), Block(0, 0, 2)).has_value());
  EXPECT_EQ(hosts.fleet().AllocatedHosts(), 4);
}

}  // namespace
}  // namespace podsched::core
