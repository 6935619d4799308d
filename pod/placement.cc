#include "pod/placement.h"

#include <algorithm>
#include <array>
#include <string>

#include "pod/legal.h"

namespace podsched::pod {
namespace {

class FirstFit final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "first-fit"; }
  std::optional<Placement> Choose(const Pod& pod, const AcceleratorType& type) const override {
    std::optional<Placement> chosen;
    ForEachLegalPlacement(AvailabilityTable(pod), type.shape(), [&chosen](const Placement& p) {
      chosen = p;
      return false;
    });
    return chosen;
  }
  std::optional<FleetPlacement> ChooseAmong(const std::vector<Pod>& pods,
                                            const std::vector<int>& candidates,
                                            const AcceleratorType& type) const override {
    for (int i : candidates) {
      if (auto p = Choose(pods[static_cast<size_t>(i)], type)) return FleetPlacement{i, *p};
    }
    return std::nullopt;
  }
};

// The legal positions of one oriented shape before the placement, as a prefix sum over their
// origins, so that "how many of them overlap a candidate rectangle" costs four lookups instead of
// a rescan of the grid per candidate.
struct OrientedPositions {
  SliceShape shape;
  PrefixSum2D origins;
  int Overlapping(const Placement& p) const {
    return origins.Sum(p.origin.row - shape.rows + 1, p.origin.col - shape.cols + 1,
                       p.origin.row + p.shape.rows, p.origin.col + p.shape.cols);
  }
};

struct TypePositions {
  int hosts = 0;
  int total = 0;  // legal positions before the placement, both orientations
  std::array<OrientedPositions, 2> oriented;
  int num_oriented = 0;
};

// Every valid type that has at least one legal position now, smallest first.
std::vector<TypePositions> CountPositions(const Pod& pod, const PrefixSum2D& avail) {
  std::vector<TypePositions> out;
  for (const AcceleratorType& t : ValidTypes(pod.generation(), pod.host_rows(), pod.host_cols())) {
    if (t.hosts() > avail.Total()) break;
    TypePositions tp;
    tp.hosts = t.hosts();
    const SliceShape s = t.shape();
    const int orientations = s.rows == s.cols ? 1 : 2;
    for (int i = 0; i < orientations; ++i) {
      const SliceShape o = i == 0 ? s : s.Rotated();
      PrefixSum2D origins(pod.host_rows(), pod.host_cols(), [&](int r, int c) {
        return AllAvailable(avail, Placement{{r, c}, o}) ? 1 : 0;
      });
      tp.total += origins.Total();
      tp.oriented[static_cast<size_t>(i)] = OrientedPositions{o, std::move(origins)};
    }
    tp.num_oriented = orientations;
    if (tp.total > 0) out.push_back(std::move(tp));
  }
  return out;
}

BestFitScore Score(const std::vector<TypePositions>& types, const Placement& p) {
  BestFitScore score;
  score.aligned = p.origin.row % p.shape.rows == 0 && p.origin.col % p.shape.cols == 0;
  for (const TypePositions& tp : types) {
    int destroyed = 0;
    for (int i = 0; i < tp.num_oriented; ++i) {
      destroyed += tp.oriented[static_cast<size_t>(i)].Overlapping(p);
    }
    if (destroyed < tp.total) score.largest_after_hosts = tp.hosts;
    score.lost_capacity += static_cast<double>(tp.hosts) * destroyed / tp.total;
  }
  return score;
}

// Visits every legal position of `type` with its score, in LegalPlacements order.
template <typename Visit>
void ForEachScored(const Pod& pod, const AcceleratorType& type, Visit&& visit) {
  const PrefixSum2D avail = AvailabilityTable(pod);
  if (type.hosts() > avail.Total()) return;
  const std::vector<TypePositions> types = CountPositions(pod, avail);
  ForEachLegalPlacement(avail, type.shape(), [&](const Placement& p) {
    visit(p, Score(types, p));
    return true;
  });
}

// The best position in one pod, with its score.
std::optional<ScoredPlacement> BestIn(const Pod& pod, const AcceleratorType& type) {
  std::optional<ScoredPlacement> best;
  ForEachScored(pod, type, [&](const Placement& p, const BestFitScore& score) {
    // Strictly better only: among equal scores the first in row-major order wins.
    if (!best || best->score.WorseThan(score)) best = ScoredPlacement{p, score};
  });
  return best;
}

class BestFit final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "best-fit"; }
  std::optional<Placement> Choose(const Pod& pod, const AcceleratorType& type) const override {
    std::optional<ScoredPlacement> best = BestIn(pod, type);
    if (!best) return std::nullopt;
    return best->placement;
  }
  std::optional<FleetPlacement> ChooseAmong(const std::vector<Pod>& pods,
                                            const std::vector<int>& candidates,
                                            const AcceleratorType& type) const override {
    if (candidates.size() == 1) {
      auto p = Choose(pods[static_cast<size_t>(candidates.front())], type);
      if (!p) return std::nullopt;
      return FleetPlacement{candidates.front(), *p};
    }
    // Hosts of the largest type each candidate pod can place now: what placing elsewhere
    // leaves of it.
    std::vector<int> largest_now;
    largest_now.reserve(candidates.size());
    for (int i : candidates) {
      auto t = pods[static_cast<size_t>(i)].LargestPlaceableType();
      largest_now.push_back(t ? t->hosts() : 0);
    }
    // The largest of the others: the two largest values cover every "all but one".
    int first = 0, second = 0;
    for (int n : largest_now) {
      if (n > first) {
        second = first;
        first = n;
      } else if (n > second) {
        second = n;
      }
    }
    std::optional<FleetPlacement> best;
    BestFitScore best_score;
    for (size_t k = 0; k < candidates.size(); ++k) {
      std::optional<ScoredPlacement> in_pod = BestIn(pods[static_cast<size_t>(candidates[k])], type);
      if (!in_pod) continue;
      BestFitScore score = in_pod->score;
      const int elsewhere = largest_now[k] == first ? second : first;
      score.largest_after_hosts = std::max(score.largest_after_hosts, elsewhere);
      if (!best || best_score.WorseThan(score)) {
        best = FleetPlacement{candidates[k], in_pod->placement};
        best_score = score;
      }
    }
    return best;
  }
};

}  // namespace

bool BestFitScore::WorseThan(const BestFitScore& other) const {
  if (largest_after_hosts != other.largest_after_hosts) {
    return largest_after_hosts < other.largest_after_hosts;
  }
  if (aligned != other.aligned) return !aligned;
  return lost_capacity > other.lost_capacity;
}

std::vector<ScoredPlacement> ScoreBestFitCandidates(const Pod& pod, const AcceleratorType& type) {
  std::vector<ScoredPlacement> out;
  ForEachScored(pod, type, [&out](const Placement& p, const BestFitScore& score) {
    out.push_back({p, score});
  });
  return out;
}

Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(std::string_view name) {
  if (name == "first-fit") return std::make_unique<FirstFit>();
  if (name == "best-fit") return std::make_unique<BestFit>();
  std::string valid;
  for (std::string_view n : PlacementPolicyNames()) {
    valid += valid.empty() ? "" : ", ";
    valid += n;
  }
  return InvalidArgument("'" + std::string(name) + "' is not a placement policy; valid: " + valid);
}

std::vector<std::string_view> PlacementPolicyNames() { return {"first-fit", "best-fit"}; }

}  // namespace podsched::pod
