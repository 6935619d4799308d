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

}  // namespace
}  // namespace podsched
