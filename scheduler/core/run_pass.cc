// Scheduler::Impl's side of the scheduling pass: what the Pass (cycle.h) may read of the jobs
// and change through its Binder, and one pass over the queue.
#include <optional>
#include <string>

#include "scheduler/core/cycle.h"
#include "scheduler/core/scheduler_impl.h"

namespace podsched::core {
namespace {

class ImplPassSide final : public PassJobs, public Binder {
 public:
  ImplPassSide(Scheduler::Impl& s, TimePoint now) : s_(s), now_(now) {}

  const JobRecord* Find(JobId job) const override { return s_.jobs.Find(job); }
  int Cores(JobId job) const override { return s_.Cores(job); }
  const JobRecord* LiveOwner(const Lease& lease) const override { return s_.LiveOwner(lease); }
  // Settled when a target changes (ResolveDependencies), so this is a lookup.
  std::optional<std::string> HeldBack(const JobRecord& job) const override {
    return s_.arrays_deps.HeldBack(job);
  }

  void Bind(JobRecord& job, const std::vector<pod::FleetPlacement>& slices) override {
    s_.Bind(job, slices, now_);
  }
  void StartPreemption(JobId victim, std::string reason, JobId for_job) override {
    s_.StartPreemption(s_.jobs.at(victim), std::move(reason), for_job, now_);
  }
  void SetReason(JobRecord& job, SharedText reason) override {
    s_.SetReason(job, std::move(reason));
  }
  void Tell(QueuedRef& ref, SharedText reason, uint32_t number) override {
    s_.Retell(*ref.job, std::move(reason));
    ref.told = number;
  }
  void WakeAt(TimePoint at) override { s_.timers.AddWakeup(at); }
  void PassAgain() override { s_.dirty = true; }

 private:
  Scheduler::Impl& s_;
  const TimePoint now_;
};

}  // namespace

void Scheduler::Impl::RunPass(TimePoint now) {
  ++stats.passes;
  ResolveDependencies(now);  // may cancel jobs: before the queue is sorted
  dirty = false;
  ImplPassSide side(*this, now);
  Pass pass(Pass::Inputs{profile, config.min_runtime_before_preemption, hosts, side, side,
                         &pass_views, &pass_head_views, &pass_heads, &reason_texts,
                         config.check_pass_memos, defrag_budget ? &*defrag_budget : nullptr,
                         // Groups are stamped with blocked memos, which only a backfill head
                         // gives; strict order's tail reads the memos of jobs it skips.
                         profile.permit->Backfills() ? &queued : nullptr},
            now);
  // FIFO: the queue's own order, in which a job that starts (or is otherwise taken out of the
  // queue) during this pass has a null ref from then on (Pass::ConsiderQueue skips it).
  const std::vector<QueueEntry>& queue =
      profile.queue_sort->Sort(queued, accounting, now, pass_order);
  // Taken every pass (StrictTail reads them when the queue is in submission order).
  const std::vector<QueueKey> changed = queued.TakeChanged();
  pass.ConsiderQueue(queue, profile.queue_sort->InSubmitOrder() ? &strict_tail : nullptr,
                     changed);
  stats.skipped_by_memo += pass.skipped();
  stats.skipped_unread += pass.skipped_unread();
  stats.told_known += pass.told_known();
  stats.defrag_moves += pass.defrag_moves();
  stats.defrag_lost_core_seconds += pass.defrag_lost_core_seconds();
}

}  // namespace podsched::core
