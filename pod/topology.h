// Topology of a placed slice: its hosts, chips and TensorCores with torus coordinates.
//
// Coordinates are in chips: x runs across (host columns), y down (host rows). Each host is a 2x2
// board of chips, so the pod's chip grid is its host grid times two (v2: 16x16 chips, v3: 32x32).
// `global` coordinates are in the pod's chip grid, `local` ones start at (0,0) at the slice's
// top-left chip.
//
// Rank order (what workers use to lay out MPI ranks): hosts row-major within the slice; on each
// host its four chips row-major; on each chip its TensorCores 0 and 1. So host i holds chips
// 4i..4i+3 and cores 8i..8i+7.
//
// Links: every chip links to its four neighbours in the slice's chip grid. Only the full-pod
// slice (Pod::IsFullPodShape) has wrap-around links, which close each row and column into a
// ring (a 2D torus); every other slice is a 2D mesh.
//
// Pure values; thread-safe.
#pragma once

#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "pod/pod.h"

namespace podsched::pod {

struct ChipCoord {
  int x = 0;
  int y = 0;
  friend bool operator==(const ChipCoord&, const ChipCoord&) = default;
};

struct ChipInfo {
  ChipCoord global;
  ChipCoord local;
  HostId host;
  int host_index = 0;    // index of `host` in SliceTopology::hosts
  int chip_on_host = 0;  // 0..3, row-major on the 2x2 board
};

struct TensorCoreInfo {
  int rank = 0;          // index in SliceTopology::cores
  int chip = 0;          // index in SliceTopology::chips
  int core_on_chip = 0;  // 0 or 1
  HostId host;
};

struct SliceTopology {
  Placement placement;
  int chip_rows = 0;  // the slice's chip grid
  int chip_cols = 0;
  bool wraparound = false;
  std::vector<HostId> hosts;          // row-major: rank order of hosts
  std::vector<ChipInfo> chips;        // host-major, see above
  std::vector<TensorCoreInfo> cores;  // chip-major

  // Index in `chips` of the chip at slice-local coordinates (CHECKs they are inside).
  int ChipAt(ChipCoord local) const;
  // Indexes of the chips linked to `chip`: 2 to 4 in a mesh, 4 in the torus (fewer only when
  // a ring has 2 or fewer chips, where both directions reach the same chip; each listed once).
  std::vector<int> Neighbours(int chip) const;
};

// The topology of the rectangle `p` of `pod` (CHECKs that it lies inside the grid; it need not
// be allocated).
SliceTopology TopologyOf(const Pod& pod, const Placement& p);
// The topology of an allocation; NotFound when the pod has no such allocation.
Result<SliceTopology> TopologyOf(const Pod& pod, AllocationId id);

}  // namespace podsched::pod
