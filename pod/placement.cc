#include "pod/placement.h"

#include <algorithm>
#include <array>
#include <string>

#include "pod/free_index.h"
#include "pod/legal.h"

namespace podsched::pod {
namespace {

class FirstFit final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "first-fit"; }
  std::optional<Placement> Choose(const Pod& pod, const AcceleratorType& type) const override {
    std::optional<Placement> chosen;
    ForEachLegalPlacement(pod.free_index().available(), type.shape(),
                          [&chosen](const Placement& p) {
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

// The score of `p`, or nullopt as soon as it cannot be strictly better than `best` (when given).
// The types are taken largest first: the first whose positions `p` does not all destroy gives
// largest_after, so a position that loses to `best` on it or on alignment is dropped after one or
// two lookups; lost_capacity only grows (every term is >= 0), so a position is dropped once it
// reaches best's. The score of a position that is not dropped is the same, bit for bit, with or
// without `best`.
std::optional<BestFitScore> ScoreUnlessWorse(const std::vector<const TypeOrigins*>& types,
                                             const Placement& p, const BestFitScore* best) {
  BestFitScore score;
  score.aligned = p.origin.row % p.shape.rows == 0 && p.origin.col % p.shape.cols == 0;
  bool largest_known = false;
  for (auto it = types.rbegin(); it != types.rend(); ++it) {
    const TypeOrigins& to = **it;
    const int hosts = to.type.hosts();
    if (best != nullptr && !largest_known && best->largest_after_hosts > hosts) {
      return std::nullopt;  // largest_after can be at most this type's hosts
    }
    int destroyed = 0;
    for (int i = 0; i < to.num_oriented; ++i) {
      destroyed += to.oriented[static_cast<size_t>(i)].Overlapping(p);
    }
    if (!largest_known && destroyed < to.total) {
      largest_known = true;
      score.largest_after_hosts = hosts;
      if (best != nullptr && (hosts < best->largest_after_hosts ||
                              (hosts == best->largest_after_hosts && !score.aligned && best->aligned))) {
        return std::nullopt;
      }
    }
    score.lost_capacity += to.hosts_per_position * destroyed;
    if (best != nullptr && largest_known && score.largest_after_hosts == best->largest_after_hosts &&
        score.aligned == best->aligned && score.lost_capacity >= best->lost_capacity) {
      return std::nullopt;
    }
  }
  // No type keeps a position (largest_after 0): only a best with largest_after 0 compares on.
  if (best != nullptr && !best->WorseThan(score)) return std::nullopt;
  return score;
}

// True when `type` has no legal position, known from the index without a scan (most of the
// decisions of a pass on a busy pod): more hosts than are available, or a type of the grid whose
// origins count none. Sets `*own` to the index's entry for the type (nullptr: not a type of this
// grid, which only a scan answers).
bool KnownUnplaceable(const FreeIndex& index, const AcceleratorType& type,
                      const TypeOrigins** own) {
  if (type.hosts() > index.available().Total()) return true;
  *own = index.Find(type.shape());
  return *own != nullptr && (*own)->total == 0;
}

// Visits every legal position of `type` with its score, in LegalPlacements order.
template <typename Visit>
void ForEachScored(const Pod& pod, const AcceleratorType& type, Visit&& visit) {
  const FreeIndex& index = pod.free_index();
  const TypeOrigins* own = nullptr;
  if (KnownUnplaceable(index, type, &own)) return;
  const std::vector<const TypeOrigins*>& types = index.placeable();
  ForEachLegalPlacement(index.available(), type.shape(), [&](const Placement& p) {
    visit(p, *ScoreUnlessWorse(types, p, nullptr));
    return true;
  });
}

// The best position in one pod, with its score.
std::optional<ScoredPlacement> BestIn(const Pod& pod, const AcceleratorType& type) {
  const FreeIndex& index = pod.free_index();
  const TypeOrigins* own = nullptr;
  if (KnownUnplaceable(index, type, &own)) return std::nullopt;
  if (own != nullptr) {
    if (std::optional<BestFitMemo> memo = index.RecalledBestFit(*own)) return memo->best;
  }
  const std::vector<const TypeOrigins*>& types = index.placeable();
  std::optional<ScoredPlacement> best;
  ForEachLegalPlacement(index.available(), type.shape(), [&](const Placement& p) {
    // Strictly better only: among equal scores the first in row-major order wins.
    if (auto score = ScoreUnlessWorse(types, p, best ? &best->score : nullptr)) {
      best = ScoredPlacement{p, *score};
    }
    return true;
  });
  if (own != nullptr) index.RememberBestFit(*own, BestFitMemo{best});
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
