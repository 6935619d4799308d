#include "pod/topology.h"

#include <gtest/gtest.h>

#include <set>

namespace podsched::pod {
namespace {

TEST(TopologyTest, HostsChipsAndCoresOfA2x2Slice) {
  Pod pod = Pod::Full("p", Generation::kV2);
  const Placement p{{2, 4}, {2, 2}};  // hosts (2,4),(2,5),(3,4),(3,5)
  ASSERT_TRUE(pod.Allocate(AllocationId(5), p).ok());
  const SliceTopology t = TopologyOf(pod, AllocationId(5)).value();
  EXPECT_EQ(t.chip_rows, 4);
  EXPECT_EQ(t.chip_cols, 4);
  EXPECT_FALSE(t.wraparound);
  EXPECT_EQ(t.hosts, (std::vector<HostId>{HostId(20), HostId(21), HostId(28), HostId(29)}));
  ASSERT_EQ(t.chips.size(), 16u);
  ASSERT_EQ(t.cores.size(), 32u);
  // Chip 0 is the top-left chip of host (2,4): global chip (x=8, y=4).
  EXPECT_EQ(t.chips[0].global, (ChipCoord{8, 4}));
  EXPECT_EQ(t.chips[0].local, (ChipCoord{0, 0}));
  // Host index 1 is (2,5): its chip 3 is the bottom-right one of that board.
  EXPECT_EQ(t.chips[7].host, HostId(21));
  EXPECT_EQ(t.chips[7].chip_on_host, 3);
  EXPECT_EQ(t.chips[7].local, (ChipCoord{3, 1}));
  EXPECT_EQ(t.chips[7].global, (ChipCoord{11, 5}));
  // Cores: 8 per host in rank order.
  for (const TensorCoreInfo& c : t.cores) {
    EXPECT_EQ(c.chip, c.rank / 2);
    EXPECT_EQ(c.core_on_chip, c.rank % 2);
    EXPECT_EQ(c.host, t.hosts[static_cast<size_t>(c.rank / 8)]);
  }
  // Every local coordinate maps back to its chip.
  for (size_t i = 0; i < t.chips.size(); ++i) EXPECT_EQ(t.ChipAt(t.chips[i].local), int(i));
  // Global coordinates are distinct and inside the pod's chip grid.
  std::set<std::pair<int, int>> seen;
  for (const ChipInfo& c : t.chips) {
    EXPECT_TRUE(seen.insert({c.global.x, c.global.y}).second);
    EXPECT_LT(c.global.x, 16);
    EXPECT_LT(c.global.y, 16);
  }
}

TEST(TopologyTest, MeshNeighboursWithoutWrapAround) {
  Pod pod = Pod::Full("p", Generation::kV3);
  const SliceTopology t = TopologyOf(pod, Placement{{0, 0}, {2, 4}});
  EXPECT_EQ(t.chip_rows, 4);
  EXPECT_EQ(t.chip_cols, 8);
  EXPECT_FALSE(t.wraparound);
  EXPECT_EQ(t.Neighbours(t.ChipAt({0, 0})).size(), 2u);       // corner
  EXPECT_EQ(t.Neighbours(t.ChipAt({3, 0})).size(), 3u);       // edge
  EXPECT_EQ(t.Neighbours(t.ChipAt({3, 2})).size(), 4u);       // inside
  const std::vector<int> n = t.Neighbours(t.ChipAt({7, 3}));  // bottom-right corner
  EXPECT_EQ(n, (std::vector<int>{t.ChipAt({6, 3}), t.ChipAt({7, 2})}));
}

TEST(TopologyTest, OnlyTheFullPodIsATorus) {
  for (Generation g : {Generation::kV2, Generation::kV3}) {
    Pod pod = Pod::Full("p", g);
    const SliceTopology full =
        TopologyOf(pod, Placement{{0, 0}, {pod.host_rows(), pod.host_cols()}});
    EXPECT_TRUE(full.wraparound);
    EXPECT_EQ(full.chips.size(), static_cast<size_t>(pod.num_hosts() * 4));
    for (size_t i = 0; i < full.chips.size(); ++i) {
      EXPECT_EQ(full.Neighbours(static_cast<int>(i)).size(), 4u);
    }
    // The top-left chip links to the right-most chip of its row and the bottom chip of its column.
    const std::vector<int> n = full.Neighbours(0);
    EXPECT_NE(std::find(n.begin(), n.end(), full.ChipAt({full.chip_cols - 1, 0})), n.end());
    EXPECT_NE(std::find(n.begin(), n.end(), full.ChipAt({0, full.chip_rows - 1})), n.end());
    const SliceTopology half =
        TopologyOf(pod, Placement{{0, 0}, {pod.host_rows() / 2, pod.host_cols()}});
    EXPECT_FALSE(half.wraparound);
  }
  // A small test grid covered entirely is not a full pod: no wrap-around links.
  Pod small = Pod::Create("s", Generation::kV2, 4, 4).value();
  EXPECT_FALSE(TopologyOf(small, Placement{{0, 0}, {4, 4}}).wraparound);
}

TEST(TopologyTest, UnknownAllocationIsNotFound) {
  Pod pod = Pod::Full("p", Generation::kV2);
  Result<SliceTopology> t = TopologyOf(pod, AllocationId(1));
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace podsched::pod
