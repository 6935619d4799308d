#include "pod/placement.h"

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

class BestFit final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "best-fit"; }
  std::optional<Placement> Choose(const Pod& pod, const AcceleratorType& type) const override {
    std::optional<Placement> best;
    BestFitScore best_score;
    ForEachScored(pod, type, [&](const Placement& p, const BestFitScore& score) {
      // Strictly better only: among equal scores the first in row-major order wins.
      if (!best || best_score.WorseThan(score)) {
        best = p;
        best_score = score;
      }
    });
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
