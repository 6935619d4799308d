// Placement policies: where in a pod a slice goes.
//
// A policy only chooses among Pod::LegalPlacements; it never changes the pod. Policies are
// chosen by name, so a scheduler profile or the simulator can name them ("first-fit",
// "best-fit"). Stateless and thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pod/accelerator.h"
#include "pod/fleet.h"
#include "pod/pod.h"

namespace podsched::pod {

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // Where a slice of `type` should go in `pod`, or nullopt when there is no legal position.
  virtual std::optional<Placement> Choose(const Pod& pod, const AcceleratorType& type) const = 0;
  // One decision across the pods of a fleet (issue 28): where among `pods[i]`, i in
  // `candidates` (indexes in fleet order, each a pod that can hold the type), a slice of `type`
  // should go; nullopt when no candidate has a legal position. One candidate: exactly Choose.
  virtual std::optional<FleetPlacement> ChooseAmong(const std::vector<Pod>& pods,
                                                    const std::vector<int>& candidates,
                                                    const AcceleratorType& type) const = 0;
};

// The policies:
//
// first-fit: the first position of Pod::LegalPlacements (origins row-major, for each origin the
//   canonical orientation before the rotated one). Across pods: the first candidate pod, in
//   fleet order, that has one.
//
// best-fit: fragmentation-aware. For every legal position P of the requested shape it asks what P
//   costs the slices that could come next, using the legal positions of every valid type U of
//   the pod (both orientations) *before* the placement:
//     destroyed(U, P) = legal positions of U that overlap P (they become illegal);
//     largest_after   = hosts of the largest U with a legal position left after P;
//     aligned         = P's origin is a multiple of P's oriented shape (row % rows == 0 and
//                       col % cols == 0), the blocks of a 2D buddy system;
//     lost_capacity   = sum over U of hosts(U) * destroyed(U, P) / positions(U).
//   lost_capacity is the expected number of hosts of capacity lost if the next request were for
//   a type drawn with weight hosts(U) at a uniformly random legal position. It is small for
//   positions in corners, against the grid edge or against allocated/unhealthy hosts, because
//   those overlap few positions of the larger types, and large for a position that takes the
//   last place of a large type.
//   Order: larger largest_after first, then aligned before unaligned, then smaller
//   lost_capacity; ties go to the first position in Pod::LegalPlacements order (deterministic).
//   Across pods: each candidate pod's best position, compared with largest_after taken over the
//   fleet (the largest type left in that pod after P, or placeable now in any other candidate
//   pod), then aligned, then lost_capacity; ties go to the first pod in fleet order. So a small
//   slice goes where it fits tightest (a standalone device, a hole of its size) and keeps a
//   whole pod free for a large one.
//   Cost: the summed-area tables of available hosts and of each type's legal origins come from
//   the pod's FreeIndex (free_index.h), built once per pod state, O(hosts * types), and shared
//   by every decision until the pod changes. A type without a legal position then fails at once;
//   otherwise O(types) lookups per candidate, largest type first, and a candidate is dropped as
//   soon as it cannot beat the best so far. The answer per type is remembered in the index, so a
//   pod that did not change is not scored again (bench_placement: medians 0.03-4 us on a fragmented
//   16x16 v3 pod with the index built, 4.5-8.6 us right after a change).
struct BestFitScore {
  int largest_after_hosts = 0;
  bool aligned = false;
  double lost_capacity = 0.0;
  // True when `other` is strictly preferred.
  bool WorseThan(const BestFitScore& other) const;
};

struct ScoredPlacement {
  Placement placement;
  BestFitScore score;
};

// Every legal position of `type` with its best-fit score, in Pod::LegalPlacements order (for
// explanations and tests; the policy itself does not build this vector).
std::vector<ScoredPlacement> ScoreBestFitCandidates(const Pod& pod, const AcceleratorType& type);

// "first-fit" or "best-fit"; any other name is an error listing the valid ones.
Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(std::string_view name);
std::vector<std::string_view> PlacementPolicyNames();

}  // namespace podsched::pod
