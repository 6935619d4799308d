// FreeIndex: what the placement policies ask of a pod's available hosts, computed once per pod
// state instead of once per decision.
//
// For the pod's availability (healthy, not draining, free) it holds a summed-area table of
// available hosts and, for every valid type of the pod's grid that could fit by host count, a
// summed-area table of its legal origins in each orientation. A policy then answers "is there a
// legal position of this type", "how many positions of type U does this rectangle destroy" and
// "what is the largest placeable type" with table lookups, and a type with no legal position
// fails at once.
//
// A Pod builds its index on the first query after a change and shares it with its copies (a
// scheduling pass copies pods to ask "what if"), so many decisions against one pod state build it
// once. The availability table costs O(hosts) and is built at once; the legal origins cost
// O(hosts x types), one 4-lookup test per (origin, oriented type), and are built by the first
// call of types() or Find(), so that first-fit, which only scans, never pays for them.
//
// Internal to pod/. Thread-safe: the origins are built once, under a mutex, and never change.
#pragma once

#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

#include "pod/accelerator.h"
#include "pod/placement.h"
#include "pod/pod.h"
#include "pod/prefix_sum.h"

namespace podsched::pod {

// The legal origins of one oriented shape.
struct OrientedOrigins {
  SliceShape shape;
  PrefixSum2D origins;
  // How many of them give a rectangle that overlaps `p`.
  int Overlapping(const Placement& p) const {
    return origins.Sum(p.origin.row - shape.rows + 1, p.origin.col - shape.cols + 1,
                       p.origin.row + p.shape.rows, p.origin.col + p.shape.cols);
  }
};

// The legal positions of one valid type, both orientations (one for a square shape).
struct TypeOrigins {
  AcceleratorType type;
  int total = 0;  // legal positions, both orientations
  double hosts_per_position = 0;  // hosts / total (0 without positions): best-fit's weight
  std::array<OrientedOrigins, 2> oriented;
  int num_oriented = 0;
};

// Best-fit's answer for one type in one pod state (placement.cc keeps it in the index, so that the
// next decision for that type on an unchanged pod, in this pass or a later one, does not score the
// positions again).
struct BestFitMemo {
  std::optional<ScoredPlacement> best;  // nullopt: no legal position
};

class FreeIndex {
 public:
  explicit FreeIndex(const Pod& pod);

  // Per host: 1 when available.
  const PrefixSum2D& available() const { return available_; }
  // Every valid type of the pod's grid, smallest first; a type with more hosts than are available
  // has total 0 and empty tables.
  const std::vector<TypeOrigins>& types() const;
  // The types of types() that have a legal position, smallest first.
  const std::vector<const TypeOrigins*>& placeable() const {
    types();
    return placeable_;
  }
  // The valid type with this shape (either orientation), or nullptr when no valid type of the
  // grid has it.
  const TypeOrigins* Find(SliceShape shape) const;

  // What RememberBestFit kept for `type` (an element of types()), or nullopt.
  std::optional<BestFitMemo> RecalledBestFit(const TypeOrigins& type) const;
  void RememberBestFit(const TypeOrigins& type, const BestFitMemo& memo) const;

 private:
  void BuildTypes() const;

  Generation generation_;
  PrefixSum2D available_;
  // Not std::call_once: glibc's wakes waiters with a futex system call every time, which cost
  // more than a small pod's build.
  mutable std::mutex build_mutex_;
  mutable std::atomic<bool> types_built_{false};
  mutable std::vector<TypeOrigins> types_;
  mutable std::vector<const TypeOrigins*> placeable_;
  mutable std::mutex memo_mutex_;
  mutable std::vector<std::optional<BestFitMemo>> best_fit_;  // by index in types_
};

}  // namespace podsched::pod
