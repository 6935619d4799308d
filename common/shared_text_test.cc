#include "common/shared_text.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace podsched {
namespace {

TEST(SharedTextTest, ACopySharesTheTextAndAnEqualTextComparesEqualWithout) {
  const SharedText told("no free 4x4 block of hosts");
  const SharedText copy = told;
  EXPECT_TRUE(copy.Shares(told));
  const SharedText again("no free 4x4 block of hosts");
  EXPECT_FALSE(again.Shares(told)) << "built apart: two buffers";
  EXPECT_EQ(again, told) << "equal by their characters";
  EXPECT_NE(SharedText("no free host"), told);
  EXPECT_EQ(told, std::string("no free 4x4 block of hosts"));
  EXPECT_EQ(told, "no free 4x4 block of hosts");
  EXPECT_NE(told, std::string_view("no free 4x4 block"));
}

TEST(SharedTextTest, AssigningANewTextLeavesTheCopiesAsTheyWere) {
  SharedText reason("submitted");
  const SharedText kept = reason;
  reason = "throttled";
  EXPECT_EQ(reason, "throttled");
  EXPECT_EQ(kept, "submitted");
  reason = std::string("preempted: ") + kept;
  EXPECT_EQ(reason.str(), "preempted: submitted");
  EXPECT_TRUE(reason.starts_with("preempted"));
}

TEST(SharedTextTest, TheEmptyTextIsTheEmptyStringAndSharesNothing) {
  const SharedText none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none, "");
  EXPECT_EQ(none, SharedText(""));
  EXPECT_EQ(none.size(), 0u);
  EXPECT_STREQ(none.c_str(), "");
  EXPECT_FALSE(none.Shares(SharedText()));
  std::ostringstream out;
  out << SharedText("a") << none << SharedText("b");
  EXPECT_EQ(out.str(), "ab");
}

}  // namespace
}  // namespace podsched
