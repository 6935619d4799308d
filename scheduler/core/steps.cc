#include "scheduler/core/steps.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace podsched::core {
namespace {

void SortEntries(std::vector<QueueEntry>& queue) {
  std::sort(queue.begin(), queue.end(), [](const QueueEntry& a, const QueueEntry& b) {
    return std::tie(b.effective_priority, a.usage, a.submit, a.id) <
           std::tie(a.effective_priority, b.usage, b.submit, b.id);
  });
}

}  // namespace

const std::vector<QueueEntry>& FifoSort::Sort(JobQueue& queued, const Accounting&, TimePoint,
                                              std::vector<QueueEntry>&) const {
  return queued.InSubmitOrder();
}

const std::vector<QueueEntry>& FairShareSort::Sort(JobQueue& queued, const Accounting& accounting,
                                                   TimePoint now,
                                                   std::vector<QueueEntry>& storage) const {
  std::unordered_map<const UserRecord*, double> usage;  // fair-share key per user, once a pass
  storage = queued.InSubmitOrder();
  for (QueueEntry& e : storage) {
    const QueuedRef& ref = *e.ref;
    const JobRecord& job = *ref.job;
    const int64_t waited = (now - job.submit_time) / aging_step_;
    e.effective_priority =
        job.spec.priority + static_cast<int>(std::min<int64_t>(waited, max_aging_bonus_));
    auto [known, fresh] = usage.try_emplace(ref.user, 0.0);
    if (fresh) known->second = accounting.UsageNow(ref.user->name, now);
    e.usage = known->second;
  }
  SortEntries(storage);
  return storage;
}

std::optional<VictimChoice> LeastLostWork::Choose(
    const pod::Pod& view, pod::SliceShape shape,
    const std::map<AllocationId, VictimCandidate>& candidates) const {
  return ChooseVictims(view, shape, candidates);
}

Permit::Decision StrictOrder::OnBlocked(
    const std::vector<pod::Pod>&, const std::vector<int>&, const pod::AcceleratorType&,
    const pod::PlacementPolicy&, const std::function<std::vector<ExpectedRelease>()>&) const {
  // The same text whichever job blocks, so that a new head does not rewrite every row.
  return {"waiting for earlier jobs to start (FIFO order)", std::nullopt};
}

Permit::Decision EasyBackfill::OnBlocked(
    const std::vector<pod::Pod>& views, const std::vector<int>& candidates,
    const pod::AcceleratorType& type, const pod::PlacementPolicy& score,
    const std::function<std::vector<ExpectedRelease>()>& releases) const {
  const std::vector<ExpectedRelease> all = releases();
  Decision d;
  for (int i : candidates) {
    std::vector<ExpectedRelease> here;
    for (const ExpectedRelease& r : all) {
      if (r.pod == i) here.push_back(r);
    }
    Shadow s = ComputeShadow(views[static_cast<size_t>(i)], type, score, std::move(here));
    // The earliest start; an unknown start (max) only when no pod has a known one, and then
    // still a placement to keep free.
    const bool better = !d.head || s.start < d.head->start ||
                        (s.start == d.head->start && !d.head->placement && s.placement);
    if (better) {
      d.head = std::move(s);
      d.head_pod = i;
    }
  }
  return d;
}

}  // namespace podsched::core
