#include "pod/pod.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "pod/what_if.h"

namespace podsched::pod {
namespace {

Pod MakePod(Generation g, int rows, int cols) {
  Result<Pod> pod = Pod::Create("test", g, rows, cols);
  EXPECT_TRUE(pod.has_value());
  return std::move(*pod);
}

TEST(PodTest, CreateChecksGridSize) {
  EXPECT_TRUE(Pod::Create("a", Generation::kV2, 1, 1).has_value());
  EXPECT_TRUE(Pod::Create("a", Generation::kV2, 8, 8).has_value());
  EXPECT_TRUE(Pod::Create("a", Generation::kV3, 16, 16).has_value());
  EXPECT_FALSE(Pod::Create("a", Generation::kV2, 16, 16).has_value());
  EXPECT_FALSE(Pod::Create("a", Generation::kV2, 0, 4).has_value());
  EXPECT_FALSE(Pod::Create("a", Generation::kV3, 4, -1).has_value());
  Pod full = Pod::Full("p", Generation::kV3);
  EXPECT_EQ(full.num_hosts(), 256);
  EXPECT_EQ(full.AvailableHosts(), 256);
}

TEST(PodTest, HostNumberingIsRowMajor) {
  Pod pod = MakePod(Generation::kV2, 4, 8);
  EXPECT_EQ(pod.HostAt({1, 3}), HostId(11));
  EXPECT_EQ(pod.CoordOf(HostId(11)), (HostCoord{1, 3}));
  EXPECT_TRUE(pod.Contains(HostId(31)));
  EXPECT_FALSE(pod.Contains(HostId(32)));
  EXPECT_FALSE(pod.Contains(HostId(-1)));
  EXPECT_EQ(pod.HostsIn({{1, 2}, {2, 2}}),
            (std::vector<HostId>{HostId(10), HostId(11), HostId(18), HostId(19)}));
}

TEST(PodTest, FullPodShapeOnlyOnFullGrid) {
  Pod full = Pod::Full("p", Generation::kV2);
  EXPECT_TRUE(full.IsFullPodShape({8, 8}));
  EXPECT_FALSE(full.IsFullPodShape({4, 8}));
  Pod small = MakePod(Generation::kV2, 4, 4);
  EXPECT_FALSE(small.IsFullPodShape({4, 4}));
  Pod v3 = Pod::Full("p", Generation::kV3);
  EXPECT_TRUE(v3.IsFullPodShape({16, 16}));
  EXPECT_FALSE(v3.IsFullPodShape({8, 16}));
}

TEST(PodTest, AllocateAndRelease) {
  Pod pod = MakePod(Generation::kV2, 4, 4);
  const Placement p{{0, 2}, {2, 2}};
  ASSERT_TRUE(pod.Allocate(AllocationId(1), p).ok());
  EXPECT_EQ(pod.AllocatedHosts(), 4);
  EXPECT_EQ(pod.AvailableHosts(), 12);
  EXPECT_EQ(pod.host(HostId(2)).allocation, AllocationId(1));
  EXPECT_EQ(pod.PlacementOf(AllocationId(1)), p);
  EXPECT_DOUBLE_EQ(pod.Utilization(), 0.25);
  // Same id twice, and overlapping rectangles, are refused.
  EXPECT_EQ(pod.Allocate(AllocationId(1), {{2, 0}, {1, 1}}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(pod.Allocate(AllocationId(2), {{1, 1}, {2, 2}}).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(pod.Allocate(AllocationId(2), {{3, 3}, {2, 2}}).ok());  // leaves the grid
  EXPECT_FALSE(pod.Allocate(AllocationId(2), {{0, 0}, {0, 1}}).ok());  // empty
  ASSERT_TRUE(pod.Release(AllocationId(1)).ok());
  EXPECT_EQ(pod.AvailableHosts(), 16);
  EXPECT_FALSE(pod.PlacementOf(AllocationId(1)).has_value());
  EXPECT_EQ(pod.Release(AllocationId(1)).code(), StatusCode::kNotFound);
}

TEST(PodTest, UnhealthyHostStaysInAllocationUntilReleasedAndHealed) {
  Pod pod = MakePod(Generation::kV2, 2, 2);
  ASSERT_TRUE(pod.Allocate(AllocationId(7), {{0, 0}, {2, 2}}).ok());
  ASSERT_TRUE(pod.MarkUnhealthy(HostId(3)).ok());
  ASSERT_TRUE(pod.MarkUnhealthy(HostId(3)).ok());  // idempotent
  EXPECT_EQ(pod.host(HostId(3)).allocation, AllocationId(7));
  EXPECT_FALSE(pod.host(HostId(3)).healthy);
  ASSERT_TRUE(pod.Release(AllocationId(7)).ok());
  EXPECT_EQ(pod.AvailableHosts(), 3);
  EXPECT_FALSE(pod.CanPlace({{0, 0}, {2, 2}}));
  EXPECT_EQ(pod.LargestPlaceableType()->ToString(), "v2-8");
  ASSERT_TRUE(pod.MarkHealthy(HostId(3)).ok());
  EXPECT_TRUE(pod.CanPlace({{0, 0}, {2, 2}}));
  EXPECT_EQ(pod.MarkUnhealthy(HostId(4)).code(), StatusCode::kNotFound);
  EXPECT_EQ(pod.MarkHealthy(HostId(-1)).code(), StatusCode::kNotFound);
  EXPECT_EQ(pod.SetDraining(HostId(9), true).code(), StatusCode::kNotFound);
}

TEST(PodTest, DrainingHostIsNotAvailable) {
  Pod pod = MakePod(Generation::kV2, 2, 2);
  ASSERT_TRUE(pod.SetDraining(HostId(0), true).ok());
  EXPECT_EQ(pod.AvailableHosts(), 3);
  EXPECT_FALSE(pod.CanPlace({{0, 0}, {1, 1}}));
  EXPECT_TRUE(pod.LegalPlacements({2, 2}).empty());
  ASSERT_TRUE(pod.SetDraining(HostId(0), false).ok());
  EXPECT_EQ(pod.LegalPlacements({2, 2}).size(), 1u);
}

TEST(PodTest, LegalPlacementsOrderAndOrientations) {
  Pod pod = MakePod(Generation::kV3, 2, 4);
  // 2x4 fits only unrotated; 1x1 everywhere.
  EXPECT_EQ(pod.LegalPlacements({2, 4}), (std::vector<Placement>{{{0, 0}, {2, 4}}}));
  EXPECT_EQ(pod.LegalPlacements({1, 1}).size(), 8u);
  Pod square = MakePod(Generation::kV3, 4, 4);
  std::vector<Placement> ps = square.LegalPlacements({2, 4});
  // Origins row-major; at each origin 2x4 before 4x2.
  ASSERT_EQ(ps.size(), 6u);
  EXPECT_EQ(ps[0], (Placement{{0, 0}, {2, 4}}));
  EXPECT_EQ(ps[1], (Placement{{0, 0}, {4, 2}}));
  EXPECT_EQ(ps[2], (Placement{{0, 1}, {4, 2}}));
  EXPECT_EQ(ps[3], (Placement{{0, 2}, {4, 2}}));
  EXPECT_EQ(ps[4], (Placement{{1, 0}, {2, 4}}));
  EXPECT_EQ(ps[5], (Placement{{2, 0}, {2, 4}}));
  // A rotated request enumerates the same positions.
  EXPECT_EQ(square.LegalPlacements({4, 2}), ps);
  for (const Placement& p : ps) EXPECT_TRUE(square.CanPlace(p));
}

TEST(PodTest, LargestPlaceableTypeAndFragmentation) {
  Pod pod = Pod::Full("p", Generation::kV2);
  EXPECT_EQ(pod.LargestPlaceableType()->ToString(), "v2-512");
  EXPECT_DOUBLE_EQ(pod.Fragmentation(), 0.0);
  // One unhealthy host in the top-left quadrant: the 8x8 is gone, a 4x8 below it is left.
  ASSERT_TRUE(pod.MarkUnhealthy(pod.HostAt({3, 3})).ok());
  EXPECT_EQ(pod.LargestPlaceableType()->ToString(), "v2-256");
  ASSERT_TRUE(pod.MarkUnhealthy(pod.HostAt({4, 4})).ok());
  // Rows 0-3 contain (3,3), rows 4-7 contain (4,4); cols likewise: no 4x8 or 8x4 is left.
  EXPECT_EQ(pod.LargestPlaceableType()->ToString(), "v2-128");
  EXPECT_DOUBLE_EQ(pod.Fragmentation(), 1.0 - 16.0 / 62.0);
  // A full pod has nothing available: fragmentation is 0 and nothing is placeable.
  Pod tiny = MakePod(Generation::kV2, 1, 1);
  ASSERT_TRUE(tiny.Allocate(AllocationId(1), {{0, 0}, {1, 1}}).ok());
  EXPECT_FALSE(tiny.LargestPlaceableType().has_value());
  EXPECT_DOUBLE_EQ(tiny.Fragmentation(), 0.0);
  EXPECT_DOUBLE_EQ(tiny.Utilization(), 1.0);
}

TEST(PodTest, ParseTypeUsesThisPodsGrid) {
  Pod pod = MakePod(Generation::kV2, 4, 4);
  EXPECT_TRUE(pod.ParseType("v2-128").has_value());
  Result<AcceleratorType> t = pod.ParseType("v2-256");
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message().find("valid: v2-8, v2-32, v2-128"), std::string::npos);
}

// Copies share the allocation map until one of them allocates or releases (pod.h).
TEST(PodTest, CopiesAreIndependent) {
  Pod pod = MakePod(Generation::kV2, 2, 2);
  ASSERT_TRUE(pod.Allocate(AllocationId(1), {{0, 0}, {1, 1}}).ok());
  Pod what_if = pod;
  ASSERT_TRUE(what_if.Release(AllocationId(1)).ok());
  EXPECT_EQ(what_if.AvailableHosts(), 4);
  EXPECT_EQ(pod.AvailableHosts(), 3);
  EXPECT_TRUE(what_if.allocations().empty());
  EXPECT_EQ(pod.allocations().size(), 1u);
  EXPECT_EQ(pod.PlacementOf(AllocationId(1)), (Placement{{0, 0}, {1, 1}}));

  Pod other = pod;
  ASSERT_TRUE(pod.Allocate(AllocationId(2), {{1, 1}, {1, 1}}).ok());
  EXPECT_EQ(pod.allocations().size(), 2u);
  EXPECT_EQ(other.allocations().size(), 1u);
  EXPECT_FALSE(other.PlacementOf(AllocationId(2)).has_value());
  EXPECT_FALSE(other.Release(AllocationId(2)).ok());
  ASSERT_TRUE(other.Release(AllocationId(1)).ok());
  EXPECT_EQ(pod.PlacementOf(AllocationId(1)), (Placement{{0, 0}, {1, 1}}));

  Pod moved = std::move(other);
  EXPECT_TRUE(moved.allocations().empty());
  ASSERT_TRUE(moved.Allocate(AllocationId(3), {{0, 0}, {2, 2}}).ok());
  EXPECT_EQ(pod.allocations().size(), 2u);
}

// A copy shares the placement index the original built (free_index.h) until either changes;
// each must then answer for its own hosts, whichever of them changed and however it was made.
TEST(PodTest, ACopyAndItsOriginalAnswerForTheirOwnHostsAfterEitherChanges) {
  Pod pod = Pod::Full("p", Generation::kV2);
  ASSERT_EQ(pod.LargestPlaceableType()->ToString(), "v2-512");  // builds the index
  Pod copy = pod;
  EXPECT_EQ(&copy.free_index(), &pod.free_index());
  ASSERT_TRUE(copy.Allocate(AllocationId(1), {{0, 0}, {1, 1}}).ok());
  EXPECT_EQ(copy.LargestPlaceableType()->ToString(), "v2-256");
  EXPECT_EQ(pod.LargestPlaceableType()->ToString(), "v2-512");
  ASSERT_TRUE(pod.SetDraining(pod.HostAt({7, 7}), true).ok());
  EXPECT_EQ(pod.LargestPlaceableType()->ToString(), "v2-256");
  const auto has = [](const Pod& p, Placement where) {
    const std::vector<Placement> legal = p.LegalPlacements(where.shape);
    return std::find(legal.begin(), legal.end(), where) != legal.end();
  };
  const Placement top{{0, 0}, {4, 8}}, bottom{{4, 0}, {4, 8}};
  EXPECT_TRUE(has(pod, top));
  EXPECT_FALSE(has(pod, bottom));
  EXPECT_FALSE(has(copy, top));
  EXPECT_TRUE(has(copy, bottom));

  Pod assigned = Pod::Full("q", Generation::kV2);
  ASSERT_EQ(assigned.LargestPlaceableType()->ToString(), "v2-512");
  assigned = copy;  // takes the copy's hosts, and not the index it had built for its own
  EXPECT_EQ(assigned.LargestPlaceableType()->ToString(), "v2-256");
  ASSERT_TRUE(assigned.Release(AllocationId(1)).ok());
  EXPECT_EQ(assigned.LargestPlaceableType()->ToString(), "v2-512");
  EXPECT_EQ(copy.LargestPlaceableType()->ToString(), "v2-256");

  Pod moved = std::move(copy);
  EXPECT_EQ(moved.LargestPlaceableType()->ToString(), "v2-256");
  ASSERT_TRUE(moved.MarkUnhealthy(moved.HostAt({4, 4})).ok());
  EXPECT_EQ(moved.LargestPlaceableType()->ToString(), "v2-128");
  ASSERT_TRUE(moved.MarkHealthy(moved.HostAt({4, 4})).ok());
  EXPECT_EQ(moved.LargestPlaceableType()->ToString(), "v2-256");
}

// The victim search asks what a pod would offer once some allocations were released, without
// copying it (what_if.h). On random pods with unhealthy and draining hosts, released sets that
// include ids of no allocation of the pod: the answer is a copy's after releasing them.
TEST(WhatIfTest, LegalPlacementsIfReleasedAreThoseOfACopyThatReleased) {
  std::mt19937_64 rng(11);
  const std::vector<SliceShape> shapes = {{1, 1}, {1, 2}, {2, 2}, {2, 4}, {4, 4}, {4, 8}};
  for (int round = 0; round < 200; ++round) {
    const bool v3 = round % 2 == 1;
    Pod pod = *Pod::Create("p", v3 ? Generation::kV3 : Generation::kV2, v3 ? 16 : 8, v3 ? 16 : 8);
    std::vector<AllocationId> ids;
    for (int64_t id = 1; id < 60; ++id) {
      auto legal = pod.LegalPlacements(shapes[rng() % 4]);
      if (legal.empty()) break;
      ASSERT_TRUE(pod.Allocate(AllocationId(id), legal[rng() % legal.size()]).ok());
      ids.push_back(AllocationId(id));
    }
    for (int k = 0; k < 6; ++k) {
      const HostId h(static_cast<int>(rng() % static_cast<uint64_t>(pod.num_hosts())));
      ASSERT_TRUE((rng() % 2 == 0 ? pod.MarkUnhealthy(h) : pod.SetDraining(h, true)).ok());
    }
    std::set<AllocationId> released = {AllocationId(1000)};  // of no allocation here
    for (AllocationId id : ids) {
      if (rng() % 3 == 0) released.insert(id);
    }
    Pod copy = pod;
    for (AllocationId id : released) {
      if (copy.PlacementOf(id)) {
        ASSERT_TRUE(copy.Release(id).ok());
      }
    }
    for (SliceShape shape : shapes) {
      const auto want = copy.LegalPlacements(shape);
      const auto got = LegalPlacementsIfReleased(
          pod, shape, std::vector<AllocationId>(released.begin(), released.end()));
      ASSERT_EQ(got.size(), want.size()) << "round " << round << " shape " << shape.rows << "x"
                                         << shape.cols;
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace podsched::pod
