#include "pod/what_if.h"

#include "pod/legal.h"
#include "pod/prefix_sum.h"

namespace podsched::pod {

std::vector<Placement> LegalPlacementsIfReleased(const Pod& pod, SliceShape shape,
                                                 const std::function<bool(AllocationId)>& released) {
  const PrefixSum2D available(pod.host_rows(), pod.host_cols(), [&](int r, int c) {
    const HostStatus& h = pod.host(pod.HostAt({r, c}));
    const bool free = !h.allocation.has_value() || released(*h.allocation);
    return h.healthy && !h.draining && free ? 1 : 0;
  });
  std::vector<Placement> out;
  ForEachLegalPlacement(available, shape, [&out](const Placement& p) {
    out.push_back(p);
    return true;
  });
  return out;
}

}  // namespace podsched::pod
