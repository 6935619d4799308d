#include "pod/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <thread>

namespace podsched::pod {
namespace {

std::unique_ptr<PlacementPolicy> Policy(std::string_view name) {
  Result<std::unique_ptr<PlacementPolicy>> p = MakePlacementPolicy(name);
  EXPECT_TRUE(p.has_value());
  return std::move(*p);
}

TEST(PlacementPolicyTest, ByName) {
  EXPECT_EQ(Policy("first-fit")->name(), "first-fit");
  EXPECT_EQ(Policy("best-fit")->name(), "best-fit");
  Result<std::unique_ptr<PlacementPolicy>> bad = MakePlacementPolicy("worst-fit");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("valid: first-fit, best-fit"), std::string::npos);
  EXPECT_EQ(PlacementPolicyNames().size(), 2u);
}

TEST(PlacementPolicyTest, FirstFitTakesFirstLegalPosition) {
  Pod pod = Pod::Full("p", Generation::kV2);
  const AcceleratorType v2_32 = pod.ParseType("v2-32").value();
  ASSERT_TRUE(pod.Allocate(AllocationId(1), {{0, 0}, {1, 1}}).ok());
  auto ff = Policy("first-fit");
  EXPECT_EQ(ff->Choose(pod, v2_32), pod.LegalPlacements({2, 2}).front());
  EXPECT_EQ(ff->Choose(pod, v2_32), (Placement{{0, 1}, {2, 2}}));
}

TEST(PlacementPolicyTest, NoPositionMeansNullopt) {
  Pod pod = Pod::Full("p", Generation::kV2);
  ASSERT_TRUE(pod.MarkUnhealthy(pod.HostAt({4, 4})).ok());
  const AcceleratorType full = pod.ParseType("v2-512").value();
  for (std::string_view name : PlacementPolicyNames()) {
    EXPECT_FALSE(Policy(name)->Choose(pod, full).has_value()) << name;
  }
}

TEST(PlacementPolicyTest, BestFitPrefersCornersOnEmptyPod) {
  Pod pod = Pod::Full("p", Generation::kV3);
  auto bf = Policy("best-fit");
  for (const AcceleratorType& t : ValidTypes(Generation::kV3, 16, 16)) {
    std::optional<Placement> p = bf->Choose(pod, t);
    ASSERT_TRUE(p.has_value()) << t.ToString();
    EXPECT_EQ(p->origin, (HostCoord{0, 0})) << t.ToString();
  }
}

TEST(PlacementPolicyTest, BestFitKeepsLargestSliceWhole) {
  // 4x4 v2 pod with a 2x2 in the top-left: a v2-8 should go into the top-right 2x2 area, not
  // into the bottom half... any position keeps a 2x2, so best-fit should at least keep one and
  // never pick a position whose score is worse than another candidate's.
  Pod pod = Pod::Create("p", Generation::kV2, 4, 4).value();
  ASSERT_TRUE(pod.Allocate(AllocationId(1), {{0, 0}, {2, 2}}).ok());
  const AcceleratorType v2_8 = pod.ParseType("v2-8").value();
  std::optional<Placement> chosen = Policy("best-fit")->Choose(pod, v2_8);
  ASSERT_TRUE(chosen.has_value());
  const std::vector<ScoredPlacement> all = ScoreBestFitCandidates(pod, v2_8);
  ASSERT_EQ(all.size(), 12u);
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const ScoredPlacement& s) { return s.placement == *chosen; });
  ASSERT_NE(it, all.end());
  for (const ScoredPlacement& s : all) EXPECT_FALSE(it->score.WorseThan(s.score));
  EXPECT_EQ(it->score.largest_after_hosts, 4);
}

// The hand-designed sequence: on an empty v2 pod (8x8 hosts) a v2-8 (A), a v2-256 (B, 4x8
// hosts) and then a v2-128 (C, 4x4 hosts).
//
// first-fit puts A at (0,0); the first legal origin for B is (0,1), where only the rotated 8x4
// fits. That leaves column 0 (7 hosts) and columns 5-7 (8x3): 31 free hosts, no 4x4.
//
//   first-fit            best-fit
//   A B B B B . . .      A . . . B B B B
//   . B B B B . . .      . . . . B B B B
//   . B B B B . . .      . . . . B B B B
//   . B B B B . . .      . . . . B B B B
//   . B B B B . . .      C C C C B B B B
//   . B B B B . . .      C C C C B B B B
//   . B B B B . . .      C C C C B B B B
//   . B B B B . . .      C C C C B B B B
//
// best-fit scores every position of B by the legal positions of the other types it destroys:
// at (0,1) no 4x4 position survives (largest_after = v2-32); at (0,4), aligned to its size and
// against the right edge, the 4x4 positions in columns 0-3 below A survive (largest_after =
// v2-128), so C still fits.
TEST(PlacementPolicyTest, BestFitPlacesWhatFirstFitCannot) {
  auto run = [](std::string_view policy_name) {
    Pod pod = Pod::Full("p", Generation::kV2);
    auto policy = Policy(policy_name);
    std::vector<std::optional<Placement>> out;
    int64_t id = 1;
    for (std::string_view t : {"v2-8", "v2-256", "v2-128"}) {
      std::optional<Placement> p = policy->Choose(pod, pod.ParseType(t).value());
      if (p) {
        EXPECT_TRUE(pod.Allocate(AllocationId(id++), *p).ok());
      }
      out.push_back(p);
    }
    return out;
  };
  const auto first = run("first-fit");
  EXPECT_EQ(first[0], (Placement{{0, 0}, {1, 1}}));
  EXPECT_EQ(first[1], (Placement{{0, 1}, {8, 4}}));
  EXPECT_FALSE(first[2].has_value());
  const auto best = run("best-fit");
  EXPECT_EQ(best[0], (Placement{{0, 0}, {1, 1}}));
  EXPECT_EQ(best[1], (Placement{{0, 4}, {8, 4}}));
  EXPECT_EQ(best[2], (Placement{{4, 0}, {4, 4}}));
}

// Const queries may run at once (pod.h): the first ones after a change race to build the pod's
// index (free_index.h). Every thread must get the answers one thread alone gets.
TEST(PlacementPolicyTest, ConcurrentDecisionsAfterAChangeAgreeWithASingleThread) {
  const auto best_fit = MakePlacementPolicy("best-fit").value();
  Pod pod = Pod::Full("p", Generation::kV3);
  const std::vector<AcceleratorType> types =
      ValidTypes(pod.generation(), pod.host_rows(), pod.host_cols());
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(pod.MarkUnhealthy(HostId(static_cast<int>(rng() % 256))).ok());
    Pod alone = pod;  // keeps this state's index when the pod drops its own below
    std::vector<std::optional<Placement>> expected;
    for (const AcceleratorType& t : types) expected.push_back(best_fit->Choose(alone, t));
    const std::optional<AcceleratorType> largest = alone.LargestPlaceableType();
    ASSERT_TRUE(pod.SetDraining(HostId(0), pod.host(HostId(0)).draining).ok());  // a new index
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) {
      threads.emplace_back([&, k] {
        for (size_t i = 0; i < types.size(); ++i) {
          const size_t t = (i + static_cast<size_t>(k)) % types.size();
          mismatches[static_cast<size_t>(k)] += best_fit->Choose(pod, types[t]) != expected[t];
        }
        mismatches[static_cast<size_t>(k)] += pod.LargestPlaceableType() != largest;
      });
    }
    for (std::thread& t : threads) t.join();
    for (int m : mismatches) ASSERT_EQ(m, 0) << "round " << round;
  }
}

}  // namespace
}  // namespace podsched::pod
