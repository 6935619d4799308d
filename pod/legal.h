// Enumerating legal positions of a slice shape, shared by Pod and the placement policies.
//
// Internal to pod/. The order is the contract of Pod::LegalPlacements: origins row-major, and for
// each origin the canonical orientation (rows <= cols) before the rotated one.
#pragma once

#include <utility>

#include "pod/pod.h"
#include "pod/prefix_sum.h"

namespace podsched::pod {

inline SliceShape Canonical(SliceShape s) { return s.rows <= s.cols ? s : s.Rotated(); }

inline bool AllAvailable(const PrefixSum2D& avail, const Placement& p) {
  return avail.Sum(p.origin.row, p.origin.col, p.origin.row + p.shape.rows,
                   p.origin.col + p.shape.cols) == p.shape.hosts();
}

// Calls visit(placement) for each legal position in order; stops early when visit returns false.
template <typename Visit>
void ForEachLegalPlacement(const PrefixSum2D& avail, SliceShape shape, Visit&& visit) {
  const SliceShape canonical = Canonical(shape);
  if (canonical.rows < 1) return;
  const bool square = canonical.rows == canonical.cols;
  for (int r = 0; r < avail.rows(); ++r) {
    for (int c = 0; c < avail.cols(); ++c) {
      for (SliceShape s : {canonical, canonical.Rotated()}) {
        if (r + s.rows > avail.rows() || c + s.cols > avail.cols()) continue;
        const Placement p{{r, c}, s};
        if (AllAvailable(avail, p) && !visit(p)) return;
        if (square) break;
      }
    }
  }
}

}  // namespace podsched::pod
