#include "store/jobdb/group_committer.h"

#include <algorithm>

#include "common/check.h"

namespace podsched::jobdb {

GroupCommitter::GroupCommitter(std::unique_ptr<SqliteJobRepository> repo,
                               GroupCommitOptions options)
    : options_(options), repo_(std::move(repo)), writer_([this] { WriterLoop(); }) {
  PODSCHED_CHECK(repo_ != nullptr);
  PODSCHED_CHECK(options_.max_group > 0);
}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void GroupCommitter::Enqueue(Pending pending) {
  {
    std::lock_guard lock(queue_mutex_);
    PODSCHED_CHECK_MSG(!stopping_, "commit on a GroupCommitter being destroyed");
    pending_.push_back(std::move(pending));
  }
  wake_.notify_one();
}

void GroupCommitter::CommitAsync(core::StoreBatch batch, Callback done) {
  Enqueue(Pending{std::move(batch), nullptr, std::move(done)});
}

std::future<Status> GroupCommitter::CommitAsync(core::StoreBatch batch) {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> future = promise->get_future();
  CommitAsync(std::move(batch), [promise](const Status& s) { promise->set_value(s); });
  return future;
}

Status GroupCommitter::Commit(const core::StoreBatch& batch) {
  // Shared, not on this stack: set_value may still be returning when get() wakes up.
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> future = promise->get_future();
  // The batch is borrowed, not copied: this thread waits until the writer is done with it.
  Enqueue(Pending{{}, &batch, [promise](const Status& s) { promise->set_value(s); }});
  return future.get();
}

void GroupCommitter::WriterLoop() {
  std::vector<Pending> group;
  std::vector<const core::StoreBatch*> batches;
  for (;;) {
    {
      std::unique_lock lock(queue_mutex_);
      wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, and everything acknowledged
      // Take up to max_group batches, oldest first; the rest wait for the next group.
      const size_t n = std::min(pending_.size(), options_.max_group);
      group.assign(std::make_move_iterator(pending_.begin()),
                   std::make_move_iterator(pending_.begin() + static_cast<ptrdiff_t>(n)));
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(n));
    }
    batches.clear();
    for (const Pending& p : group) batches.push_back(&p.batch());
    Status status;
    {
      std::lock_guard db_lock(db_mutex_);
      status = repo_->CommitAll(batches);
    }
    {
      std::lock_guard lock(queue_mutex_);
      ++stats_.groups;
      stats_.batches += static_cast<int64_t>(group.size());
      stats_.largest_group = std::max(stats_.largest_group, group.size());
    }
    // Acknowledge only now: the COMMIT (and its fsync) has returned.
    for (Pending& p : group) p.done(status);
    group.clear();
  }
}

Result<core::StoredState> GroupCommitter::Load() {
  std::lock_guard lock(db_mutex_);
  return repo_->Load();
}

Result<core::StoredState> GroupCommitter::LoadEndedSince(TimePoint ended_since) {
  std::lock_guard lock(db_mutex_);
  return repo_->LoadEndedSince(ended_since);
}

Result<std::vector<core::JobRecord>> GroupCommitter::JobsInRange(JobId first, int64_t count) {
  std::lock_guard lock(db_mutex_);
  return repo_->JobsInRange(first, count);
}

Result<core::EndedJobPage> GroupCommitter::EndedJobs(const core::EndedJobQuery& query) {
  std::lock_guard lock(db_mutex_);
  return repo_->EndedJobs(query);
}

Result<std::vector<core::JobEvent>> GroupCommitter::EventsOf(JobId job) {
  std::lock_guard lock(db_mutex_);
  return repo_->EventsOf(job);
}

Result<std::string> GroupCommitter::IntegrityCheck() {
  std::lock_guard lock(db_mutex_);
  return repo_->IntegrityCheck();
}

size_t GroupCommitter::pending() const {
  std::lock_guard lock(queue_mutex_);
  return pending_.size();
}

GroupCommitStats GroupCommitter::stats() const {
  std::lock_guard lock(queue_mutex_);
  return stats_;
}

}  // namespace podsched::jobdb
