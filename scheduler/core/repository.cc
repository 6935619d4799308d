#include "scheduler/core/repository.h"

#include <algorithm>
#include <cstdint>

namespace podsched::core {

Result<StoredState> JobRepository::LoadEndedSince(TimePoint ended_since) {
  auto state = Load();
  if (!state) return state;
  std::erase_if(state->jobs, [&](const JobRecord& job) {
    return IsTerminal(job.state) && job.end_time < ended_since;
  });
  return state;
}

Result<std::vector<JobRecord>> JobRepository::JobsInRange(JobId first, int64_t count) {
  auto state = Load();
  if (!state) return std::unexpected(state.error());
  std::vector<JobRecord> out;
  for (JobRecord& job : state->jobs) {
    if (job.id >= first && job.id.value() - first.value() < count) out.push_back(std::move(job));
  }
  return out;
}

Result<EndedJobPage> JobRepository::EndedJobs(const EndedJobQuery& q) {
  auto state = Load();
  if (!state) return std::unexpected(state.error());
  EndedJobPage page;
  page.last_read = q.after;
  int read = 0;
  for (JobRecord& job : state->jobs) {  // by id
    if (job.id <= q.after || (q.before && job.id >= *q.before) || !IsTerminal(job.state)) continue;
    if ((q.user && job.spec.user != *q.user) || (q.state && job.state != *q.state) ||
        (q.preemptible && job.spec.preemptible != *q.preemptible)) {
      continue;
    }
    if (read == q.limit) {
      page.more = true;
      break;
    }
    ++read;
    page.last_read = job.id;
    page.jobs.push_back(std::move(job));
  }
  return page;
}

namespace {
void SortById(std::vector<JobRecord>& jobs) {
  std::sort(jobs.begin(), jobs.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.id < b.id; });
}
}  // namespace

Result<std::vector<JobRecord>> InMemoryJobRepository::JobsInRange(JobId first, int64_t count) {
  std::vector<JobRecord> out;
  if (count <= static_cast<int64_t>(jobs_.size())) {
    // A few ids (one job, an array's tasks): each looked up, in id order.
    for (int64_t i = 0; i < count && first.value() <= INT64_MAX - i; ++i) {
      if (auto row = jobs_.find(JobId(first.value() + i)); row != jobs_.end()) {
        out.push_back(row->second);
      }
    }
    return out;
  }
  for (const auto& [id, job] : jobs_) {
    if (id >= first && id.value() - first.value() < count) out.push_back(job);
  }
  SortById(out);
  return out;
}

Result<StoredState> InMemoryJobRepository::Load() {
  StoredState state;
  state.jobs.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) {
    state.jobs.push_back(job);
    state.next_job_id = std::max(state.next_job_id, id.value() + 1);
  }
  SortById(state.jobs);
  for (const auto& [name, user] : users_) state.users.push_back(user);
  state.next_event_seq = max_event_seq_ + 1;
  return state;
}

Status InMemoryJobRepository::Commit(const StoreBatch& batch) {
  ++commits_;
  for (const JobRecord& job : batch.jobs) jobs_.insert_or_assign(job.id, job);
  for (const ReasonUpdate& update : batch.reasons) {
    auto row = jobs_.find(update.job);
    if (row == jobs_.end()) {
      return ToStatus(Internal("a reason update for job " + std::to_string(update.job.value()) +
                               ", which is not stored"));
    }
    row->second.reason = update.reason;
  }
  for (const UserRecord& user : batch.users) users_[user.name] = user;
  for (const JobEvent& event : batch.events) {
    max_event_seq_ = std::max(max_event_seq_, event.seq);
    ++events_committed_;
    if (keep_events_) events_[event.job].push_back(event);
  }
  return Status::Ok();
}

Result<std::vector<JobEvent>> InMemoryJobRepository::EventsOf(JobId job) {
  auto it = events_.find(job);
  if (it == events_.end()) return std::vector<JobEvent>{};
  return it->second;
}

}  // namespace podsched::core
