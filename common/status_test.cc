#include "common/status.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "common/ids.h"

namespace podsched {
namespace {

Result<int> ParsePositive(int v) {
  if (v <= 0) return InvalidArgument("value must be positive, got " + std::to_string(v));
  return v;
}

TEST(StatusTest, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s(StatusCode::kNotFound, "job 7 not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not_found: job 7 not found");
  EXPECT_EQ(s.WithContext("cancel").message(), "cancel: job 7 not found");
  EXPECT_TRUE(Status().WithContext("x").ok());
}

TEST(StatusTest, ResultHoldsValueOrError) {
  auto good = ParsePositive(3);
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(*good, 3);
  auto bad = ParsePositive(-1);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "value must be positive, got -1");
}

TEST(StrongIdTest, OrderedAndHashable) {
  JobId a(1), b(2);
  EXPECT_LT(a, b);
  EXPECT_EQ(a, JobId(1));
  std::unordered_set<JobId> set{a, b, JobId(1)};
  EXPECT_EQ(set.size(), 2u);
  static_assert(!std::is_convertible_v<JobId, HostId>);
  static_assert(!std::is_convertible_v<int64_t, JobId>);
}

}  // namespace
}  // namespace podsched
