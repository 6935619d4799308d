#include "scheduler/core/repository.h"

namespace podsched::core {

Result<StoredState> InMemoryJobRepository::Load() {
  StoredState state;
  state.jobs.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) {
    state.jobs.push_back(job);
    state.next_job_id = std::max(state.next_job_id, id.value() + 1);
  }
  for (const auto& [name, user] : users_) state.users.push_back(user);
  state.next_event_seq = max_event_seq_ + 1;
  return state;
}

Status InMemoryJobRepository::Commit(const StoreBatch& batch) {
  ++commits_;
  for (const JobRecord& job : batch.jobs) jobs_[job.id] = job;
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
