#include "scheduler/core/host_leases.h"

#include <string>
#include <utility>

#include "common/check.h"

namespace podsched::core {

HostLeases::HostLeases(pod::Fleet fleet) : fleet_(std::move(fleet)) {}

Result<AllocationId> HostLeases::Hold(JobEpoch owner, const pod::FleetPlacement& placement) {
  if (lease_of_.contains(owner)) {
    return FailedPrecondition("job " + std::to_string(owner.job.value()) + " epoch " +
                              std::to_string(owner.epoch) + " already holds hosts");
  }
  const AllocationId alloc(next_allocation_id_);
  Status allocated = fleet_.Allocate(alloc, placement);
  if (!allocated.ok()) return std::unexpected(allocated);
  ++next_allocation_id_;
  ++version_;
  const std::vector<HostId> hosts = fleet_.HostsIn(placement);
  leases_.emplace(alloc, Lease{alloc, owner, placement, std::set<HostId>(hosts.begin(), hosts.end())});
  lease_of_.emplace(owner, alloc);
  return alloc;
}

bool HostLeases::Gone(JobEpoch owner, std::optional<HostId> host) {
  auto it = lease_of_.find(owner);
  if (it == lease_of_.end()) return false;
  Lease& lease = leases_.at(it->second);
  if (host) {
    lease.pending.erase(*host);
  } else {
    lease.pending.clear();
  }
  if (!lease.pending.empty()) return false;
  Status released = fleet_.Release(lease.allocation, lease.placement.pod);
  PODSCHED_CHECK_MSG(released.ok(), released.message().c_str());
  leases_.erase(it->second);
  lease_of_.erase(it);
  ++version_;
  return true;
}

bool HostLeases::HoldsAnyEpochOf(JobId job) const {
  auto it = lease_of_.lower_bound(JobEpoch{job, 0});
  return it != lease_of_.end() && it->first.job == job;
}

const Lease* HostLeases::LeaseOn(HostId host) const {
  if (!fleet_.Contains(host)) return nullptr;
  const auto alloc = fleet_.host(host).allocation;
  if (!alloc) return nullptr;
  return &leases_.at(*alloc);
}

void HostLeases::Reserve(JobId job, Reservation reservation) {
  reservations_[job] = std::move(reservation);
  ++reservations_version_;
  ++version_;
}

bool HostLeases::Unreserve(JobId job) {
  if (reservations_.erase(job) == 0) return false;
  ++reservations_version_;
  ++version_;
  return true;
}

Status HostLeases::MarkUnhealthy(HostId host) {
  ++version_;
  return fleet_.MarkUnhealthy(host);
}

Status HostLeases::MarkHealthy(HostId host) {
  ++version_;
  return fleet_.MarkHealthy(host);
}

const Reservation* HostLeases::ReservationOf(JobId job) const {
  auto it = reservations_.find(job);
  return it == reservations_.end() ? nullptr : &it->second;
}

}  // namespace podsched::core
