// PlacementSession: a scripted sequence of requests against one pod under one policy, as the
// `podsim place` demo and tests drive it.
//
// Requests (text, as typed on the command line):
//   v2-32            allocate a slice; it gets the next allocation id (1, 2, ...) whether or not
//                    it can be placed now, so that ids agree between sessions of different
//                    policies fed the same script
//   -N | release:N   release allocation N
//   fail:H heal:H    mark host H unhealthy / healthy
//   drain:H undrain:H
// A slice that cannot be placed waits in a FIFO queue; after every step the queue is retried in
// order and stops at the first request that still does not fit (no backfilling), as the packing
// benchmark does.
//
// Pure (no I/O); not thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "pod/placement.h"
#include "pod/pod.h"

namespace podsched::pod {

// "v2", "v3" (full pods), or "v2:RxC" / "v3:RxC" / "RxC" (v2) for a smaller host grid.
Result<Pod> ParsePodSpec(std::string_view text);

struct ScriptRequest {
  enum class Kind { kAllocate, kRelease, kFail, kHeal, kDrain, kUndrain };
  Kind kind = Kind::kAllocate;
  std::string text;                        // as given
  std::optional<AcceleratorType> type;     // kAllocate
  AllocationId allocation;                 // kRelease
  HostId host;                             // kFail .. kUndrain
};

// Parses one request against `pod` (its types and host ids); errors say what is valid.
Result<ScriptRequest> ParseRequest(std::string_view text, const Pod& pod);

class PlacementSession {
 public:
  PlacementSession(Pod pod, std::unique_ptr<PlacementPolicy> policy);

  // Applies one request and retries the queue. Returns what happened, one line per event:
  //   "allocation 3 (v2-32) -> 2x2 hosts at row 0 col 2"
  //   "allocation 4 (v2-128) waits: no free 4x4 block (31 hosts free)"
  //   "allocation 4 (v2-128) placed from the queue -> 4x4 hosts at row 4 col 0"
  // Expected failures (releasing an unknown allocation) are returned as lines too, prefixed
  // "error: ", because a demo script keeps going.
  std::vector<std::string> Apply(const ScriptRequest& request);

  const Pod& pod() const { return pod_; }
  const PlacementPolicy& policy() const { return *policy_; }
  // Allocation ids waiting for room, oldest first.
  std::vector<AllocationId> waiting() const;
  // How many allocation requests could not be placed when they arrived.
  int requests_waited() const { return requests_waited_; }

 private:
  struct Waiting {
    AllocationId id;
    AcceleratorType type;
  };
  // Places `type` as `id` if the policy finds a position; returns the description of where.
  std::optional<std::string> TryPlace(AllocationId id, const AcceleratorType& type);
  void DrainQueue(std::vector<std::string>& out);

  Pod pod_;
  std::unique_ptr<PlacementPolicy> policy_;
  std::deque<Waiting> queue_;
  int64_t next_id_ = 1;
  int requests_waited_ = 0;
};

// "2x2 hosts at row 0 col 2".
std::string DescribePlacement(const Placement& p);
// "no free 4x4 block" / "no free 2x4 or 4x2 block".
std::string NoRoomReason(SliceShape shape);

}  // namespace podsched::pod
