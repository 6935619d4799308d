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

  void Bind(JobRecord& job, const pod::FleetPlacement& placement) override {
    s_.Bind(job, placement, now_);
  }
  void StartPreemption(JobId victim, std::string reason, JobId for_job) override {
    s_.StartPreemption(s_.jobs.at(victim), std::move(reason), for_job, now_);
  }
  void SetReason(JobRecord& job, const std::string& reason) override { s_.SetReason(job, reason); }
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
  Pass pass(
      Pass::Inputs{profile, config.min_runtime_before_preemption, hosts, side, side, &pass_views,
                   &strict_texts, &pass_heads, config.check_pass_memos},
      now);
  // FIFO: the queue's own order, in which a job that starts (or is otherwise taken out of the
  // queue) during this pass has a null ref from then on.
  const std::vector<QueueEntry>& queue =
      profile.queue_sort->Sort(queued, accounting, now, pass_order);
  // The pass touches every queued job's record, scattered in memory and visited in queue order,
  // so most of its time went to cache misses. The memory a few entries ahead is fetched while
  // this one is considered, in three steps (each reads what the one before fetched): the queue's
  // reference to the job, then the job's record, then its reason's text.
  // A job whose memo is valid is most likely skipped without reading its record.
  for (size_t i = 0; i < queue.size(); ++i) {
    if (i + 24 < queue.size()) __builtin_prefetch(queue[i + 24].ref);
    if (const QueuedRef* ahead = i + 16 < queue.size() ? queue[i + 16].ref : nullptr;
        ahead != nullptr && !ahead->memo.valid) {
      const JobRecord* job = ahead->job;
      __builtin_prefetch(job);
      __builtin_prefetch(&job->spec.zone);
      __builtin_prefetch(&job->spec.array);
      __builtin_prefetch(&job->reason);
      __builtin_prefetch(&job->not_before);
    }
    if (const QueuedRef* ahead = i + 8 < queue.size() ? queue[i + 8].ref : nullptr;
        ahead != nullptr && !ahead->memo.valid) {
      __builtin_prefetch(ahead->job->reason.data());
    }
    if (queue[i].ref != nullptr) pass.Consider(queue[i]);
  }
  stats.skipped_by_memo += pass.skipped();
}

}  // namespace podsched::core
