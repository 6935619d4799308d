// BufferingRepository: the daemon's group commit, between the scheduler core and the job store.
//
// The core commits every call's changes (Commit). In deferred mode Commit only queues the batch,
// and Flush writes every queued batch in ONE transaction (`commit_all`, e.g.
// SqliteJobRepository::CommitAll), so one fsync covers a whole burst of requests. The daemon holds
// the responses of those requests until Flush succeeded, so nothing is acknowledged before it is
// durable. A failed Flush is fatal like a failed Commit, and it stays failed: every later Flush
// (and deferred Commit) returns the same error, so a flush that fails inside EventsOf cannot be
// followed by a Flush that reports success for the batches it lost. Without deferred mode each
// Commit goes straight to the inner repository.
//
// It also remembers the events of every successful commit until TakeEvents (for the streams and
// the metrics), and the job rows and reason updates until TakeCommittedJobs (for the read
// snapshot, job_snapshot.h).
//
// This is not jobdb::GroupCommitter (store/jobdb/group_committer.h): that one serves committers
// on many threads with a writer thread of its own; here one thread (the scheduler thread) both
// commits and flushes, and decides when to flush.
//
// Not thread-safe (single owner).
#pragma once

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "common/status.h"
#include "scheduler/core/repository.h"

namespace podsched::daemon {

class BufferingRepository final : public core::JobRepository {
 public:
  using CommitAll = std::function<Status(std::span<const core::StoreBatch* const>)>;
  // `inner` must outlive this. `commit_all` empty: Flush commits the batches one by one.
  BufferingRepository(core::JobRepository* inner, CommitAll commit_all)
      : inner_(inner), commit_all_(std::move(commit_all)) {}
  Result<core::StoredState> Load() override { return inner_->Load(); }
  Result<core::StoredState> LoadEndedSince(TimePoint ended_since) override {
    return inner_->LoadEndedSince(ended_since);
  }
  // Flushes first, as EventsOf.
  Result<std::vector<core::JobRecord>> JobsInRange(JobId first, int64_t count) override;
  Result<core::EndedJobPage> EndedJobs(const core::EndedJobQuery& query) override;
  Status Commit(const core::StoreBatch& batch) override;
  // Flushes first, so the history includes everything the caller has seen.
  Result<std::vector<core::JobEvent>> EventsOf(JobId job) override;
  Status Flush();
  void set_deferred(bool deferred) { deferred_ = deferred; }
  bool deferred() const { return deferred_; }
  // The events committed since the last call, in commit order.
  std::vector<core::JobEvent> TakeEvents() { return std::exchange(events_, {}); }
  // The job rows and reason updates committed since the last call, one batch per commit in
  // commit order (events and users left out): a job may appear in more than one, and a reason
  // update applies to the row before it.
  std::vector<core::StoreBatch> TakeCommittedJobs() { return std::exchange(committed_jobs_, {}); }

 private:
  core::JobRepository* inner_;
  CommitAll commit_all_;
  bool deferred_ = false;
  std::vector<core::StoreBatch> pending_;
  std::vector<core::JobEvent> events_;
  std::vector<core::StoreBatch> committed_jobs_;
  // Keeps the rows and reason updates of a committed batch (committed_jobs_).
  void KeepJobs(core::StoreBatch batch);
  Status failed_;  // the first failed Flush; OK until then
};

}  // namespace podsched::daemon
