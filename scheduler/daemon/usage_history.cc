#include "scheduler/daemon/usage_history.h"

#include <algorithm>

#include "scheduler/daemon/convert.h"

namespace podsched::daemon {
namespace {

constexpr int64_t kHoursKept = 168;

int64_t HourOf(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::hours>(t.time_since_epoch()).count();
}

}  // namespace

UsageHistory::Sample UsageHistory::Take(const core::Scheduler& scheduler, TimePoint now) {
  Sample s{now};
  s.hosts = scheduler.fleet().num_hosts();
  for (JobId id : scheduler.ActiveJobIds()) {
    const core::JobRecord& job = *scheduler.Find(id);
    if (!core::HoldsHosts(job.state) || !job.placement) continue;
    // Every slice of a multislice job holds as many hosts as the first.
    (job.spec.preemptible ? s.preemptible_hosts : s.on_demand_hosts) +=
        job.placement->rect.shape.hosts() * (1 + static_cast<int>(job.more_slices.size()));
  }
  s.held_hosts = s.on_demand_hosts + s.preemptible_hosts;
  return s;
}

void UsageHistory::Observe(const core::Scheduler& scheduler, TimePoint now) {
  if (started_ == TimePoint{}) started_ = now;
  if (!samples_.empty() && now - samples_.back().time < interval_) return;
  samples_.push_back(Take(scheduler, now));
  while (samples_.size() > capacity_) samples_.pop_front();
}

void UsageHistory::CountPreemption(TimePoint when) {
  ++preemptions_[HourOf(when)];
  while (!preemptions_.empty() && preemptions_.begin()->first <= HourOf(when) - kHoursKept) {
    preemptions_.erase(preemptions_.begin());
  }
}

api::ClusterStats UsageHistory::ToProto(const core::Scheduler& scheduler, TimePoint now) const {
  api::ClusterStats out;
  out.set_since(Rfc3339(started_ == TimePoint{} ? now : started_));
  auto add = [&](const Sample& s) {
    auto* p = out.add_utilization();
    p->set_time(Rfc3339(s.time));
    p->set_utilization(s.hosts ? static_cast<double>(s.held_hosts) / s.hosts : 0);
    p->set_on_demand_hosts(s.on_demand_hosts);
    p->set_preemptible_hosts(s.preemptible_hosts);
    p->set_hosts(s.hosts);
  };
  for (const auto& s : samples_) add(s);
  add(Take(scheduler, now));  // the last point is always the pod as it is
  for (const auto& [hour, count] : preemptions_) {
    auto* h = out.add_preemptions_per_hour();
    h->set_hour(Rfc3339(TimePoint(std::chrono::hours(hour))));
    h->set_count(count);
  }
  return out;
}

}  // namespace podsched::daemon
