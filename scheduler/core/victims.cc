#include "scheduler/core/victims.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "common/check.h"
#include "pod/what_if.h"

namespace podsched::core {

std::optional<VictimChoice> ChooseVictims(const pod::Pod& pod, pod::SliceShape shape,
                                          const VictimCandidates& candidates) {
  if (candidates.empty()) return std::nullopt;
  std::optional<VictimChoice> best;
  std::vector<AllocationId> released;
  released.reserve(candidates.size());
  for (const auto& [alloc, candidate] : candidates) released.push_back(alloc);
  for (const pod::Placement& p : pod::LegalPlacementsIfReleased(pod, shape, released)) {
    std::set<AllocationId> hit;
    for (HostId h : pod.HostsIn(p)) {
      if (const auto& a = pod.host(h).allocation) hit.insert(*a);
    }
    if (hit.empty()) continue;  // free already: not a preemption (the caller placed otherwise)
    VictimChoice choice{p, {}, 0, 0};
    for (AllocationId a : hit) {
      const VictimCandidate& c = candidates.at(a);
      // A multislice job may hold several of the allocations: counted once. (A handful of
      // victims: a scan, not a set.)
      if (std::find(choice.victims.begin(), choice.victims.end(), c.job) != choice.victims.end()) {
        continue;
      }
      choice.victims.push_back(c.job);
      choice.lost_core_seconds += c.lost_core_seconds;
      choice.cores += c.cores;
    }
    if (!best || std::tie(choice.lost_core_seconds, choice.cores) <
                     std::tie(best->lost_core_seconds, best->cores)) {
      best = std::move(choice);
    }
  }
  if (best) std::sort(best->victims.begin(), best->victims.end());
  return best;
}

std::optional<VictimChoice> ChooseMoves(const pod::Pod& pod, const pod::AcceleratorType& type,
                                        const pod::PlacementPolicy& policy,
                                        const VictimCandidates& movable) {
  if (movable.empty()) return std::nullopt;
  pod::Pod without = pod;
  for (const auto& [alloc, candidate] : movable) (void)without.Release(alloc);
  const std::optional<pod::Placement> p = policy.Choose(without, type);
  if (!p) return std::nullopt;
  VictimChoice choice{*p, {}, 0, 0};
  std::vector<AllocationId> seen;
  for (HostId h : pod.HostsIn(*p)) {
    const auto& a = pod.host(h).allocation;
    if (!a || std::find(seen.begin(), seen.end(), *a) != seen.end()) continue;
    seen.push_back(*a);
    const VictimCandidate& c = movable.at(*a);  // what stayed allocated is not in the way
    if (std::find(choice.victims.begin(), choice.victims.end(), c.job) != choice.victims.end()) {
      continue;  // a multislice job's other slice: counted once
    }
    choice.victims.push_back(c.job);
    choice.lost_core_seconds += c.lost_core_seconds;
    choice.cores += c.cores;
  }
  if (choice.victims.empty()) return std::nullopt;
  std::sort(choice.victims.begin(), choice.victims.end());
  return choice;
}

Shadow ComputeShadow(const pod::Pod& pod, const pod::AcceleratorType& type,
                     const pod::PlacementPolicy& policy,
                     std::span<const ExpectedRelease> releases) {
  PODSCHED_CHECK(std::is_sorted(releases.begin(), releases.end(), ReleasedBefore));
  pod::Pod trial = pod;
  for (size_t i = 0; i < releases.size();) {
    // Release every allocation that ends at the same time before asking.
    const TimePoint at = releases[i].at;
    for (; i < releases.size() && releases[i].at == at; ++i) {
      (void)trial.Release(releases[i].allocation);
    }
    if (auto p = policy.Choose(trial, type)) return Shadow{at, *p};
  }
  return Shadow{};
}

}  // namespace podsched::core
