// Job arrays and dependencies (Slurm's sweeps and pipelines): submission of both, the array
// counts, the dependents index and the resolution of dependency verdicts. See scheduler.h
// (Submit, SubmitArray, CancelArray) and scheduler_impl.h (the indexes).
#include <algorithm>
#include <cmath>
#include <string>

#include "common/check.h"
#include "scheduler/core/dependency.h"
#include "scheduler/core/scheduler_impl.h"
#include "scheduler/core/spec.h"

namespace podsched::core {
namespace {

constexpr size_t kMaxListedDependencies = 3;  // a reason stays one readable line

bool Unsuccessful(JobState s) { return s == JobState::kFailed || s == JobState::kCancelled; }

}  // namespace

int JobArray::Holding() const {
  int n = 0;
  for (int s = 0; s < static_cast<int>(by_state.size()); ++s) {
    if (HoldsHosts(static_cast<JobState>(s))) n += by_state[s];
  }
  return n;
}

int JobArray::Ended() const {
  return Count(JobState::kSucceeded) + Count(JobState::kFailed) + Count(JobState::kCancelled);
}

Result<pod::AcceleratorType> Scheduler::Impl::CheckSubmission(const JobSpec& spec,
                                                              int new_jobs,
                                                              TimePoint now) const {
  auto type = ValidateSpec(spec, hosts.pod());
  if (!type) return std::unexpected(type.error());
  const int per_hour = config.max_jobs_created_per_user_per_hour;
  if (new_jobs > per_hour) {
    return Error(StatusCode::kResourceExhausted,
                 std::to_string(new_jobs) + " jobs at once are more than the " +
                     std::to_string(per_hour) +
                     " a user may create in an hour "
                     "(scheduler.max_jobs_created_per_user_per_hour): split the array");
  }
  {
    if (const double wait = accounting.SecondsUntilCreation(spec.user, new_jobs, now); wait > 0) {
      const auto seconds = static_cast<int64_t>(std::ceil(wait - 1e-6));  // 360.0000001 is 360
      return Error(StatusCode::kResourceExhausted,
                   spec.user.value() + " may create " + std::to_string(per_hour) +
                       " jobs an hour (scheduler.max_jobs_created_per_user_per_hour; array "
                       "tasks count one by one) and has " +
                       std::to_string(static_cast<int64_t>(
                           accounting.CreationsAvailable(spec.user, now))) +
                       " left now; " + std::to_string(new_jobs) + " more fit in " +
                       std::to_string(seconds) + " s");
    }
  }
  const auto count = active_per_user.find(spec.user);
  const ActiveUse use = count == active_per_user.end() ? ActiveUse{} : count->second;
  const int active_now = use.jobs;
  if (active_now + new_jobs > config.max_active_jobs_per_user) {
    return Error(StatusCode::kResourceExhausted,
                 spec.user.value() + " has " + std::to_string(active_now) +
                     " jobs that have not ended; " + std::to_string(new_jobs) + " more would pass " +
                     "the limit of " + std::to_string(config.max_active_jobs_per_user) +
                     " (scheduler.max_active_jobs_per_user): wait for some to end or cancel them");
  }
  const int64_t bytes = SpecBytes(spec) * new_jobs;
  if (use.spec_bytes + bytes > config.max_active_spec_bytes_per_user) {
    return Error(StatusCode::kResourceExhausted,
                 spec.user.value() + "'s jobs that have not ended hold " +
                     std::to_string(use.spec_bytes >> 10) + " KiB of specs; " +
                     std::to_string(bytes >> 10) + " KiB more would pass the limit of " +
                     std::to_string(config.max_active_spec_bytes_per_user >> 20) +
                     " MiB (scheduler.max_active_spec_bytes_per_user): wait for some to end, "
                     "cancel them, or keep large data out of env and args");
  }
  const Quota quota = accounting.QuotaOf(spec.user);
  const int limit = spec.preemptible ? quota.preemptible_cores : quota.on_demand_cores;
  if (type->tensor_cores() > limit) {
    return Error(StatusCode::kResourceExhausted,
                 spec.accelerator + " needs " + std::to_string(type->tensor_cores()) + " " +
                     (spec.preemptible ? "preemptible" : "on-demand") + " cores; the quota of " +
                     spec.user.value() + " is " + std::to_string(limit));
  }
  for (const Dependency& dep : spec.dependencies) {
    // Another user's job is named like a missing one: a dependency must not reveal it exists.
    const JobRecord* target = nullptr;
    if (dep.array_index) {
      auto array = arrays.find(dep.job);
      if (array != arrays.end()) {
        auto task = array->second.tasks.find(*dep.array_index);
        if (task != array->second.tasks.end()) target = &jobs.at(task->second);
      }
    } else if (auto it = jobs.find(dep.job); it != jobs.end()) {
      target = &it->second;
    }
    if (target == nullptr || target->spec.user != spec.user) {
      // Said alike for a job of another user and for one forgotten (retention).
      const std::string forgotten =
          config.ended_job_retention > Duration::zero()
              ? " (a job that ended is a target only while podsched keeps it: "
                "scheduler.ended_job_retention_hours)"
              : "";
      return InvalidArgument("dependency " + FormatDependency(dep) + ": " + spec.user.value() +
                             " has no job " + TargetName(dep) + forgotten);
    }
  }
  return type;
}

JobId Scheduler::Impl::Queue(JobSpec spec, const pod::AcceleratorType& type, TimePoint now) {
  accounting.User(spec.user, now);
  JobRecord job;
  job.id = JobId(next_job_id++);
  job.spec = std::move(spec);
  job.submit_time = now;
  job.reason = "submitted";
  JobEvent event;
  event.time = now;
  event.job = job.id;
  event.to = JobState::kQueued;
  event.reason = "submitted";
  ++stats.events;
  types.emplace(job.id, type);
  ++jobs_in_state[static_cast<int>(JobState::kQueued)];
  active.insert(job.id);
  AddActive(job.spec);
  CountDependencyTargets(job.spec, +1);
  outbox.Record(std::move(event));
  const JobId id = job.id;
  JobRecord& stored = jobs.emplace(id, std::move(job)).first->second;
  Enqueue(stored, now);
  Index(stored);
  dirty = true;
  return id;
}

void Scheduler::Impl::Index(const JobRecord& job) {
  if (const std::optional<ArrayTask>& task = job.spec.array) {
    JobArray& array = arrays[task->array_id];
    if (array.tasks.empty()) {
      array.id = task->array_id;
      array.throttle = task->throttle;
      array.expression = task->expression;
    }
    array.tasks.emplace(task->index, job.id);
    ++array.by_state[static_cast<int>(job.state)];
    if (Unsuccessful(job.state) && !array.unsuccessful) array.unsuccessful = job.id;
  }
  // A job placed before (epoch > 0) had its dependencies met, and a met dependency stays met
  // (it concerns ended jobs only): a requeued job does not wait for them again.
  if (job.spec.dependencies.empty() || job.state != JobState::kQueued || job.epoch > 0) return;
  for (const Dependency& dep : job.spec.dependencies) {
    JobId key = dep.job;
    if (dep.array_index) {
      auto array = arrays.find(dep.job);
      if (array == arrays.end()) continue;  // unknown: ResolveDependencies ends the job
      auto t = array->second.tasks.find(*dep.array_index);
      if (t == array->second.tasks.end()) continue;
      key = t->second;
    }
    std::vector<JobId>& list = dependents[key];
    if (list.empty() || list.back() != job.id) list.push_back(job.id);
  }
  // Not free to start until the first resolution says so.
  waiting_on_dependencies.emplace(
      job.id, job.reason == "submitted" ? "waiting for dependencies" : job.reason);
  dependencies_stale.insert(job.id);
}

void Scheduler::Impl::NoteTransition(const JobRecord& job, JobState from, JobState to) {
  if (IsTerminal(to)) waiting_on_dependencies.erase(job.id);
  auto notify = [&](JobId key, bool no_more_changes) {
    auto it = dependents.find(key);
    if (it == dependents.end()) return;
    dependencies_stale.insert(it->second.begin(), it->second.end());
    if (no_more_changes) dependents.erase(it);
  };
  const std::optional<ArrayTask>& task = job.spec.array;
  const bool names_its_array = task && task->array_id == job.id;
  if (task) {
    JobArray& array = arrays.at(task->array_id);
    --array.by_state[static_cast<int>(from)];
    ++array.by_state[static_cast<int>(to)];
    if (Unsuccessful(to) && !array.unsuccessful) array.unsuccessful = job.id;
    notify(task->array_id, array.Ended() == static_cast<int>(array.tasks.size()));
  }
  if (!names_its_array) notify(job.id, IsTerminal(to));
}

DependencyTarget Scheduler::Impl::TargetOf(const Dependency& dep) const {
  auto one = [&](const JobRecord& job) {
    DependencyTarget t;
    t.name = "job " + TaskName(job.id, job.spec.array);
    t.jobs = 1;
    t.succeeded = job.state == JobState::kSucceeded ? 1 : 0;
    t.ended = IsTerminal(job.state) ? 1 : 0;
    t.state = std::string(JobStateName(job.state));
    if (Unsuccessful(job.state)) t.unsuccessful = t.name + " ended " + t.state;
    return t;
  };
  auto array = arrays.find(dep.job);
  if (dep.array_index) {
    if (array != arrays.end()) {
      auto task = array->second.tasks.find(*dep.array_index);
      if (task != array->second.tasks.end()) return one(jobs.at(task->second));
    }
  } else if (array != arrays.end()) {
    const JobArray& a = array->second;
    DependencyTarget t;
    t.name = "array " + std::to_string(a.id.value());
    t.jobs = static_cast<int>(a.tasks.size());
    t.succeeded = a.Count(JobState::kSucceeded);
    t.ended = a.Ended();
    t.state = std::to_string(t.ended) + "/" + std::to_string(t.jobs) + " ended";
    if (a.unsuccessful) {
      const JobRecord& bad = jobs.at(*a.unsuccessful);
      t.unsuccessful = "job " + TaskName(bad.id, bad.spec.array) + " ended " +
                       std::string(JobStateName(bad.state));
    }
    return t;
  } else if (auto it = jobs.find(dep.job); it != jobs.end()) {
    return one(it->second);
  }
  // Only a damaged store gets here (a waiting job's targets stay in memory, retention.cc):
  // a target that cannot end well.
  DependencyTarget missing;
  missing.name = "job " + TargetName(dep);
  missing.ended = 1;
  missing.state = "missing";
  missing.unsuccessful = missing.name + " does not exist";
  return missing;
}

void Scheduler::Impl::ResolveDependencies(TimePoint now) {
  while (!dependencies_stale.empty()) {
    const JobId id = *dependencies_stale.begin();
    dependencies_stale.erase(dependencies_stale.begin());
    auto waiting = waiting_on_dependencies.find(id);
    if (waiting == waiting_on_dependencies.end()) continue;  // free already (or ended)
    JobRecord& job = jobs.at(id);
    std::vector<std::string> unmet;
    std::optional<std::string> never;
    for (const Dependency& dep : job.spec.dependencies) {
      const DependencyTarget target = TargetOf(dep);
      const DependencyStatus status = EvaluateDependency(dep.kind, target);
      if (status.verdict == DependencyVerdict::kNever) {
        never = status.why_never;
        break;
      }
      if (status.verdict == DependencyVerdict::kWaiting) {
        unmet.push_back(FormatDependency(dep) + " (" + target.state + ")");
      }
    }
    if (never) {
      waiting_on_dependencies.erase(waiting);
      Status s =
          Transition(job, JobState::kCancelled, "dependency never satisfied: " + *never, now);
      PODSCHED_CHECK_MSG(s.ok(), s.message().c_str());
      continue;
    }
    if (unmet.empty()) {
      waiting_on_dependencies.erase(waiting);
      SetReason(job, "dependencies met");
      dirty = true;
      continue;
    }
    std::string reason = "waiting for ";
    for (size_t i = 0; i < unmet.size() && i < kMaxListedDependencies; ++i) {
      reason += (i == 0 ? "" : ", ") + unmet[i];
    }
    if (unmet.size() > kMaxListedDependencies) {
      reason += " and " + std::to_string(unmet.size() - kMaxListedDependencies) + " more";
    }
    waiting->second = reason;
    SetReason(job, reason);
  }
}

std::optional<std::string> Scheduler::Impl::ThrottleReason(const JobRecord& job) const {
  if (!job.spec.array || job.spec.array->throttle <= 0) return std::nullopt;
  const JobArray& array = arrays.at(job.spec.array->array_id);
  if (array.Holding() < array.throttle) return std::nullopt;
  // The same text for every waiting task, so that it is stored once, not once per pass.
  return "array throttle: at most " + std::to_string(array.throttle) +
         (array.throttle == 1 ? " task" : " tasks") + " of array " +
         std::to_string(array.id.value()) + " at once";
}

// ------------------------------------------------------------------------------------------
// Public API.

Result<std::vector<JobId>> Scheduler::SubmitArray(JobSpec spec, const ArraySpec& array,
                                                  TimePoint now) {
  Impl& s = *impl_;
  if (spec.array) return InvalidArgument("the spec is an array task already");
  if (array.indices.empty()) return InvalidArgument("array '" + array.text + "' has no tasks");
  if (array.indices.size() > static_cast<size_t>(kMaxArrayTasks) ||
      array.indices.back() > kMaxArrayIndex || array.indices.front() < 0) {
    return InvalidArgument("array '" + array.text + "': at most " + std::to_string(kMaxArrayTasks) +
                           " tasks with indices 0.." + std::to_string(kMaxArrayIndex));
  }
  auto type = s.CheckSubmission(spec, static_cast<int>(array.indices.size()), now);
  if (!type) return std::unexpected(type.error());
  s.accounting.ChargeCreation(spec.user, static_cast<int>(array.indices.size()), now);
  const JobId first(s.next_job_id);
  std::vector<JobId> ids;
  ids.reserve(array.indices.size());
  for (int index : array.indices) {
    JobSpec task = spec;
    task.array = ArrayTask{first, index, array.throttle, array.text};
    ids.push_back(s.Queue(std::move(task), *type, now));
  }
  auto done = s.Finish(now);
  if (!done) return std::unexpected(done.error());
  return ids;
}

Result<Actions> Scheduler::CancelArray(JobId id, TimePoint now) {
  Impl& s = *impl_;
  auto it = s.arrays.find(id);
  if (it == s.arrays.end())
    return NotFound("job " + std::to_string(id.value()) + " is not an array");
  bool any = false;
  for (const auto& [index, task] : it->second.tasks) {
    JobRecord& job = s.jobs.at(task);
    if (IsTerminal(job.state) || job.cancel_requested) continue;
    s.CancelOne(job, now);
    any = true;
  }
  if (!any) {
    return FailedPrecondition("every task of array " + std::to_string(id.value()) +
                              " has ended or is being cancelled");
  }
  return s.Finish(now);
}

const JobArray* Scheduler::FindArray(JobId array) const {
  auto it = impl_->arrays.find(array);
  return it == impl_->arrays.end() ? nullptr : &it->second;
}

std::pair<DependencyTarget, DependencyStatus> Scheduler::DependencyStatusOf(
    const Dependency& dep) const {
  DependencyTarget target = impl_->TargetOf(dep);
  DependencyStatus status = EvaluateDependency(dep.kind, target);
  return {std::move(target), std::move(status)};
}

}  // namespace podsched::core
