// Pod: one TPU pod's host grid and which allocation holds each host.
//
// Hosts are numbered row-major: HostId = row * host_cols + col. Each host is healthy or
// unhealthy, draining or not, and free or held by exactly one allocation. A host is *available*
// for new placements when it is healthy, not draining and free. A host that fails while allocated
// stays in its allocation (marked unhealthy) until the allocation is released; it is then not
// available until it is marked healthy again.
//
// A placement is a rectangle of hosts given by its top-left host and its oriented shape. It never
// wraps around the grid edge; the full-pod slice is the only slice with wrap-around (torus) links,
// which topology.h reports.
//
// Pure: no I/O, no clock. One owner (the scheduler's strand) mutates it; const queries may run
// concurrently with each other (not with a mutation).
// Copyable: the scheduler copies a Pod to ask "what if these allocations were released?".
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "pod/accelerator.h"

namespace podsched::pod {

struct HostCoord {
  int row = 0;
  int col = 0;
  friend bool operator==(const HostCoord&, const HostCoord&) = default;
};

struct Placement {
  HostCoord origin;   // top-left host
  SliceShape shape;   // oriented: rows down, cols across
  friend bool operator==(const Placement&, const Placement&) = default;
};

struct HostStatus {
  bool healthy = true;
  bool draining = false;
  std::optional<AllocationId> allocation;
  bool available() const { return healthy && !draining && !allocation.has_value(); }
};

class FreeIndex;  // free_index.h

// A pod's allocations by id: a vector sorted by id rather than a tree, so that a copy (the first
// change of a pod copied for a "what if", e.g. EASY backfill's shadow) is one allocation and a
// memcpy, not a node per allocation. A pod holds at most one allocation per host.
class AllocationTable {
 public:
  using Entry = std::pair<AllocationId, Placement>;
  const Placement* Find(AllocationId id) const {
    auto it = LowerBound(id);
    return it != entries_.end() && it->first == id ? &it->second : nullptr;
  }
  bool contains(AllocationId id) const { return Find(id) != nullptr; }
  // Adds `id` (not present).
  void Insert(AllocationId id, const Placement& p) {
    entries_.insert(LowerBound(id), {id, p});
    hosts_ += p.shape.hosts();
  }
  // Removes `id` (present).
  void Erase(AllocationId id) {
    const auto it = LowerBound(id);
    hosts_ -= it->second.shape.hosts();
    entries_.erase(it);
  }
  size_t size() const { return entries_.size(); }
  // The hosts of every allocation (Pod::AllocatedHosts: the simulator asks at every event).
  int hosts() const { return hosts_; }
  bool empty() const { return entries_.empty(); }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }

 private:
  std::vector<Entry>::const_iterator LowerBound(AllocationId id) const {
    return std::lower_bound(entries_.begin(), entries_.end(), id,
                            [](const Entry& e, AllocationId key) { return e.first < key; });
  }
  std::vector<Entry> entries_;
  int hosts_ = 0;
};

class Pod {
 public:
  // A pod of `generation` with a host grid of host_rows x host_cols (1x1 for a standalone v2-8,
  // 4x4 for tests, up to the generation's full pod). Errors on sizes outside that range.
  static Result<Pod> Create(std::string name, Generation generation, int host_rows,
                            int host_cols);
  // The full pod of a generation: v2 8x8 hosts, v3 16x16.
  static Pod Full(std::string name, Generation generation);

  const std::string& name() const { return name_; }
  Generation generation() const { return generation_; }
  int host_rows() const { return host_rows_; }
  int host_cols() const { return host_cols_; }
  int num_hosts() const { return host_rows_ * host_cols_; }
  // True when `shape` (either orientation) is the generation's full pod (v2 8x8, v3 16x16) and
  // this pod's grid is that full size: the only slice with wrap-around links. A small test grid
  // covered entirely is not a full pod.
  bool IsFullPodShape(SliceShape shape) const;

  HostId HostAt(HostCoord c) const { return HostId(c.row * host_cols_ + c.col); }
  HostCoord CoordOf(HostId h) const { return {h.value() / host_cols_, h.value() % host_cols_}; }
  bool Contains(HostId h) const { return h.value() >= 0 && h.value() < num_hosts(); }
  const HostStatus& host(HostId h) const;  // CHECKs Contains(h)
  // Every host's status, by HostId (row-major): for loops over all of them (host() CHECKs each).
  const std::vector<HostStatus>& hosts_status() const { return hosts_; }
  // Per host in HostId (row-major) order, 1 when available: the grid the free-host index and
  // "what if" questions sum (a call of host() per host was most of building the index).
  std::vector<int> AvailabilityGrid() const;

  // Parses a type against this pod's generation and grid (errors list this pod's valid types).
  Result<AcceleratorType> ParseType(std::string_view text) const;

  // True when the rectangle lies inside the grid and every host in it is available.
  bool CanPlace(const Placement& p) const;
  // Every legal position for a slice of this shape, both orientations, row-major by origin
  // (for each origin, the canonical orientation before the rotated one).
  std::vector<Placement> LegalPlacements(SliceShape shape) const;
  // Hosts of a rectangle, row-major.
  std::vector<HostId> HostsIn(const Placement& p) const;

  // Gives every host of `p` to `id`. Errors if `id` already holds hosts or CanPlace(p) is false.
  Status Allocate(AllocationId id, const Placement& p);
  // Frees the hosts of `id` (unhealthy ones stay unavailable). Errors if `id` is unknown.
  Status Release(AllocationId id);
  // Health and draining; idempotent. Errors only for an unknown host.
  Status MarkUnhealthy(HostId h);
  Status MarkHealthy(HostId h);
  Status SetDraining(HostId h, bool draining);

  std::optional<Placement> PlacementOf(AllocationId id) const;
  const AllocationTable& allocations() const { return *allocations_; }

  // The index of available hosts and legal origins for this state (free_index.h), for pod/'s
  // placement code. Built by the first call after a change; a copy of the pod shares it (the copy
  // builds it in the original first, so that every later copy of an unchanged pod shares it too).
  // Valid until this pod next changes.
  const FreeIndex& free_index() const;

  // Queries.
  int AvailableHosts() const;
  int AllocatedHosts() const;
  // The largest valid accelerator type (most cores) that has a legal position now.
  std::optional<AcceleratorType> LargestPlaceableType() const;
  // 1 - (hosts of the largest placeable type) / (available hosts); 0 when nothing is available.
  double Fragmentation() const;
  // Allocated hosts / all hosts.
  double Utilization() const;

  Pod(const Pod& other);
  Pod& operator=(const Pod& other);
  Pod(Pod&& other) noexcept;
  Pod& operator=(Pod&& other) noexcept;
  ~Pod();

 private:
  Pod(std::string name, Generation generation, int rows, int cols);
  // Every mutation of hosts_ drops the index (the owner mutates while no one reads).
  void Changed() {
    ready_index_.store(nullptr, std::memory_order_relaxed);
    free_index_.reset();
  }
  std::shared_ptr<const FreeIndex> SharedIndex() const;
  // The allocations, for a change: a map shared with copies is copied first.
  AllocationTable& MutableAllocations();

  std::string name_;
  Generation generation_;
  int host_rows_;
  int host_cols_;
  std::vector<HostStatus> hosts_;
  // Shared by copies until one of them allocates or releases (a scheduling pass copies every pod
  // of the fleet, and most passes change few of them). Never null.
  std::shared_ptr<AllocationTable> allocations_ = std::make_shared<AllocationTable>();
  // Built lazily by free_index(). Concurrent const queries may ask for it at once: the first
  // builds it under a lock and publishes it through ready_index_, after which free_index_ is only
  // read until the next change.
  mutable std::shared_ptr<const FreeIndex> free_index_;
  mutable std::atomic<const FreeIndex*> ready_index_{nullptr};
};

}  // namespace podsched::pod
