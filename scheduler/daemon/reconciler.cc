#include "scheduler/daemon/reconciler.h"

namespace podsched::daemon {

const core::JobRecord* LiveEpoch(const core::Scheduler& scheduler, JobEpoch je) {
  const core::JobRecord* job = scheduler.Find(je.job);
  if (job == nullptr || job->epoch != je.epoch || !core::HoldsHosts(job->state) ||
      !job->placement) {
    return nullptr;
  }
  return job;
}

Reconciler::Reconciler(const core::Scheduler* scheduler)
    : scheduler_(scheduler), launched_(static_cast<size_t>(scheduler->fleet().num_hosts())) {}

void Reconciler::Start(TimePoint deadline) {
  for (JobId id : scheduler_->ActiveJobIds()) {
    const core::JobRecord& job = *scheduler_->Find(id);
    if (!core::HoldsHosts(job.state) || !job.placement) continue;
    for (HostId h : core::HostsOfJob(scheduler_->fleet(), job)) {
      launched_[static_cast<size_t>(h.value())] = JobEpoch{id, job.epoch};
      awaiting_.insert(h);
    }
  }
  if (!awaiting_.empty()) {
    reconciling_ = true;
    deadline_ = deadline;
  }
}

void Reconciler::Placed(const core::LaunchPlan& plan) {
  for (HostId h : plan.hosts) launched_[static_cast<size_t>(h.value())] = plan.job;
}

void Reconciler::Registered(const std::vector<HostId>& hosts) {
  for (HostId h : hosts) awaiting_.erase(h);
  if (reconciling_ && awaiting_.empty()) reconciling_ = false;
}

std::set<HostId> Reconciler::Expire(TimePoint now) {
  if (!reconciling_ || now < deadline_) return {};
  reconciling_ = false;
  return std::exchange(awaiting_, {});
}

std::optional<Reconciler::Missing> Reconciler::MissingOn(HostId host, const AgentReport& report) {
  std::optional<JobEpoch>& launched = launched_[static_cast<size_t>(host.value())];
  if (!launched) return std::nullopt;
  const JobEpoch je = *launched;
  ++jobs_examined_;
  if (report.accounted.contains({je, host})) return std::nullopt;
  // An epoch's placement never changes, and no other placement can be launched on a host while
  // the last one's lease holds it: the last one launched here is the only candidate.
  const core::JobRecord* job = LiveEpoch(*scheduler_, je);
  if (job == nullptr) {
    // The epoch ended (its job requeued or ended, e.g. by the launcher's verdict a moment ago)
    // but its lease still holds this host until the host reports its processes gone. They are
    // gone: release the host, or the lease lingers for ever.
    if (!scheduler_->fleet().host(host).allocation || report.running.contains(je)) {
      return std::nullopt;
    }
    launched.reset();
    return Missing{je, false};
  }
  const bool launcher = core::HostsOfJob(scheduler_->fleet(), *job).front() == host;
  if (!launcher && report.running.contains(je)) return std::nullopt;
  return Missing{je, launcher};
}

}  // namespace podsched::daemon
