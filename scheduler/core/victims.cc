#include "scheduler/core/victims.h"

#include <algorithm>
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
  std::vector<AllocationId> hit;  // the allocations in a position, each once, in id order
  for (const pod::Placement& p : pod::LegalPlacementsIfReleased(pod, shape, released)) {
    hit.clear();
    for (int r = p.origin.row; r < p.origin.row + p.shape.rows; ++r) {
      for (int c = p.origin.col; c < p.origin.col + p.shape.cols; ++c) {
        if (const auto& a = pod.host(pod.HostAt({r, c})).allocation) hit.push_back(*a);
      }
    }
    if (hit.empty()) continue;  // free already: not a preemption (the caller placed otherwise)
    std::sort(hit.begin(), hit.end());
    hit.erase(std::unique(hit.begin(), hit.end()), hit.end());
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

namespace {

// When a host becomes available, as one number ordered by when: at `at` (TimePoint::min(): now)
// below never (unhealthy, draining, or held by an allocation without a release), so that the
// latest of a rectangle's hosts is its max. 128 bits: every 64-bit time is a valid release
// (TimePoint::max(): held with no expected end, which still differs from never).
using HostReady = unsigned __int128;
constexpr HostReady kNever = static_cast<HostReady>(1) << 64;

HostReady ReadyAt(TimePoint at) {
  // The signed count to an unsigned one of the same order.
  return static_cast<uint64_t>(at.time_since_epoch().count()) ^ (uint64_t{1} << 63);
}

TimePoint TimeOf(HostReady ready) {
  const uint64_t bits = static_cast<uint64_t>(ready) ^ (uint64_t{1} << 63);
  return TimePoint(TimePoint::duration(static_cast<TimePoint::rep>(bits)));
}

}  // namespace

std::optional<TimePoint> EarliestStart(const pod::Pod& pod, const pod::AcceleratorType& type,
                                       std::span<const ExpectedRelease> releases) {
  if (releases.empty()) return std::nullopt;
  TimePoint first = TimePoint::max();
  for (const ExpectedRelease& r : releases) first = std::min(first, r.at);
  const int rows = pod.host_rows(), cols = pod.host_cols();
  const std::vector<pod::HostStatus>& hosts = pod.hosts_status();
  std::vector<HostReady> ready(hosts.size());
  const HostReady now = ReadyAt(TimePoint::min());
  for (size_t h = 0; h < hosts.size(); ++h) ready[h] = hosts[h].available() ? now : kNever;
  for (const ExpectedRelease& r : releases) {
    const pod::Placement* p = pod.allocations().Find(r.allocation);
    if (p == nullptr) continue;
    const HostReady at = ReadyAt(r.at);
    for (int row = p->origin.row; row < p->origin.row + p->shape.rows; ++row) {
      for (int col = p->origin.col; col < p->origin.col + p->shape.cols; ++col) {
        const auto h = static_cast<size_t>(row * cols + col);  // Pod::HostAt
        // Released, an unhealthy or draining host stays unavailable.
        if (hosts[h].healthy && !hosts[h].draining) ready[h] = at;
      }
    }
  }
  // The earliest over every legal position (both orientations, any origin: Pod::LegalPlacements)
  // of the latest host in it; a position stops being read once it cannot beat the best.
  HostReady best = kNever + 1;  // above every position's latest: none seen yet
  const pod::SliceShape shape = type.shape();
  const pod::SliceShape rotated = shape.Rotated();
  const bool square = shape.rows == shape.cols;
  for (int orientation = 0; orientation < (square ? 1 : 2); ++orientation) {
    const pod::SliceShape s = orientation == 0 ? shape : rotated;
    for (int r0 = 0; r0 + s.rows <= rows; ++r0) {
      for (int c0 = 0; c0 + s.cols <= cols; ++c0) {
        HostReady latest = 0;
        bool beaten = false;
        for (int r = r0; r < r0 + s.rows && !beaten; ++r) {
          const HostReady* row = &ready[static_cast<size_t>(r * cols)];
          for (int c = c0; c < c0 + s.cols; ++c) {
            latest = std::max(latest, row[c]);
            if (latest >= best) {
              beaten = true;
              break;
            }
          }
        }
        if (!beaten) best = latest;
      }
    }
  }
  if (best >= kNever) return std::nullopt;  // no position, or none that is ever free
  return std::max(TimeOf(best), first);
}

pod::Placement PlaceAt(const pod::Pod& pod, const pod::AcceleratorType& type,
                       const pod::PlacementPolicy& policy,
                       std::span<const ExpectedRelease> releases, TimePoint start) {
  pod::Pod trial = pod;
  for (const ExpectedRelease& r : releases) {
    if (r.at <= start) (void)trial.Release(r.allocation);
  }
  std::optional<pod::Placement> p = policy.Choose(trial, type);
  // EarliestStart found a legal position by then, and a policy chooses whenever there is one.
  PODSCHED_CHECK(p.has_value());
  return *p;
}

}  // namespace podsched::core
