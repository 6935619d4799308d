// What a pod would offer if some of its allocations were released, asked without copying it: the
// victim search's question (scheduler/core/victims.h), asked for every blocked shape and pod of a
// pass. Copying the pod for it cost a copy of its hosts and allocation map, a copy of the map
// again on the first release, and a new free-host index, for each question.
//
// Pure; reads the pod only.
#pragma once

#include <vector>

#include "common/ids.h"
#include "pod/pod.h"

namespace podsched::pod {

// Every legal position of `shape` in `pod` as it would be once the allocations `released` were
// released (ids of no allocation of this pod are passed over): what Pod::LegalPlacements of such
// a copy returns, in the same order. A released host that is unhealthy or draining stays
// unavailable, as Pod::Release leaves it.
std::vector<Placement> LegalPlacementsIfReleased(const Pod& pod, SliceShape shape,
                                                 const std::vector<AllocationId>& released);

}  // namespace podsched::pod
