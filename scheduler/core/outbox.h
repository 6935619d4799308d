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
#include "scheduler/core/job.h"
#include "scheduler/core/scheduler.h"

namespace podsched::core {

class Outbox {
 public:
  struct Batch {
    Actions actions;
    std::set<JobId> changed_jobs;
    std::vector<JobId> retold_jobs;  // reason changed; sorted, each once, none in changed_jobs
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
  // The job's reason changed (and maybe nothing else): stored as a reason update unless its
  // record changed otherwise too.
  void Retold(JobId job) { retold_jobs_.push_back(job); }
  template <class A>
  void Send(A action) {
    actions_.emplace_back(std::in_place_type<A>, std::move(action));
  }
  Batch Take() {
    std::sort(retold_jobs_.begin(), retold_jobs_.end());
    retold_jobs_.erase(std::unique(retold_jobs_.begin(), retold_jobs_.end()), retold_jobs_.end());
    std::erase_if(retold_jobs_, [this](JobId id) { return changed_jobs_.contains(id); });
    Batch out{std::move(actions_), std::move(changed_jobs_), std::move(retold_jobs_),
              std::move(events_)};
    actions_.clear();
    changed_jobs_.clear();
    retold_jobs_.clear();
    events_.clear();
    return out;
  }

 private:
  int64_t next_event_seq_ = 1;
  Actions actions_;
  std::set<JobId> changed_jobs_;
  std::vector<JobId> retold_jobs_;
  std::vector<JobEvent> events_;
};

}  // namespace podsched::core
