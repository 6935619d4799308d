// Reconciler: what an agent's Register means for the placements the scheduler believes hold its
// hosts, and the reconcile window after a podsched restart (docs/bus.md "Reconcile after a
// scheduler restart").
//
// Cost is per agent, not per job ever submitted: the reconciler keeps, for every host, the
// placement (job, epoch) launched there last (from the jobs holding hosts at Start, then from
// every LaunchPlan), so a Register looks at the placements of its own hosts only. Start is the
// only walk over all jobs.
//
// It decides; the caller (BusLogic) makes the core calls. Pure; not thread-safe (the scheduler
// thread owns it). `scheduler` must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "scheduler/core/scheduler.h"

namespace podsched::daemon {

// The job if `je` is its current epoch and it holds hosts; else nullptr.
const core::JobRecord* LiveEpoch(const core::Scheduler& scheduler, JobEpoch je);

class Reconciler {
 public:
  explicit Reconciler(const core::Scheduler* scheduler);

  // Once, after the scheduler loaded: indexes the jobs holding hosts and, if any do, opens the
  // window until `deadline`.
  void Start(TimePoint deadline);
  // A placement the core bound. Every LaunchPlan the core emits must pass here.
  void Placed(const core::LaunchPlan& plan);

  // True until every allocated host's agent has registered or the deadline has passed (the
  // caller runs no scheduling pass meanwhile).
  bool reconciling() const { return reconciling_; }
  // During the window: `host` is allocated and its agent has not registered yet (it waits for
  // the agent instead of failing its job).
  bool Awaiting(HostId host) const { return reconciling_ && awaiting_.contains(host); }
  // The agent of `hosts` registered; the window closes when no host waits any more.
  void Registered(const std::vector<HostId>& hosts);
  // At or after the deadline: closes the window and returns the hosts whose agent never came.
  std::set<HostId> Expire(TimePoint now);

  // What a registering agent reports about its processes.
  struct AgentReport {
    std::set<std::pair<JobEpoch, HostId>> accounted;  // running there, or an unacked exit
    std::set<JobEpoch> running;                       // running on any of its hosts
  };
  struct Missing {
    JobEpoch job;
    bool launcher = false;  // the host runs mpirun: its verdict decides the job's fate
  };
  // The placement on `host` if the agent's report neither runs nor exited it there: its
  // processes are gone (the agent or the scheduler restarted). For a live epoch, the launcher's
  // host gives the job's verdict (`launcher`); a host other than the launcher is released, but
  // not while the agent runs the epoch elsewhere (its part may not have started yet). An epoch
  // that has ended but whose lease still holds the host (a lingering lease) is released. Reads
  // the core's current state: call it after applying the previous host's verdict.
  std::optional<Missing> MissingOn(HostId host, const AgentReport& report);

  // Jobs looked up in the core by MissingOn so far (at most one per host asked about).
  int64_t jobs_examined() const { return jobs_examined_; }

 private:
  const core::Scheduler* scheduler_;
  std::vector<std::optional<JobEpoch>> launched_;  // by HostId: the last placement launched there
  bool reconciling_ = false;
  TimePoint deadline_{};
  std::set<HostId> awaiting_;  // allocated hosts not yet registered
  int64_t jobs_examined_ = 0;
};

}  // namespace podsched::daemon
