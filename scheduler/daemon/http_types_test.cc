#include "scheduler/daemon/http_types.h"

#include <gtest/gtest.h>

namespace podsched::daemon {
namespace {

TEST(ParseTarget, SplitsPathAndDecodesQuery) {
  ParsedTarget t = ParseTarget("/api/v1/jobs?state=QUEUED&user=al%20ice&x=a+b&flag");
  EXPECT_EQ(t.path, "/api/v1/jobs");
  EXPECT_EQ(t.query.at("state"), "QUEUED");
  EXPECT_EQ(t.query.at("user"), "al ice");
  EXPECT_EQ(t.query.at("x"), "a b");
  EXPECT_EQ(t.query.at("flag"), "");
}

TEST(ParseTarget, KeepsBrokenEscapes) {
  ParsedTarget t = ParseTarget("/a%zz?q=%4");
  EXPECT_EQ(t.path, "/a%zz");
  EXPECT_EQ(t.query.at("q"), "%4");
}

TEST(SplitPath, IgnoresEmptySegments) {
  EXPECT_EQ(SplitPath("//api/v1//jobs/7/"), (std::vector<std::string>{"api", "v1", "jobs", "7"}));
  EXPECT_TRUE(SplitPath("/").empty());
}

}  // namespace
}  // namespace podsched::daemon
