// The scheduling pass as a list of named steps (the extension points of the Kubernetes
// scheduling framework, without its plugin registry: the Profile picks each step's policy).
// RunPass (cycle.cc) takes every QUEUED job in the order of the first step and runs the others:
//
//   QueueSort   SortQueue: submit time (kFifo) or effective priority, then the user's decayed
//               usage, then submit time (kFairShare).
//   Filter      Pass::Filter: unmet dependencies (settled before the pass, and only for jobs
//               whose targets changed: a lookup here); the array's throttle (O(1), the array
//               counts its tasks by state); retry backoff; quota, counting the cores already
//               promised to the user's other reservations; a shape that no rectangle of healthy
//               hosts can hold.
//               A filtered job never blocks others and holds no reservation.
//   Score       Pass::Score: the placement policy on this pass's view of the pod (with the
//               backfill head's rectangle kept free for jobs that could delay it), or the job's
//               own reservation once its victims are gone.
//   PostFilter  Pass::Preempt: evict lower-class / lower-priority work chosen by least lost work;
//               the freed rectangle is reserved while the victims checkpoint.
//   Permit      Pass::Block: without backfill every job behind the first blocked one waits
//               (strict order); with EASY backfill the first blocked job (the head) gets the
//               rectangle where it is expected to start, and later jobs may use it only if they
//               end before then.
//   Bind        Scheduler::Impl::Bind: allocate, new epoch, Launch.
//
// Within a pass availability only shrinks (placements and reservations take hosts, nothing is
// freed), so a shape that did not fit once does not fit later in the same pass: the pass
// remembers failed shapes and failed victim searches, which keeps a pass over 10,000 queued jobs
// close to linear.
//
// Pure; single-threaded (the scheduler's owner runs it).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "scheduler/core/scheduler_impl.h"
#include "scheduler/core/victims.h"

namespace podsched::core {

// One QUEUED job in the order of this pass.
struct QueueEntry {
  int effective_priority = 0;  // fair share: priority + aging bonus; FIFO: 0
  double usage = 0;            // fair share: the user's decayed usage in core-hours; FIFO: 0
  TimePoint submit{};
  JobId id;
  const QueuedRef* ref = nullptr;
};

// QueueSort: every QUEUED job, first to be considered first.
std::vector<QueueEntry> SortQueue(const Scheduler::Impl& s, TimePoint now);

// The state of one pass: the views of the pod, the backfill head, what failed already.
class Pass {
 public:
  Pass(Scheduler::Impl& s, TimePoint now);

  // Runs Filter .. Bind for one job, in queue order.
  void Consider(const QueueEntry& entry);

 private:
  // Why the job cannot be considered in this pass (backoff, quota, shape), nullopt if it can.
  std::optional<std::string> Filter(const QueueEntry& entry);
  // Where the job would start now, without delaying the backfill head.
  std::optional<pod::Placement> Score(const QueueEntry& entry);
  // True when the job holds a reservation whose victims have not released it yet (its reason
  // says which); drops a reservation that a failed host spoilt.
  bool AwaitReservation(JobRecord& job);
  // Starts the preemption of victims for the job; true when it did (the job then waits).
  // Otherwise sets the job's reason to why it cannot start.
  bool Preempt(JobRecord& job, const pod::AcceleratorType& type);
  // Permit: the job could not start; strict order or EASY head.
  void Block(const pod::AcceleratorType& type);
  void Take(const pod::Placement& p);  // excludes `p` from every view of this pass
  bool FitsHealthyPod(const pod::AcceleratorType& type);
  int ReservedCores(const UserName& user, bool preemptible, JobId except) const;

  struct FailedShape {
    int rows, cols;
    bool protected_view;
    auto operator<=>(const FailedShape&) const = default;
  };
  struct RunningRef {
    AllocationId alloc;
    const JobRecord* job;
    int cores;
  };

  Scheduler::Impl& s_;
  const TimePoint now_;
  pod::Pod view_;                       // the pod without reserved hosts and this pass's binds
  std::optional<pod::Pod> head_view_;   // also without the backfill head's rectangle
  TimePoint head_start_ = TimePoint::max();
  bool protect_ = false;                // the current job scores on head_view_
  std::optional<std::string> behind_;   // strict order: the reason of every job behind
  std::set<FailedShape> failed_;
  std::map<std::tuple<int, int, bool, int>, std::string> failed_preemption_;
  std::vector<RunningRef> running_;     // evictable work, built on first need
  bool running_built_ = false;
  std::optional<pod::Pod> healthy_view_;  // the pod with every allocation gone, on first need
  std::map<std::pair<int, int>, bool> fits_healthy_;
};

}  // namespace podsched::core
