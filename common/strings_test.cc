#include "common/strings.h"

#include <gtest/gtest.h>

namespace podsched {
namespace {

using Parts = std::vector<std::string_view>;

TEST(SplitOnTest, KeepsEmptyPartsSoParsersCanRejectThem) {
  EXPECT_EQ(SplitOn("0-7,12", ','), (Parts{"0-7", "12"}));
  EXPECT_EQ(SplitOn("a,,b,", ','), (Parts{"a", "", "b", ""}));
  EXPECT_EQ(SplitOn("", ','), (Parts{""}));
  EXPECT_EQ(SplitOn("solo", ','), (Parts{"solo"}));
}

TEST(ParseNonNegativeTest, DigitsOnlyAndNoMoreThanAllowed) {
  EXPECT_EQ(ParseNonNegative("0", 9), 0);
  EXPECT_EQ(ParseNonNegative("007", 9), 7);
  EXPECT_EQ(ParseNonNegative("123456789", 9), 123456789);
  EXPECT_EQ(ParseNonNegative("1234567890", 9), std::nullopt) << "one digit too many";
  for (std::string_view bad : {"", "-1", "+1", " 1", "1 ", "1.5", "0x10", "1e3", "abc"}) {
    EXPECT_EQ(ParseNonNegative(bad, 9), std::nullopt) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace podsched
