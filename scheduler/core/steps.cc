#include "scheduler/core/steps.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <tuple>

#include "common/check.h"

namespace podsched::core {

int AgingBonus::Of(TimePoint submit) {
  if (known_ && submit > lo_ && submit <= hi_) return bonus_;
  const Duration waited = now_ - submit;
  const int64_t steps = waited / step_;
  bonus_ = static_cast<int>(std::min<int64_t>(steps, max_));
  // The submit times with this same bonus, (lo_, hi_]; not below 0 waited, where the division
  // truncates towards zero. Capped: every earlier submit time.
  known_ = waited >= Duration::zero() && max_ >= 0;
  if (known_) {
    hi_ = now_ - std::min<int64_t>(steps, max_) * step_;
    lo_ = steps < max_ ? now_ - (steps + 1) * step_ : TimePoint::min();
  }
  return bonus_;
}

bool FairShareWalk::Precedes(const Head& a, const Head& b) {
  // Higher effective priority first, then lower usage, then earlier submission, then lower id.
  return std::tie(b.priority, a.usage, a.submit, a.id) <
         std::tie(a.priority, b.usage, b.submit, b.id);
}

FairShareWalk::FairShareWalk(std::vector<QueueRun>& runs, const Accounting& accounting,
                             TimePoint now, Duration aging_step, int max_aging_bonus)
    : runs_(runs), aging_(now, aging_step, max_aging_bonus), usage_(runs.size(), 0.0) {
  std::vector<std::optional<double>> usage_of_user(accounting.UserNumbers());
  for (uint32_t r = 0; r < runs_.size(); ++r) {
    if (runs_[r].entries.empty()) continue;
    // Numbers come from this accounting (Scheduler::Impl::Enqueue), all below UserNumbers().
    const uint32_t user = runs_[r].user_number;
    PODSCHED_CHECK(user < usage_of_user.size());
    if (!usage_of_user[user]) usage_of_user[user] = accounting.UsageNow(user, now);
    usage_[r] = *usage_of_user[user];
    if (std::optional<Head> head = HeadAt(r, 0)) heap_.push_back(*head);
  }
  std::make_heap(heap_.begin(), heap_.end(), Later);
}

std::optional<FairShareWalk::Head> FairShareWalk::HeadAt(uint32_t run, size_t pos) {
  const std::vector<QueueEntry>& entries = runs_[run].entries;
  while (pos < entries.size() && entries[pos].ref == nullptr) ++pos;  // left the queue
  if (pos == entries.size()) return std::nullopt;
  const QueueEntry& e = entries[pos];
  return Head{e.effective_priority + aging_.Of(e.submit),
              usage_[run],
              e.submit,
              e.id,
              run,
              static_cast<uint32_t>(pos)};
}

const QueueEntry* FairShareWalk::Next() {
  if (current_) {
    std::optional<Head> next = HeadAt(current_->run, current_->pos + 1);
    current_.reset();
    if (next) {
      // Before every other run's next job: next in the order, without the heap.
      if (heap_.empty() || Precedes(*next, heap_.front())) return Take(*next);
      heap_.push_back(*next);
      std::push_heap(heap_.begin(), heap_.end(), Later);
    }
  }
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Head top = heap_.back();
    heap_.pop_back();
    if (runs_[top.run].entries[top.pos].ref != nullptr) return Take(top);
    // Its job left the queue since (a pass started it): the run's next one in its place.
    if (std::optional<Head> next = HeadAt(top.run, top.pos + 1)) {
      heap_.push_back(*next);
      std::push_heap(heap_.begin(), heap_.end(), Later);
    }
  }
  return nullptr;
}

const QueueEntry* FairShareWalk::Take(const Head& head) {
  current_ = head;
  out_ = runs_[head.run].entries[head.pos];
  out_.effective_priority = head.priority;
  out_.usage = head.usage;
  return &out_;
}

FairShareWalk FairShareSort::Walk(JobQueue& queued, const Accounting& accounting,
                                  TimePoint now) const {
  return FairShareWalk(queued.Runs(), accounting, now, aging_step_, max_aging_bonus_);
}

const std::vector<QueueEntry>& FifoSort::Sort(JobQueue& queued, const Accounting&, TimePoint,
                                              std::vector<QueueEntry>&) const {
  return queued.InSubmitOrder();
}

const std::vector<QueueEntry>& FairShareSort::Sort(JobQueue& queued, const Accounting& accounting,
                                                   TimePoint now,
                                                   std::vector<QueueEntry>& storage) const {
  // The walk a pass makes (Walk), written out: one way to make the order.
  storage.clear();
  FairShareWalk walk = Walk(queued, accounting, now);
  while (const QueueEntry* entry = walk.Next()) storage.push_back(*entry);
  return storage;
}

std::optional<VictimChoice> LeastLostWork::Choose(const pod::Pod& view, pod::SliceShape shape,
                                                  const VictimCandidates& candidates) const {
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
  Decision d;
  if (candidates.empty()) return d;
  // Each pod's releases, one span of `by_pod` per pod (a counting sort: a fleet of many small
  // pods would otherwise scan every release for each candidate).
  const std::vector<ExpectedRelease> all = releases();
  std::vector<size_t> begin(views.size() + 1, 0);
  for (const ExpectedRelease& r : all) ++begin[static_cast<size_t>(r.pod) + 1];
  for (size_t i = 1; i < begin.size(); ++i) begin[i] += begin[i - 1];
  std::vector<ExpectedRelease> by_pod(all.size());
  std::vector<size_t> next(begin.begin(), begin.end() - 1);
  for (const ExpectedRelease& r : all) by_pod[next[static_cast<size_t>(r.pod)]++] = r;
  const auto releases_of = [&](int pod) {
    const auto i = static_cast<size_t>(pod);
    return std::span<const ExpectedRelease>(by_pod.data() + begin[i], begin[i + 1] - begin[i]);
  };
  // The earliest start over the candidate pods (ties: the first in fleet order); an unknown start
  // (max) only when no pod has a known one, and then still a placement to keep free. Only the
  // chosen pod's placement is asked of the policy.
  std::optional<TimePoint> best;
  d.head_pod = candidates.front();
  for (int i : candidates) {
    const std::optional<TimePoint> start =
        EarliestStart(views[static_cast<size_t>(i)], type, releases_of(i));
    if (start && (!best || *start < *best)) {
      best = start;
      d.head_pod = i;
    }
  }
  d.head = best ? Shadow{*best, PlaceAt(views[static_cast<size_t>(d.head_pod)], type, score,
                                        releases_of(d.head_pod), *best)}
                : Shadow{};
  return d;
}

}  // namespace podsched::core
