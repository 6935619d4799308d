// Outbox: what one call of the Scheduler produces, until Finish commits it (issue 27, the
// fourth of the core's owners).
//
// Holds, for the call in progress: the actions for the worker bus (launch, preempt, kill), the
// jobs whose records changed, those whose reason alone changed (stored as a ReasonUpdate, not a
// whole row), and the events (state changes) with their sequence numbers.
//
// Promises
//   - Events get consecutive sequence numbers, from the store's next one on, in the order they
//     are recorded.
//   - Take returns everything since the last Take, once: one batch per commit.
//
// Who calls it: Scheduler::Impl (Transition, Queue, Bind, StartPreemption, the timers, Finish).
// Pure; single-threaded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/shared_text.h"
#include "scheduler/core/job.h"
#include "scheduler/core/repository.h"
#include "scheduler/core/scheduler.h"

namespace podsched::core {

class Outbox {
 public:
  struct Batch {
    Actions actions;
    std::set<JobId> changed_jobs;
    // Jobs whose reason alone changed, with their last reason: by id, each once, none in
    // changed_jobs (a StoreBatch's `reasons`).
    std::vector<ReasonUpdate> retold;
    std::vector<JobEvent> events;
  };

  // The sequence number of the next event (the store's, at Scheduler::Create).
  void SetNextEventSeq(int64_t seq) { next_event_seq_ = seq; }
  // Numbers `event` and keeps it; the job's record changed with it.
  void Record(JobEvent event) {
    event.seq = next_event_seq_++;
    changed_jobs_.insert(event.job);
    events_.push_back(std::move(event));
  }
  void Changed(JobId job) { changed_jobs_.insert(job); }
  // The job's reason is now `reason` (and maybe nothing else changed): stored as a reason update
  // unless its record changed otherwise too. Kept with the text, so that the commit need not
  // look the job up again.
  void Retold(JobId job, SharedText reason) { retold_.push_back({job, std::move(reason)}); }
  template <class A>
  void Send(A action) {
    actions_.emplace_back(std::in_place_type<A>, std::move(action));
  }
  Batch Take() {
    // A job told twice keeps the last text: stable by id, then the last of each run.
    std::stable_sort(retold_.begin(), retold_.end(),
                     [](const ReasonUpdate& a, const ReasonUpdate& b) { return a.job < b.job; });
    size_t kept = 0;
    for (size_t i = 0; i < retold_.size(); ++i) {
      const bool last = i + 1 == retold_.size() || retold_[i + 1].job != retold_[i].job;
      if (!last || changed_jobs_.contains(retold_[i].job)) continue;
      if (kept != i) retold_[kept] = std::move(retold_[i]);
      ++kept;
    }
    retold_.resize(kept);
    Batch out{std::move(actions_), std::move(changed_jobs_), std::move(retold_),
              std::move(events_)};
    actions_.clear();
    changed_jobs_.clear();
    retold_.clear();
    events_.clear();
    return out;
  }

 private:
  int64_t next_event_seq_ = 1;
  Actions actions_;
  std::set<JobId> changed_jobs_;
  std::vector<ReasonUpdate> retold_;
  std::vector<JobEvent> events_;
};

}  // namespace podsched::core
