// Retention of ended jobs (SchedulerConfig::ended_job_retention; audit H1): an ended job leaves
// memory once its retention is over and nothing in memory still needs it, and stays readable in
// the store (Scheduler::FindStored). What still needs an ended job:
// - a lease of one of its epochs (hosts not all released: LiveOwner and the host reports look
//   the job up);
// - an active job naming it, or its array, in a dependency (a waiting job is judged by its
//   targets' states, again after a restart: LoadDependencyTargets reads them back);
// - its array, while a task of it has not ended (the array's counts and its tasks' ids are
//   read together), so an array goes as a whole, one retention after its last task ended.
#include <algorithm>
#include <set>

#include "scheduler/core/dependency.h"
#include "scheduler/core/scheduler_impl.h"

namespace podsched::core {
namespace {

// A job kept for one of the reasons above is looked at again after this (or the retention,
// when shorter): leases end within seconds, dependencies when their waiters do.
constexpr Duration kRecheck = std::chrono::minutes(1);

}  // namespace

void Scheduler::Impl::ForgetEndedJobs(TimePoint now) {
  const TimePoint recheck = now + std::min(kRecheck, config.ended_job_retention);
  while (!forget_at.empty() && forget_at.begin()->first <= now) {
    const JobId id = forget_at.begin()->second;
    forget_at.erase(forget_at.begin());
    const JobRecord* found = jobs.Find(id);
    if (found == nullptr) continue;  // forgotten with its array
    const JobRecord& job = *found;
    if (!job.spec.array) {
      if (arrays_deps.NamedByActive(job) || hosts.HoldsAnyEpochOf(id)) {
        forget_at.emplace(recheck, id);
      } else {
        Forget(id);
      }
      continue;
    }
    const JobId array_id = job.spec.array->array_id;
    const JobArray& array = *arrays_deps.FindArray(array_id);
    if (array.Ended() < static_cast<int>(array.tasks.size())) continue;  // its last task re-adds
    TimePoint last_end = job.end_time;
    bool needed = arrays_deps.NamedByActive(job);
    for (const auto& [index, task] : array.tasks) {
      last_end = std::max(last_end, jobs.at(task).end_time);
      needed = needed || hosts.HoldsAnyEpochOf(task);
    }
    if (last_end + config.ended_job_retention > now) {
      forget_at.emplace(last_end + config.ended_job_retention, id);
    } else if (needed) {
      forget_at.emplace(recheck, id);
    } else {
      const std::map<int, JobId> tasks = array.tasks;  // Forget erases the array with its last
      for (const auto& [index, task] : tasks) Forget(task);
    }
  }
}

void Scheduler::Impl::Forget(JobId id) {
  const JobRecord& job = jobs.at(id);
  arrays_deps.Forget(job);
  timers.ClearKill(id);
  hosts.Unreserve(id);
  unasked_exits.erase(id);
  jobs.Erase(id);
  ++stats.forgotten;
}

Status LoadDependencyTargets(JobRepository& repo, StoredState* state) {
  std::set<JobId> present;
  for (const JobRecord& job : state->jobs) present.insert(job.id);
  std::set<JobId> wanted;
  for (const JobRecord& job : state->jobs) {
    if (IsTerminal(job.state)) continue;
    for (const Dependency& dep : job.spec.dependencies) {
      if (!present.contains(dep.job)) wanted.insert(dep.job);
    }
  }
  for (JobId target : wanted) {
    auto head = repo.JobsInRange(target, 1);
    if (!head) return head.error().WithContext("reading job " + std::to_string(target.value()));
    if (head->empty()) continue;  // no such job: the dependency is judged never met
    std::vector<JobRecord> found = std::move(*head);
    const std::optional<ArrayTask>& task = found.front().spec.array;
    if (task && task->array_id == target) {  // an array: all of its tasks (consecutive ids)
      auto tasks = repo.JobsInRange(target, kMaxArrayTasks);
      if (!tasks) {
        return tasks.error().WithContext("reading array " + std::to_string(target.value()));
      }
      std::erase_if(*tasks, [&](const JobRecord& t) {
        return !t.spec.array || t.spec.array->array_id != target;
      });
      found = std::move(*tasks);
    }
    for (JobRecord& job : found) {
      if (present.insert(job.id).second) state->jobs.push_back(std::move(job));
    }
  }
  std::sort(state->jobs.begin(), state->jobs.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.id < b.id; });
  return Status::Ok();
}

}  // namespace podsched::core
