// The QUEUED jobs: what a pass reads of each (QueuedRef) and their order of submission (submit
// time, then id), kept up to date as jobs enter and leave the queue.
//
// Why the order is kept rather than sorted each pass: a FIFO queue behind a large head grows to
// thousands of jobs, and a pass that rebuilt and sorted it from a map every time spent almost half
// of podsim's replay there (issue 29, "FIFO behind a large head"). New jobs nearly always come
// last (their submit time is now), so keeping the order costs an append; a requeued job keeps its
// submit time and is merged in at the next pass.
//
// Pure; single-threaded (the scheduler's owner). References returned stay valid until the next
// call that changes the queue.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "pod/accelerator.h"
#include "scheduler/core/accounting.h"
#include "scheduler/core/job.h"

namespace podsched::core {

// A QUEUED job with direct pointers to what a pass reads (std::map nodes never move), so a pass
// over 10,000 queued jobs does no lookups in the map of every job kept.
struct QueuedRef {
  JobRecord* job;
  const pod::AcceleratorType* type;
  UserRecord* user;
  QuotaUsage* use;
};

// One QUEUED job in the order of this pass.
struct QueueEntry {
  int effective_priority = 0;  // fair share: priority + aging bonus; FIFO: 0
  double usage = 0;            // fair share: the user's decayed usage in core-hours; FIFO: 0
  TimePoint submit{};
  JobId id;
  const QueuedRef* ref = nullptr;
};

class JobQueue {
 public:
  // Puts `id` in the queue (or replaces its references, keeping its place when `submit` is the
  // same).
  void Add(JobId id, TimePoint submit, const QueuedRef& ref);
  // Takes `id` out of the queue; nothing when it is not in it.
  void Remove(JobId id);

  size_t size() const { return by_id_.size(); }
  bool contains(JobId id) const { return by_id_.contains(id); }

  // Every queued job in submission order (QueueEntry::effective_priority and usage are 0).
  // Amortised O(queue): merges the jobs added since the last call and drops the removed ones.
  const std::vector<QueueEntry>& InSubmitOrder();

 private:
  struct Node {
    QueuedRef ref;
    TimePoint submit;
  };
  static bool Before(const QueueEntry& a, const QueueEntry& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  }

  std::map<JobId, Node> by_id_;  // the references live here: map nodes never move
  std::vector<QueueEntry> ordered_;  // sorted; a removed job's entry has ref == nullptr
  size_t removed_ = 0;               // such entries in ordered_
  std::vector<QueueEntry> added_;    // since the last InSubmitOrder, in any order
};

}  // namespace podsched::core
