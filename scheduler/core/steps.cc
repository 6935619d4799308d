#include "scheduler/core/steps.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <tuple>

#include "common/check.h"

namespace podsched::core {
namespace {

// min(waited / step, max) with waited = now - submit, for submit times that mostly come in
// ascending order: the bonus holds over a range of submit times, kept from the last division.
class AgingBonus {
 public:
  AgingBonus(TimePoint now, Duration step, int max) : now_(now), step_(step), max_(max) {}
  int Of(TimePoint submit) {
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

 private:
  const TimePoint now_;
  const Duration step_;
  const int max_;
  bool known_ = false;
  TimePoint lo_{}, hi_{};
  int bonus_ = 0;
};

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
  // The queue comes in submit order, and the key's first two parts take few values: effective
  // priorities span a small range, and every job of a user has the user's usage. So the order is
  // a stable bucket sort by (effective priority, usage), each bucket in submit order: O(queue)
  // instead of a comparison sort, which was most of a pass over 10,000 queued jobs that nothing
  // had changed for (issue 29). The comparison sort remains for wide ranges of priority.
  const std::vector<QueueEntry>& in = queued.InSubmitOrder();
  struct UserKey {
    double usage;
    uint32_t rank;  // among the distinct usages of this pass, lowest first
  };
  constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> slot_of_user(accounting.UserNumbers(), kNoSlot);  // in `users`
  std::vector<UserKey> users;
  std::vector<int> priority(in.size());
  std::vector<uint32_t> slot(in.size());
  int lowest = std::numeric_limits<int>::max();
  int highest = std::numeric_limits<int>::min();
  // The aging bonus, min(waited / aging_step_, max_aging_bonus_), by division only where it
  // changes: the entries come in submit order, so it only falls along the queue, and a 64-bit
  // division per queued job was a tenth of a pass over 10,000 of them.
  AgingBonus aging(now, aging_step_, max_aging_bonus_);
  for (size_t i = 0; i < in.size(); ++i) {
    // The job's own priority and user number, copied into the entry (not read through its ref).
    const QueueEntry& e = in[i];
    priority[i] = e.effective_priority + aging.Of(e.submit);
    lowest = std::min(lowest, priority[i]);
    highest = std::max(highest, priority[i]);
    // Numbers come from this accounting (Scheduler::Impl::Enqueue), all below UserNumbers().
    PODSCHED_CHECK(e.user_number < slot_of_user.size());
    uint32_t& user_slot = slot_of_user[e.user_number];
    if (user_slot == kNoSlot) {
      user_slot = static_cast<uint32_t>(users.size());
      users.push_back({accounting.UsageNow(e.user_number, now), 0});
    }
    slot[i] = user_slot;
  }
  std::vector<uint32_t> by_usage(users.size());
  for (uint32_t u = 0; u < by_usage.size(); ++u) by_usage[u] = u;
  std::sort(by_usage.begin(), by_usage.end(),
            [&](uint32_t a, uint32_t b) { return users[a].usage < users[b].usage; });
  uint32_t ranks = 0;
  for (size_t k = 0; k < by_usage.size(); ++k) {
    if (k > 0 && users[by_usage[k]].usage != users[by_usage[k - 1]].usage) ++ranks;
    users[by_usage[k]].rank = ranks;
  }
  ranks += by_usage.empty() ? 0 : 1;
  // Copies entry i to `out` and sets its fair-share key there. (Made on the stack and copied, the
  // entry was read back in pieces other than those just written, which stalled the copy: most
  // of the sort's time in perf.)
  const auto write = [&](size_t i, QueueEntry& out) {
    out = in[i];
    out.effective_priority = priority[i];
    out.usage = users[slot[i]].usage;
  };
  const uint64_t buckets =
      in.empty() ? 0 : (static_cast<uint64_t>(highest - lowest) + 1) * ranks;
  if (buckets > 4 * in.size() + 1024) {
    storage.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) write(i, storage[i]);
    SortEntries(storage);
    return storage;
  }
  // Bucket (highest - priority) * ranks + rank: higher priority first, then lower usage. Each
  // job's is kept (in `bucket`) between counting and placing.
  std::vector<uint32_t> next(static_cast<size_t>(buckets) + 1, 0);
  std::vector<uint32_t> bucket(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    bucket[i] = static_cast<uint32_t>(static_cast<uint64_t>(highest - priority[i]) * ranks +
                                      users[slot[i]].rank);
    ++next[bucket[i] + 1];
  }
  for (size_t b = 1; b < next.size(); ++b) next[b] += next[b - 1];
  storage.resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) write(i, storage[next[bucket[i]]++]);
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
