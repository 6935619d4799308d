// GroupCommitter: group commit for committers on many threads (the crash-recovery test's writer
// and bench_jobdb use it). The daemon does not: its one scheduler thread defers its own commits
// and flushes them in one transaction (scheduler/daemon/buffering_repository.h).
//
// Many threads call Commit / CommitAsync at once. One writer thread takes every pending batch
// (up to max_group) and commits them in ONE SQLite transaction, so one fsync covers the whole
// group. A batch is acknowledged (its callback runs, its future becomes ready, Commit returns)
// only after that COMMIT returned: an acknowledged batch is durable. If the transaction fails,
// every batch of the group fails with the same error and none of them is stored.
//
// Batches of one group are applied in the order they were queued; batches queued by one thread
// keep that thread's order.
//
// Thread safety: every method is thread-safe. Load and EventsOf run on the caller's thread,
// serialized with the writer on the connection. Callbacks run on the writer thread and must not
// call back into this GroupCommitter's blocking Commit (that would wait for itself).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "scheduler/core/repository.h"
#include "store/jobdb/sqlite_job_repository.h"

namespace podsched::jobdb {

struct GroupCommitOptions {
  size_t max_group = 1024;  // batches per transaction at most
};

struct GroupCommitStats {
  int64_t groups = 0;   // transactions committed (or failed)
  int64_t batches = 0;  // batches acknowledged (or failed)
  size_t largest_group = 0;
};

class GroupCommitter final : public core::JobRepository {
 public:
  using Callback = std::function<void(const Status&)>;

  explicit GroupCommitter(std::unique_ptr<SqliteJobRepository> repo,
                          GroupCommitOptions options = {});
  // Commits whatever is still queued, acknowledges it, then stops the writer thread.
  ~GroupCommitter() override;
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `batch`; `done` runs on the writer thread once its group's COMMIT has returned.
  void CommitAsync(core::StoreBatch batch, Callback done);
  // Same, with a future that becomes ready at that moment.
  std::future<Status> CommitAsync(core::StoreBatch batch);
  // Blocks until the batch is durable (or its group failed).
  Status Commit(const core::StoreBatch& batch) override;

  Result<core::StoredState> Load() override;
  Result<core::StoredState> LoadEndedSince(TimePoint ended_since) override;
  Result<std::vector<core::JobRecord>> JobsInRange(JobId first, int64_t count) override;
  Result<core::EndedJobPage> EndedJobs(const core::EndedJobQuery& query) override;
  Result<std::vector<core::JobEvent>> EventsOf(JobId job) override;
  Result<std::string> IntegrityCheck();

  GroupCommitStats stats() const;
  // Batches queued and not yet taken by the writer (a group being committed is not counted).
  size_t pending() const;

 private:
  struct Pending {
    core::StoreBatch owned;
    const core::StoreBatch* borrowed = nullptr;  // a blocking caller's batch (it waits)
    Callback done;
    const core::StoreBatch& batch() const { return borrowed != nullptr ? *borrowed : owned; }
  };
  void Enqueue(Pending pending);
  void WriterLoop();

  const GroupCommitOptions options_;
  std::mutex db_mutex_;  // guards repo_
  std::unique_ptr<SqliteJobRepository> repo_;

  mutable std::mutex queue_mutex_;  // guards pending_, stopping_, stats_
  std::condition_variable wake_;
  std::vector<Pending> pending_;
  bool stopping_ = false;
  GroupCommitStats stats_;

  std::thread writer_;  // last: starts after every member above is ready
};

}  // namespace podsched::jobdb
