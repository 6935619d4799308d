#include "pod/topology.h"

#include <algorithm>
#include <string>

#include "common/check.h"

namespace podsched::pod {
namespace {
constexpr int kBoardSide = 2;  // a host is a 2x2 board of chips
}  // namespace

SliceTopology TopologyOf(const Pod& pod, const Placement& p) {
  PODSCHED_CHECK(p.shape.rows >= 1 && p.shape.cols >= 1 && p.origin.row >= 0 && p.origin.col >= 0 &&
                 p.origin.row + p.shape.rows <= pod.host_rows() &&
                 p.origin.col + p.shape.cols <= pod.host_cols());
  const GenerationSpec& spec = SpecOf(pod.generation());
  PODSCHED_CHECK(spec.chips_per_host == kBoardSide * kBoardSide);
  SliceTopology t;
  t.placement = p;
  t.chip_rows = p.shape.rows * kBoardSide;
  t.chip_cols = p.shape.cols * kBoardSide;
  t.wraparound = pod.IsFullPodShape(p.shape);
  t.hosts = pod.HostsIn(p);
  for (size_t i = 0; i < t.hosts.size(); ++i) {
    const int host_index = static_cast<int>(i);
    const HostCoord local_host{host_index / p.shape.cols, host_index % p.shape.cols};
    for (int c = 0; c < spec.chips_per_host; ++c) {
      const ChipCoord local{local_host.col * kBoardSide + c % kBoardSide,
                            local_host.row * kBoardSide + c / kBoardSide};
      const ChipCoord global{p.origin.col * kBoardSide + local.x,
                             p.origin.row * kBoardSide + local.y};
      const int chip = static_cast<int>(t.chips.size());
      t.chips.push_back({global, local, t.hosts[i], host_index, c});
      for (int k = 0; k < spec.cores_per_chip; ++k) {
        t.cores.push_back({static_cast<int>(t.cores.size()), chip, k, t.hosts[i]});
      }
    }
  }
  return t;
}

Result<SliceTopology> TopologyOf(const Pod& pod, AllocationId id) {
  const std::optional<Placement> p = pod.PlacementOf(id);
  if (!p) {
    return NotFound("allocation " + std::to_string(id.value()) + " holds no hosts in pod " +
                    pod.name());
  }
  return TopologyOf(pod, *p);
}

int SliceTopology::ChipAt(ChipCoord local) const {
  PODSCHED_CHECK(local.x >= 0 && local.y >= 0 && local.x < chip_cols && local.y < chip_rows);
  const int host_index = (local.y / kBoardSide) * placement.shape.cols + local.x / kBoardSide;
  const int chip_on_host = (local.y % kBoardSide) * kBoardSide + local.x % kBoardSide;
  return host_index * kBoardSide * kBoardSide + chip_on_host;
}

std::vector<int> SliceTopology::Neighbours(int chip) const {
  PODSCHED_CHECK(chip >= 0 && chip < static_cast<int>(chips.size()));
  const ChipCoord c = chips[static_cast<size_t>(chip)].local;
  std::vector<int> out;
  auto add = [&](int x, int y) {
    if (wraparound) {
      x = (x + chip_cols) % chip_cols;
      y = (y + chip_rows) % chip_rows;
    } else if (x < 0 || y < 0 || x >= chip_cols || y >= chip_rows) {
      return;
    }
    const int n = ChipAt({x, y});
    if (n != chip && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  add(c.x - 1, c.y);
  add(c.x + 1, c.y);
  add(c.x, c.y - 1);
  add(c.x, c.y + 1);
  return out;
}

}  // namespace podsched::pod
