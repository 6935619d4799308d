// The steps of a scheduling pass that a Profile chooses, as objects (the extension points of the
// Kubernetes scheduling framework; cycle.h runs them in order):
//
//   QueueSort   the order QUEUED jobs are considered in      FifoSort · FairShareSort
//   Score       where a job would start                      a pod::PlacementPolicy
//   PostFilter  which running work a blocked job may evict   LeastLostWork (none: no preemption)
//   Permit      what a blocked job means for those behind    StrictOrder · EasyBackfill
//
// Filter (dependencies, throttle, backoff, quota, shape) and Bind are the same in every profile
// and stay Pass's own. A step is a pure, immutable object: one instance serves every pass.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "pod/placement.h"
#include "scheduler/core/accounting.h"
#include "scheduler/core/job.h"
#include "scheduler/core/job_queue.h"
#include "scheduler/core/victims.h"

namespace podsched::core {

// QueueSort: every QUEUED job, first to be considered first. The result is `storage` (filled
// here; the caller keeps it between passes so its memory is reused) or JobQueue's own order. In
// the latter, a job that leaves the queue during the pass has its entry's ref set to null.
// (`queued` is not const: reading its submission order merges what changed since the last pass.)
class QueueSort {
 public:
  virtual ~QueueSort() = default;
  virtual const std::vector<QueueEntry>& Sort(JobQueue& queued, const Accounting& accounting,
                                              TimePoint now,
                                              std::vector<QueueEntry>& storage) const = 0;
  // Whether Sort's order is submission order (QueueKey's): then the jobs behind a job are those
  // with a later key, which a pass may look up rather than walk (StrictTail, cycle.h).
  virtual bool InSubmitOrder() const { return false; }
};

// Submit time, then id: the order JobQueue keeps, so no sort and no copy.
class FifoSort final : public QueueSort {
 public:
  const std::vector<QueueEntry>& Sort(JobQueue& queued, const Accounting& accounting,
                                      TimePoint now,
                                      std::vector<QueueEntry>& storage) const override;
  bool InSubmitOrder() const override { return true; }
};

// Effective priority (priority + 1 per `aging_step` waited, at most `max_aging_bonus`), then
// the user's decayed usage (Accounting::UsageNow, once per user and pass), then submit time.
class FairShareSort final : public QueueSort {
 public:
  FairShareSort(Duration aging_step, int max_aging_bonus)
      : aging_step_(aging_step), max_aging_bonus_(max_aging_bonus) {}
  const std::vector<QueueEntry>& Sort(JobQueue& queued, const Accounting& accounting,
                                      TimePoint now,
                                      std::vector<QueueEntry>& storage) const override;

 private:
  const Duration aging_step_;
  const int max_aging_bonus_;
};

// PostFilter: the running work whose eviction frees a rectangle of `shape` on `view`, among
// `candidates` (those the job may preempt, past their minimum runtime); nullopt when none does.
class PostFilter {
 public:
  virtual ~PostFilter() = default;
  virtual std::optional<VictimChoice> Choose(const pod::Pod& view, pod::SliceShape shape,
                                             const VictimCandidates& candidates) const = 0;
};

// The set that loses the least work since its last checkpoints (ChooseVictims, victims.h).
class LeastLostWork final : public PostFilter {
 public:
  std::optional<VictimChoice> Choose(const pod::Pod& view, pod::SliceShape shape,
                                     const VictimCandidates& candidates) const override;
};

// Permit: a job could not start (nor preempt); what that means for the jobs behind it in this
// pass. Asked once per pass until it answers with a head.
class Permit {
 public:
  struct Decision {
    // Every job behind waits, with this reason (strict order).
    std::optional<std::string> behind;
    // The blocked job is the head: where and when it is expected to start, kept free for the
    // jobs behind that could delay it (EASY backfill).
    std::optional<Shadow> head;
    int head_pod = 0;  // the pod of head->placement (an index in the fleet)
  };
  virtual ~Permit() = default;
  // `views`: the fleet's pods as this pass sees them; `candidates`: the pods that can hold
  // `type`; `releases`: when each lease is expected to free its hosts (computed only when
  // asked).
  virtual Decision OnBlocked(
      const std::vector<pod::Pod>& views, const std::vector<int>& candidates,
      const pod::AcceleratorType& type, const pod::PlacementPolicy& score,
      const std::function<std::vector<ExpectedRelease>()>& releases) const = 0;
  // Whether OnBlocked may answer with a head that later jobs backfill around (EASY). A blocked
  // multislice job is never such a head (Pass::Block), and is not worth the shadow's cost.
  virtual bool Backfills() const { return false; }
};

// The first job that does not fit blocks every job behind it (but those filtered out).
class StrictOrder final : public Permit {
 public:
  Decision OnBlocked(const std::vector<pod::Pod>& views, const std::vector<int>& candidates,
                     const pod::AcceleratorType& type, const pod::PlacementPolicy& score,
                     const std::function<std::vector<ExpectedRelease>()>& releases)
      const override;
};

// EASY backfill: a later job may start only if it cannot delay the head's earliest start (the
// earliest over the candidate pods; ties: the first pod in fleet order).
class EasyBackfill final : public Permit {
 public:
  Decision OnBlocked(const std::vector<pod::Pod>& views, const std::vector<int>& candidates,
                     const pod::AcceleratorType& type, const pod::PlacementPolicy& score,
                     const std::function<std::vector<ExpectedRelease>()>& releases)
      const override;
  bool Backfills() const override { return true; }
};

}  // namespace podsched::core
