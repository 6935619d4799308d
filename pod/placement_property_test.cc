// Property tests: long seeded random sequences of allocate / release / fail / heal / drain on
// full v2 and v3 pods under each policy, with the pod's invariants checked after every step
// against an independent model of what the test did, and best-fit's scores (computed from the
// pod's FreeIndex) checked against a recount from the hosts themselves, and its choice (made with
// early exits, then remembered by the index) against the first best of all the scores.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "pod/placement.h"

namespace podsched::pod {
namespace {

constexpr int kOperations = 10'000;

// Legal positions of `shape` in both orientations, from the hosts alone (no tables): the oracle
// for the pod's index. Row-major by origin, canonical orientation first, as LegalPlacements.
std::vector<Placement> LegalFromHosts(const Pod& pod, SliceShape shape) {
  const SliceShape canonical = shape.rows <= shape.cols ? shape : shape.Rotated();
  std::vector<Placement> out;
  for (int r = 0; r < pod.host_rows(); ++r) {
    for (int c = 0; c < pod.host_cols(); ++c) {
      for (SliceShape s : {canonical, canonical.Rotated()}) {
        if (r + s.rows <= pod.host_rows() && c + s.cols <= pod.host_cols()) {
          bool all = true;
          for (int i = r; i < r + s.rows; ++i) {
            for (int j = c; j < c + s.cols; ++j) all &= pod.host(pod.HostAt({i, j})).available();
          }
          if (all) out.push_back(Placement{{r, c}, s});
        }
        if (canonical.rows == canonical.cols) break;
      }
    }
  }
  return out;
}

bool Overlap(const Placement& a, const Placement& b) {
  return a.origin.row < b.origin.row + b.shape.rows && b.origin.row < a.origin.row + a.shape.rows &&
         a.origin.col < b.origin.col + b.shape.cols && b.origin.col < a.origin.col + a.shape.cols;
}

// Best-fit's documented score of every legal position of `type`, recounted from the hosts.
std::vector<ScoredPlacement> ReferenceScores(const Pod& pod, const AcceleratorType& type) {
  std::vector<std::pair<int, std::vector<Placement>>> positions;  // hosts of U, its positions
  for (const AcceleratorType& u : ValidTypes(pod.generation(), pod.host_rows(), pod.host_cols())) {
    std::vector<Placement> legal = LegalFromHosts(pod, u.shape());
    if (!legal.empty()) positions.emplace_back(u.hosts(), std::move(legal));
  }
  std::vector<ScoredPlacement> out;
  for (const Placement& p : LegalFromHosts(pod, type.shape())) {
    ScoredPlacement sp{p, {}};
    sp.score.aligned = p.origin.row % p.shape.rows == 0 && p.origin.col % p.shape.cols == 0;
    for (const auto& [hosts, legal] : positions) {
      int destroyed = 0;
      for (const Placement& q : legal) destroyed += Overlap(p, q) ? 1 : 0;
      if (destroyed < static_cast<int>(legal.size())) sp.score.largest_after_hosts = hosts;
      sp.score.lost_capacity +=
          static_cast<double>(hosts) * destroyed / static_cast<double>(legal.size());
    }
    out.push_back(sp);
  }
  return out;
}

class PlacementPropertyTest
    : public ::testing::TestWithParam<std::tuple<Generation, std::string_view>> {
 protected:
  // Checks the pod against the model: every host in at most one allocation, each allocation the
  // rectangle the test asked for, and the counts add up. `check_queries` adds the (costlier)
  // largest-placeable-type and fragmentation queries.
  void CheckInvariants(const Pod& pod, bool check_queries) {
    std::vector<int64_t> owner(static_cast<size_t>(pod.num_hosts()), 0);  // 0: none
    int allocated_hosts = 0;
    for (const auto& [id, hosts] : model_) {
      const Placement placement = pod.PlacementOf(id).value();
      ASSERT_EQ(pod.HostsIn(placement), hosts) << "allocation " << id;
      for (HostId h : hosts) {
        int64_t& o = owner[static_cast<size_t>(h.value())];
        ASSERT_EQ(o, 0) << "host " << h << " is in allocations " << o << " and " << id;
        o = id.value();
        ASSERT_EQ(pod.host(h).allocation, id);
      }
      allocated_hosts += static_cast<int>(hosts.size());
    }
    ASSERT_EQ(pod.allocations().size(), model_.size());
    int available = 0, unhealthy_free = 0, draining_free = 0;
    for (int i = 0; i < pod.num_hosts(); ++i) {
      const HostStatus& s = pod.host(HostId(i));
      if (owner[static_cast<size_t>(i)] != 0) continue;
      ASSERT_FALSE(s.allocation.has_value()) << "host " << i << " leaked";
      if (!s.healthy) {
        ++unhealthy_free;
      } else if (s.draining) {
        ++draining_free;
      } else {
        ++available;
      }
    }
    ASSERT_EQ(pod.AvailableHosts(), available);
    ASSERT_EQ(pod.AllocatedHosts(), allocated_hosts);
    ASSERT_EQ(available + allocated_hosts + unhealthy_free + draining_free, pod.num_hosts());
    ASSERT_DOUBLE_EQ(pod.Utilization(), static_cast<double>(allocated_hosts) / pod.num_hosts());
    if (check_queries) {
      const std::optional<AcceleratorType> largest = pod.LargestPlaceableType();
      ASSERT_EQ(largest.has_value(), available > 0);
      std::optional<AcceleratorType> recounted;
      for (const AcceleratorType& t :
           ValidTypes(pod.generation(), pod.host_rows(), pod.host_cols())) {
        if (!LegalFromHosts(pod, t.shape()).empty()) recounted = t;
      }
      ASSERT_EQ(largest, recounted);
      if (largest) {
        ASSERT_LE(largest->hosts(), available);
      }
      ASSERT_DOUBLE_EQ(pod.Fragmentation(),
                       largest ? 1.0 - static_cast<double>(largest->hosts()) / available : 0.0);
    }
  }

  void TryAllocate(Pod& pod, const PlacementPolicy& policy, const AcceleratorType& type,
                   bool check_scores) {
    const std::optional<Placement> p = policy.Choose(pod, type);
    const std::vector<Placement> legal = pod.LegalPlacements(type.shape());
    ASSERT_EQ(legal, LegalFromHosts(pod, type.shape()));
    if (check_scores) {
      const std::vector<ScoredPlacement> scored = ScoreBestFitCandidates(pod, type);
      const std::vector<ScoredPlacement> expected = ReferenceScores(pod, type);
      ASSERT_EQ(scored.size(), expected.size()) << type.ToString();
      for (size_t i = 0; i < scored.size(); ++i) {
        ASSERT_EQ(scored[i].placement, expected[i].placement) << i;
        ASSERT_EQ(scored[i].score.largest_after_hosts, expected[i].score.largest_after_hosts);
        ASSERT_EQ(scored[i].score.aligned, expected[i].score.aligned);
        ASSERT_NEAR(scored[i].score.lost_capacity, expected[i].score.lost_capacity, 1e-9);
      }
      if (policy.name() == "best-fit") {
        // The policy's choice (candidates dropped early, then remembered by the pod's index) is
        // the first best of the full scan, and asking again gives it again.
        std::optional<Placement> first_best;
        const ScoredPlacement* best = nullptr;
        for (const ScoredPlacement& c : scored) {
          if (best == nullptr || best->score.WorseThan(c.score)) best = &c;
        }
        if (best != nullptr) first_best = best->placement;
        ASSERT_EQ(p, first_best) << type.ToString();
        ASSERT_EQ(policy.Choose(pod, type), first_best) << type.ToString() << ", asked again";
      }
    }
    if (!p) {
      ASSERT_TRUE(legal.empty()) << policy.name() << " missed a legal " << type.ToString();
      return;
    }
    ASSERT_TRUE(p->shape == type.shape() || p->shape == type.shape().Rotated());
    ASSERT_NE(std::find(legal.begin(), legal.end(), *p), legal.end());
    const std::vector<HostId> hosts = pod.HostsIn(*p);
    for (HostId h : hosts) ASSERT_TRUE(pod.host(h).available()) << "host " << h;
    const AllocationId id(next_id_++);
    ASSERT_TRUE(pod.Allocate(id, *p).ok());
    model_[id] = hosts;
  }

  void Release(Pod& pod, AllocationId id) {
    const std::vector<HostId> hosts = model_.at(id);
    ASSERT_TRUE(pod.Release(id).ok());
    model_.erase(id);
    for (HostId h : hosts) {
      ASSERT_FALSE(pod.host(h).allocation.has_value());
      ASSERT_EQ(pod.host(h).available(), pod.host(h).healthy && !pod.host(h).draining);
    }
  }

  std::map<AllocationId, std::vector<HostId>> model_;
  int64_t next_id_ = 1;
};

TEST_P(PlacementPropertyTest, RandomOperationsKeepInvariants) {
  const auto [generation, policy_name] = GetParam();
  Pod pod = Pod::Full("prop", generation);
  const std::unique_ptr<PlacementPolicy> policy = MakePlacementPolicy(policy_name).value();
  const std::vector<AcceleratorType> types =
      ValidTypes(generation, pod.host_rows(), pod.host_cols());
  std::mt19937_64 rng(0x90d5eed + static_cast<int>(generation));
  // Small slices are requested most, as in practice; big ones often enough to hit "no room".
  std::vector<double> weights;
  for (size_t i = 0; i < types.size(); ++i) weights.push_back(1.0 / static_cast<double>(1u << i));
  std::discrete_distribution<size_t> pick_type(weights.begin(), weights.end());
  std::uniform_int_distribution<int> pick_host(0, pod.num_hosts() - 1);
  std::uniform_int_distribution<int> pick_op(0, 99);
  int allocations = 0, releases = 0;
  for (int step = 0; step < kOperations; ++step) {
    const int op = pick_op(rng);
    if (op < 50) {
      TryAllocate(pod, *policy, types[pick_type(rng)], step % 16 == 0);
      ++allocations;
    } else if (op < 85) {
      if (!model_.empty()) {
        auto it = model_.begin();
        std::advance(it, std::uniform_int_distribution<size_t>(0, model_.size() - 1)(rng));
        Release(pod, it->first);
        ++releases;
      }
    } else if (op < 87) {
      ASSERT_TRUE(pod.MarkUnhealthy(HostId(pick_host(rng))).ok());
    } else if (op < 97) {
      ASSERT_TRUE(pod.MarkHealthy(HostId(pick_host(rng))).ok());
    } else {
      ASSERT_TRUE(pod.SetDraining(HostId(pick_host(rng)), op == 97).ok());
    }
    CheckInvariants(pod, step % 4 == 0);
    if (HasFatalFailure()) FAIL() << "at step " << step;
  }
  EXPECT_GT(allocations, kOperations / 3);
  EXPECT_GT(releases, kOperations / 5);
}

INSTANTIATE_TEST_SUITE_P(PodsAndPolicies, PlacementPropertyTest,
                         ::testing::Combine(::testing::Values(Generation::kV2, Generation::kV3),
                                            ::testing::Values(std::string_view("first-fit"),
                                                              std::string_view("best-fit"))),
                         [](const auto& info) {
                           std::string name =
                               std::get<0>(info.param) == Generation::kV2 ? "v2_" : "v3_";
                           name += std::get<1>(info.param) == "first-fit" ? "FirstFit" : "BestFit";
                           return name;
                         });

}  // namespace
}  // namespace podsched::pod
