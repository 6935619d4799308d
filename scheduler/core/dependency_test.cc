#include "scheduler/core/dependency.h"

#include <gtest/gtest.h>

namespace podsched::core {
namespace {

TEST(ParseArraySpecTest, RangesListsStepsAndThrottle) {
  auto a = ParseArraySpec("0-99%10");
  ASSERT_TRUE(a.has_value()) << a.error().message();
  EXPECT_EQ(a->indices.size(), 100u);
  EXPECT_EQ(a->indices.front(), 0);
  EXPECT_EQ(a->indices.back(), 99);
  EXPECT_EQ(a->throttle, 10);
  EXPECT_EQ(a->text, "0-99%10");
  auto b = ParseArraySpec("1,3,5-9");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->indices, (std::vector<int>{1, 3, 5, 6, 7, 8, 9}));
  EXPECT_EQ(b->throttle, 0);
  auto c = ParseArraySpec("0-15:4,2,2");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->indices, (std::vector<int>{0, 2, 4, 8, 12}));  // sorted, duplicates dropped
  auto d = ParseArraySpec("1000000");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->indices, (std::vector<int>{1000000}));
}

TEST(ParseArraySpecTest, BadArraysNameTheProblem) {
  struct Case {
    const char* text;
    const char* message_part;
  } cases[] = {
      {"", "no indices"},
      {"%4", "no indices"},
      {"0-9%0", "throttle"},
      {"0-9%x", "throttle"},
      {"0-10000", "more than 10000 tasks"},
      {"0-1000000", "more than 10000 tasks"},
      {"5-1000001", "over 1000000"},
      {"9-3", "backwards"},
      {"a-b", "not an index"},
      {"-3", "not an index"},
      {"1,,2", "not an index"},
      {"0-9:0", "step"},
  };
  for (const Case& c : cases) {
    auto r = ParseArraySpec(c.text);
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.message_part), std::string::npos)
        << c.text << ": " << r.error().message();
    EXPECT_NE(r.error().message().find("0-99"), std::string::npos) << "the accepted forms";
  }
  EXPECT_TRUE(ParseArraySpec("0-9999").has_value());  // exactly the bound
}

TEST(ParseDependenciesTest, KindsTargetsAndCombinations) {
  auto d = ParseDependencies("afterok:12:13_2,afterany:14,afternotok:15");
  ASSERT_TRUE(d.has_value()) << d.error().message();
  ASSERT_EQ(d->size(), 4u);
  EXPECT_EQ((*d)[0], (Dependency{DependencyKind::kAfterOk, JobId(12), std::nullopt}));
  EXPECT_EQ((*d)[1], (Dependency{DependencyKind::kAfterOk, JobId(13), 2}));
  EXPECT_EQ((*d)[2].kind, DependencyKind::kAfterAny);
  EXPECT_EQ((*d)[3].kind, DependencyKind::kAfterNotOk);
  EXPECT_EQ(FormatDependencies(*d), "afterok:12,afterok:13_2,afterany:14,afternotok:15");
  auto again = ParseDependencies(FormatDependencies(*d));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *d);
  auto dup = ParseDependencies("afterok:1:1");
  ASSERT_TRUE(dup.has_value());
  EXPECT_EQ(dup->size(), 1u);
}

TEST(ParseDependenciesTest, BadDependenciesNameTheProblem) {
  for (const char* text :
       {"", "afterok", "afterok:", "after:12", "afterok:x", "afterok:0", "afterok:12_",
        "afterok:12_x", "afterok:1?afterany:2", "afterok:-1", "afterok:12,"}) {
    auto r = ParseDependencies(text);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_NE(r.error().message().find("afterok:ID"), std::string::npos) << r.error().message();
  }
  std::string many = "afterok";
  for (int i = 1; i <= kMaxDependencies + 1; ++i) many += ":" + std::to_string(i);
  EXPECT_FALSE(ParseDependencies(many).has_value());
}

DependencyTarget One(JobState state) {
  DependencyTarget t;
  t.name = "job 12";
  t.state = std::string(JobStateName(state));
  t.succeeded = state == JobState::kSucceeded;
  t.ended = IsTerminal(state);
  if (state == JobState::kFailed || state == JobState::kCancelled) {
    t.unsuccessful = "job 12 ended " + t.state;
  }
  return t;
}

TEST(EvaluateDependencyTest, SingleJobTable) {
  using K = DependencyKind;
  using S = JobState;
  using V = DependencyVerdict;
  struct Row {
    K kind;
    S state;
    V verdict;
  } rows[] = {
      {K::kAfterOk, S::kRunning, V::kWaiting},    {K::kAfterOk, S::kSucceeded, V::kMet},
      {K::kAfterOk, S::kFailed, V::kNever},       {K::kAfterOk, S::kCancelled, V::kNever},
      {K::kAfterAny, S::kQueued, V::kWaiting},    {K::kAfterAny, S::kFailed, V::kMet},
      {K::kAfterAny, S::kSucceeded, V::kMet},     {K::kAfterNotOk, S::kRunning, V::kWaiting},
      {K::kAfterNotOk, S::kFailed, V::kMet},      {K::kAfterNotOk, S::kCancelled, V::kMet},
      {K::kAfterNotOk, S::kSucceeded, V::kNever},
  };
  for (const Row& r : rows) {
    DependencyStatus s = EvaluateDependency(r.kind, One(r.state));
    EXPECT_EQ(s.verdict, r.verdict) << DependencyKindName(r.kind) << " " << JobStateName(r.state);
  }
  EXPECT_EQ(EvaluateDependency(K::kAfterOk, One(S::kFailed)).why_never,
            "job 12 ended FAILED (afterok)");
  EXPECT_EQ(EvaluateDependency(K::kAfterNotOk, One(S::kSucceeded)).why_never,
            "job 12 ended SUCCEEDED (afternotok)");
}

TEST(EvaluateDependencyTest, ArrayCountsEveryTask) {
  DependencyTarget t;
  t.name = "array 5";
  t.jobs = 3;
  t.ended = 2;
  t.succeeded = 2;
  EXPECT_EQ(EvaluateDependency(DependencyKind::kAfterOk, t).verdict, DependencyVerdict::kWaiting);
  EXPECT_EQ(EvaluateDependency(DependencyKind::kAfterNotOk, t).verdict,
            DependencyVerdict::kWaiting);
  t.ended = 3;
  t.succeeded = 3;
  EXPECT_EQ(EvaluateDependency(DependencyKind::kAfterOk, t).verdict, DependencyVerdict::kMet);
  EXPECT_EQ(EvaluateDependency(DependencyKind::kAfterNotOk, t).verdict, DependencyVerdict::kNever);
  t.succeeded = 2;
  t.unsuccessful = "job 5_1 ended FAILED";
  EXPECT_EQ(EvaluateDependency(DependencyKind::kAfterOk, t).why_never,
            "job 5_1 ended FAILED (afterok)");
  EXPECT_EQ(EvaluateDependency(DependencyKind::kAfterNotOk, t).verdict, DependencyVerdict::kMet);
  EXPECT_EQ(EvaluateDependency(DependencyKind::kAfterAny, t).verdict, DependencyVerdict::kMet);
}

}  // namespace
}  // namespace podsched::core
