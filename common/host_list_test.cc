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

TEST(HostListFormatTest, SequenceParsesBack) {
  const std::vector<HostId> hosts{HostId(12), HostId(4), HostId(5)};
  auto parsed = ParseHostSequence(FormatHostSequence(hosts));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, (std::vector<int32_t>{12, 4, 5}));
  EXPECT_TRUE(ParseHostSequence("")->empty());
  for (const char* bad : {"1,,2", "1,x", "-1", "1,2,", " 1"}) {
    EXPECT_FALSE(ParseHostSequence(bad).has_value()) << bad;
  }
}

TEST(HostListFormatTest, RangesAreSortedAndMerged) {
  EXPECT_EQ(FormatHostRanges({12, 0, 1, 2, 3, 3}), "0-3,12");
  EXPECT_EQ(FormatHostRanges({0, 1, 2, 3, 7, 12}), "0-3,7,12");
  EXPECT_EQ(FormatHostRanges({5}), "5");
  EXPECT_EQ(FormatHostRanges({4, 6}), "4,6");
  EXPECT_EQ(FormatHostRanges({}), "");
}

TEST(HostListRangesTest, RangesAndSinglesParse) {
  auto h = ParseHostRanges("0-3,12,2,7-7");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(*h, (std::vector<int32_t>{0, 1, 2, 3, 7, 12}));
  EXPECT_EQ(FormatHostRanges(*h), "0-3,7,12");
}

TEST(HostListRangesTest, RejectsBadInputWithTheBadPart) {
  for (const char* bad : {"", ",", "7-3", "a", "1-", "-1", "1,,2", "5000", "0-99999"}) {
    auto h = ParseHostRanges(bad);
    ASSERT_FALSE(h.has_value()) << bad;
    EXPECT_NE(h.error().message().find("host list"), std::string::npos);
  }
}

}  // namespace
}  // namespace podsched
