#include "pod/what_if.h"

#include <optional>

#include "pod/legal.h"
#include "pod/prefix_sum.h"

namespace podsched::pod {

std::vector<Placement> LegalPlacementsIfReleased(const Pod& pod, SliceShape shape,
                                                 const std::vector<AllocationId>& released) {
  std::vector<int> available = pod.AvailabilityGrid();
  for (AllocationId id : released) {
    const std::optional<Placement> p = pod.PlacementOf(id);
    if (!p) continue;
    for (HostId h : pod.HostsIn(*p)) {
      const HostStatus& host = pod.host(h);
      available[static_cast<size_t>(h.value())] = host.healthy && !host.draining ? 1 : 0;
    }
  }
  std::vector<Placement> out;
  ForEachLegalPlacement(PrefixSum2D::FromGrid(pod.host_rows(), pod.host_cols(), available), shape,
                        [&out](const Placement& p) {
                          out.push_back(p);
                          return true;
                        });
  return out;
}

}  // namespace podsched::pod
