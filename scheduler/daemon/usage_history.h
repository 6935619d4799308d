// UsageHistory: the cluster's recent history for the dashboard's usage page (GET /api/v1/stats):
// the share of hosts held (all, on-demand, preemptible) sampled every `interval`, and
// preemptions counted per hour.
//
// In memory only: a restart starts it again (the job store keeps per-job events, not cluster
// samples). Bounded: the newest `capacity` samples (24 h at 10 s) and 168 hours of counts.
// Pure (takes `now`); not thread-safe (the engine's thread owns it).
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include "api.pb.h"
#include "common/clock.h"
#include "scheduler/core/scheduler.h"

namespace podsched::daemon {

class UsageHistory {
 public:
  explicit UsageHistory(Duration interval = std::chrono::seconds(10), size_t capacity = 8640)
      : interval_(interval), capacity_(capacity) {}

  // Takes a sample of `scheduler`'s pod if `interval` passed since the last one.
  void Observe(const core::Scheduler& scheduler, TimePoint now);
  // Counts a preemption (a transition to PREEMPTING) at `when`.
  void CountPreemption(TimePoint when);
  // The history, ending with the pod as it is `now`.
  api::ClusterStats ToProto(const core::Scheduler& scheduler, TimePoint now) const;

  size_t samples() const { return samples_.size(); }

 private:
  struct Sample {
    TimePoint time;
    int held_hosts = 0;
    int on_demand_hosts = 0;
    int preemptible_hosts = 0;
    int hosts = 0;
  };
  static Sample Take(const core::Scheduler& scheduler, TimePoint now);

  Duration interval_;
  size_t capacity_;
  std::deque<Sample> samples_;
  std::map<int64_t, int> preemptions_;  // hours since the epoch -> count
  TimePoint started_{};
};

}  // namespace podsched::daemon
