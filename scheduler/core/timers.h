// Timers: when the core must act without being called (issue 27, the third of the core's owners).
//
// Holds
//   - the timers of job epochs: a kill at the end of a grace period, a simulated provider
//     reclaim, the 24-hour preemptible lifetime, max_runtime; and wake-ups, which only make the
//     next Tick run a pass (a backoff ended, a minimum runtime was reached);
//   - which jobs' current epochs were sent a Kill already.
//
// Promises
//   - PopDue returns due timers one at a time, earliest first (equal times: in the order they
//     were added), so a timer added while the caller acts on one (a kill due at once) is
//     returned by the next call of the same Tick.
//   - At most one wake-up per instant.
//   - TakeKill is true once per job until ClearKill (a new epoch, a forgotten job).
//   - It never looks at jobs: a timer of an epoch that has moved on is returned all the same,
//     and the coordinator (Scheduler::Impl::RunTimers) drops it.
//
// Pure (no I/O, no clock of its own: callers pass `now`); single-threaded.
#pragma once

#include <map>
#include <optional>
#include <set>

#include "common/clock.h"
#include "common/ids.h"

namespace podsched::core {

enum class TimerKind { kKill, kReclaim, kLifetime, kMaxRuntime, kWakeup };

struct Timer {
  TimerKind kind;
  JobEpoch job;  // empty for a wake-up
};

class Timers {
 public:
  void Add(TimePoint at, TimerKind kind, JobEpoch job);
  void AddWakeup(TimePoint at);
  std::optional<Timer> PopDue(TimePoint now);
  std::optional<TimePoint> Next() const;
  size_t size() const { return due_.size(); }

  bool TakeKill(JobId job) { return kill_sent_.insert(job).second; }
  void ClearKill(JobId job) { kill_sent_.erase(job); }

 private:
  std::multimap<TimePoint, Timer> due_;
  std::set<JobId> kill_sent_;
};

}  // namespace podsched::core
