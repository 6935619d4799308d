#include "scheduler/daemon/buffering_repository.h"

#include <algorithm>

namespace podsched::daemon {

Status BufferingRepository::Commit(const core::StoreBatch& batch) {
  if (deferred_) {
    if (!failed_.ok()) return failed_;
    pending_.push_back(batch);
    return Status::Ok();
  }
  Status s = inner_->Commit(batch);
  if (s.ok()) {
    events_.insert(events_.end(), batch.events.begin(), batch.events.end());
    KeepJobs(core::StoreBatch{batch.jobs, {}, {}, batch.reasons});
  }
  return s;
}

Status BufferingRepository::Flush() {
  if (!failed_.ok() || pending_.empty()) return failed_;
  Status s;
  if (commit_all_) {
    std::vector<const core::StoreBatch*> batches;
    for (const auto& b : pending_) batches.push_back(&b);
    s = commit_all_(batches);
  } else {
    for (const auto& b : pending_) {
      if (s = inner_->Commit(b); !s.ok()) break;
    }
  }
  if (s.ok()) {
    for (auto& b : pending_) {
      events_.insert(events_.end(), b.events.begin(), b.events.end());
      KeepJobs(core::StoreBatch{std::move(b.jobs), {}, {}, std::move(b.reasons)});
    }
  } else {
    failed_ = s;
  }
  pending_.clear();
  return s;
}

void BufferingRepository::KeepJobs(core::StoreBatch batch) {
  if (batch.jobs.empty() && batch.reasons.empty()) return;
  committed_jobs_.push_back(std::move(batch));
}

Result<std::vector<core::JobEvent>> BufferingRepository::EventsOf(JobId job) {
  if (Status s = Flush(); !s.ok()) return std::unexpected(s);
  return inner_->EventsOf(job);
}

Result<std::vector<core::JobRecord>> BufferingRepository::JobsInRange(JobId first,
                                                                      int64_t count) {
  if (Status s = Flush(); !s.ok()) return std::unexpected(s);
  return inner_->JobsInRange(first, count);
}

Result<core::EndedJobPage> BufferingRepository::EndedJobs(const core::EndedJobQuery& query) {
  if (Status s = Flush(); !s.ok()) return std::unexpected(s);
  return inner_->EndedJobs(query);
}

}  // namespace podsched::daemon
