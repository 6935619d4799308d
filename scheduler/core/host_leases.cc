#include "scheduler/core/host_leases.h"

#include <string>
#include <utility>

#include "common/check.h"

namespace podsched::core {

HostLeases::HostLeases(pod::Fleet fleet) : fleet_(std::move(fleet)) {}

Result<AllocationId> HostLeases::Hold(JobEpoch owner,
                                      const std::vector<pod::FleetPlacement>& slices,
                                      bool evictable) {
  if (lease_of_.contains(owner)) {
    return FailedPrecondition("job " + std::to_string(owner.job.value()) + " epoch " +
                              std::to_string(owner.epoch) + " already holds hosts");
  }
  if (slices.empty()) return InvalidArgument("no placement to hold");
  std::vector<AllocationId> held;
  for (const pod::FleetPlacement& placement : slices) {
    const AllocationId alloc(next_allocation_id_);
    if (Status allocated = fleet_.Allocate(alloc, placement); !allocated.ok()) {
      for (size_t i = 0; i < held.size(); ++i) {
        PODSCHED_CHECK(fleet_.Release(held[i], slices[i].pod).ok());
      }
      return std::unexpected(allocated);
    }
    ++next_allocation_id_;
    held.push_back(alloc);
  }
  for (size_t i = 0; i < slices.size(); ++i) {
    const std::vector<HostId> hosts = fleet_.HostsIn(slices[i]);
    leases_.emplace(held[i], Lease{held[i], owner, slices[i],
                                   std::set<HostId>(hosts.begin(), hosts.end())});
    lease_of_.emplace(owner, held[i]);
  }
  Changed(/*helps_blocked=*/evictable);
  return held.front();
}

bool HostLeases::Gone(JobEpoch owner, std::optional<HostId> host) {
  auto [first, last] = lease_of_.equal_range(owner);
  if (first == last) return false;
  bool released = false;
  for (auto it = first; it != last;) {
    Lease& lease = leases_.at(it->second);
    if (host) {
      lease.pending.erase(*host);
    } else {
      lease.pending.clear();
    }
    if (!lease.pending.empty()) {
      ++it;
      continue;
    }
    Status freed = fleet_.Release(lease.allocation, lease.placement.pod);
    PODSCHED_CHECK_MSG(freed.ok(), freed.message().c_str());
    leases_.erase(it->second);
    it = lease_of_.erase(it);
    released = true;
  }
  if (released) Changed();
  return released;
}

std::vector<HostId> HostLeases::HostsOf(JobEpoch owner) const {
  std::vector<HostId> hosts;
  auto [first, last] = lease_of_.equal_range(owner);
  for (auto it = first; it != last; ++it) {
    const std::vector<HostId> slice = fleet_.HostsIn(leases_.at(it->second).placement);
    hosts.insert(hosts.end(), slice.begin(), slice.end());
  }
  return hosts;
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
  Changed();
}

bool HostLeases::Unreserve(JobId job) {
  if (reservations_.erase(job) == 0) return false;
  ++reservations_version_;
  Changed();
  return true;
}

Status HostLeases::MarkUnhealthy(HostId host) {
  Changed();  // a blocked job may wait aside now
  return fleet_.MarkUnhealthy(host);
}

Status HostLeases::MarkHealthy(HostId host) {
  Changed();
  return fleet_.MarkHealthy(host);
}

const Reservation* HostLeases::ReservationOf(JobId job) const {
  auto it = reservations_.find(job);
  return it == reservations_.end() ? nullptr : &it->second;
}

}  // namespace podsched::core
