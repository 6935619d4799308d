// Preemption victim choice and the EASY backfill shadow: pure functions over a Pod.
//
// Pure; thread-safe.
#pragma once

#include <boost/container/flat_map.hpp>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "pod/placement.h"
#include "pod/pod.h"

namespace podsched::core {

struct VictimCandidate {
  JobId job;
  double lost_core_seconds = 0;  // cores x time since the last committed checkpoint
  int cores = 0;
};

// Candidates keyed by the allocation they hold, in allocation order. A sorted vector (flat_map):
// a pass builds the sets anew for every class and priority of blocked job after each change of
// the leases, in allocation order, and a node per candidate was most of that.
using VictimCandidates = boost::container::flat_map<AllocationId, VictimCandidate>;

struct VictimChoice {
  pod::Placement placement;
  std::vector<JobId> victims;  // ascending id
  double lost_core_seconds = 0;
  int cores = 0;
};

// The legal rectangle of `shape` in `pod` that becomes available when some of `candidates`
// (keyed by the allocation they hold) are released, choosing the rectangle whose victims lose
// the least work, then evict the fewest cores, then the first in row-major order. Hosts that are
// unhealthy or draining are never used. nullopt when no such rectangle exists.
std::optional<VictimChoice> ChooseVictims(const pod::Pod& pod, pod::SliceShape shape,
                                          const VictimCandidates& candidates);

// Defragmentation: where `policy` would put a slice of `type` in `pod` if every allocation of
// `movable` were gone, and the movable jobs in that rectangle (their lost work and cores summed).
// The placement policy, not the least lost work, picks the rectangle: moves that packed the
// on-demand job wherever moving was cheapest would scatter unmovable work over the pod and block
// the larger jobs that follow. nullopt when there is no such position, or it is free already.
std::optional<VictimChoice> ChooseMoves(const pod::Pod& pod, const pod::AcceleratorType& type,
                                        const pod::PlacementPolicy& policy,
                                        const VictimCandidates& movable);

// When an allocation is expected to release its hosts (max() when unknown).
struct ExpectedRelease {
  AllocationId allocation;
  TimePoint at;
  int pod = 0;  // the fleet's pod the allocation is in
};

struct Shadow {
  TimePoint start = TimePoint::max();  // earliest expected start; max() when unknown
  std::optional<pod::Placement> placement;
};

// EASY backfill: the earliest time at which a slice of `type` has a legal position in `pod` if
// allocations are released at their expected times (`releases`: the pod's, in any order; one of
// an allocation the pod does not hold frees nothing), or nullopt when none has even after every
// release (unhealthy or draining hosts, allocations without a release). No releases: nullopt.
// The answer is one of the releases' times: a position free already starts at the earliest.
//
// Computed from the time each host becomes available, the latest of those over each legal
// position's rectangle and the earliest over the positions: no copy of the pod and no placement
// decision per release time (that was a fifth of a Philly replay under fair-best-fit).
std::optional<TimePoint> EarliestStart(const pod::Pod& pod, const pod::AcceleratorType& type,
                                       std::span<const ExpectedRelease> releases);

// Where `policy` would put a slice of `type` in `pod` at `start` (EarliestStart's answer): with
// every allocation of `releases` expected by then released. The shadow's placement: given even
// when the time is unknown (max: every release applied), so later jobs can keep off it.
pod::Placement PlaceAt(const pod::Pod& pod, const pod::AcceleratorType& type,
                       const pod::PlacementPolicy& policy,
                       std::span<const ExpectedRelease> releases, TimePoint start);

}  // namespace podsched::core
