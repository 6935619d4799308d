#include "common/host_list.h"

#include <gtest/gtest.h>

namespace podsched {
namespace {

TEST(HostListFormatTest, SequenceKeepsTheRankOrder) {
  const std::vector<HostId> hosts{HostId(12), HostId(4), HostId(5)};
  EXPECT_EQ(FormatHostSequence(hosts), "12,4,5");
  EXPECT_EQ(FormatHostSequence(std::vector<HostId>{HostId(7)}), "7");
  EXPECT_EQ(FormatHostSequence({}), "");
}

TEST(HostListFormatTest, RangesAreSortedAndMerged) {
  EXPECT_EQ(FormatHostRanges({12, 0, 1, 2, 3, 3}), "0-3,12");
  EXPECT_EQ(FormatHostRanges({0, 1, 2, 3, 7, 12}), "0-3,7,12");
  EXPECT_EQ(FormatHostRanges({5}), "5");
  EXPECT_EQ(FormatHostRanges({4, 6}), "4,6");
  EXPECT_EQ(FormatHostRanges({}), "");
}

}  // namespace
}  // namespace podsched
