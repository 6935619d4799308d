// HostLeases: the hosts of the fleet and who holds them (issue 27, the first of the core's owners;
// the fleet of pods: issue 28).
//
// Holds
//   - the fleet (pod::Fleet): its pods, their hosts' health and their allocations. HostIds here
//     are the fleet's (fleet.h: a fleet of one pod numbers them as the pod does);
//   - one Lease per placed job epoch, from Hold until every host of it has reported its
//     processes gone (a lease outlives its job's epoch while processes linger: a requeued job
//     does not get its old hosts back before they are empty);
//   - the reservations: hosts promised to a waiting job while the victims it preempted stop.
//
// Promises
//   - A host is in at most one lease; Hold changes nothing when it fails.
//   - A lease's hosts are freed exactly when the last of its pending hosts is reported gone
//     (Gone), never before; Gone of an epoch that holds no lease does nothing.
//   - Allocation ids are never reused within one process.
//   - The fleet is reached only through this class.
//
// Who calls it: Scheduler::Impl (Bind and Create both Hold; reports of exits and released
// hosts call Gone; HostDown/HostUp change health) and the scheduling pass (reads the pod and the
// leases; reserves and drops reservations). It knows no jobs: which job is a lease's live owner
// is the coordinator's question (Scheduler::Impl::LiveOwner).
//
// Pure (no I/O); single-threaded, like the Scheduler that owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "pod/fleet.h"

namespace podsched::core {

// Hosts held by one slice of a placement (job, epoch) until every host of it reports its
// processes gone. A multislice job's epoch holds one lease per slice (JobSpec::slices).
struct Lease {
  AllocationId allocation;
  JobEpoch owner;
  pod::FleetPlacement placement;
  std::set<HostId> pending;  // hosts that have not reported the processes gone
};

// Hosts promised to a waiting job while its preemption victims stop.
struct Reservation {
  pod::FleetPlacement placement;
  std::vector<JobId> victims;
  // A multislice job's other slices (JobSpec::slices), free ones among them: all are kept.
  std::vector<pod::FleetPlacement> more_slices;
  // Every slice: placement, then more_slices.
  std::vector<pod::FleetPlacement> Slices() const {
    std::vector<pod::FleetPlacement> all{placement};
    all.insert(all.end(), more_slices.begin(), more_slices.end());
    return all;
  }
};

class HostLeases {
 public:
  explicit HostLeases(pod::Fleet fleet);

  const pod::Fleet& fleet() const { return fleet_; }

  // Allocates `slices` (one or more placements: a multislice job's) to `owner` (one job epoch),
  // a lease each, every host pending; returns the first lease's id. All or nothing: fails,
  // changing nothing, when a host is outside the fleet, unhealthy, draining or held (by another
  // job or by another of the slices), when `slices` is empty, or when `owner` already holds a
  // lease. `evictable`: whether another job may evict the owner (a preemptible job); false only
  // takes hosts away from the others (blocked_version below).
  Result<AllocationId> Hold(JobEpoch owner, const std::vector<pod::FleetPlacement>& slices,
                            bool evictable = true);
  Result<AllocationId> Hold(JobEpoch owner, const pod::FleetPlacement& placement,
                            bool evictable = true) {
    return Hold(owner, std::vector<pod::FleetPlacement>{placement}, evictable);
  }
  // `host` of `owner`'s leases (every host when nullopt) reported its processes gone. A lease
  // whose last host that was is released and its hosts are free; returns whether one was.
  bool Gone(JobEpoch owner, std::optional<HostId> host);
  // The hosts of every lease `owner` holds (every slice of a multislice job), in lease order.
  std::vector<HostId> HostsOf(JobEpoch owner) const;
  // Whether any epoch of `job` still holds a lease (an ended job's lingering processes).
  bool HoldsAnyEpochOf(JobId job) const;
  // The lease `host` is allocated to, or nullptr.
  const Lease* LeaseOn(HostId host) const;
  const std::map<AllocationId, Lease>& leases() const { return leases_; }

  // Host health (the fleet's own checks: the host must exist).
  Status MarkUnhealthy(HostId host);
  Status MarkHealthy(HostId host);

  // Reservations, by waiting job. Reserve replaces the job's earlier one; Unreserve returns
  // whether there was one.
  void Reserve(JobId job, Reservation reservation);
  bool Unreserve(JobId job);
  const Reservation* ReservationOf(JobId job) const;
  const std::map<JobId, Reservation>& reservations() const { return reservations_; }
  // Changes whenever a reservation is made, replaced or dropped (what a pass's memo of a job's
  // quota reason depends on: the cores reserved for the user's other jobs).
  uint64_t reservations_version() const { return reservations_version_; }
  // Changes whenever what a pass can find changes: a lease held or released, a host's health, a
  // reservation. A pass's memo of a job that found no room and no victims stays true while it
  // does not change (QueuedRef::Memo::kBlocked).
  uint64_t version() const { return version_; }
  // Changes with version(), except for a lease held by a job no other job may evict: that takes
  // hosts away and offers no victim, so a job that found no room and no victims finds none still,
  // with the same reason. Its memo (QueuedRef::Memo::kBlocked, kAside) stays true while this
  // does not change: after an on-demand job starts, the blocked jobs are not judged again.
  uint64_t blocked_version() const { return blocked_version_; }

 private:
  // Every change of what a pass can find; `helps_blocked` false only for a lease that takes
  // hosts away and offers no victim (blocked_version).
  void Changed(bool helps_blocked = true) {
    ++version_;
    if (helps_blocked) ++blocked_version_;
  }

  pod::Fleet fleet_;
  std::map<AllocationId, Lease> leases_;
  std::multimap<JobEpoch, AllocationId> lease_of_;  // one per slice
  std::map<JobId, Reservation> reservations_;
  uint64_t reservations_version_ = 0;
  uint64_t version_ = 0;
  uint64_t blocked_version_ = 0;
  int64_t next_allocation_id_ = 1;
};

}  // namespace podsched::core
