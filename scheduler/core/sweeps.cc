// Submission of jobs and job arrays (Slurm's sweeps and pipelines), the cancellation of an
// array, and the coordinator's side of dependency verdicts. The arrays' counts, the dependents
// index and the verdicts themselves are ArraysAndDependencies' (arrays_dependencies.h). See
// scheduler.h (Submit, SubmitArray, CancelArray).
#include <algorithm>
#include <cmath>
#include <string>

#include "common/check.h"
#include "scheduler/core/dependency.h"
#include "scheduler/core/scheduler_impl.h"
#include "scheduler/core/spec.h"

namespace podsched::core {

Result<pod::AcceleratorType> Scheduler::Impl::CheckSubmission(const JobSpec& spec,
                                                              int new_jobs,
                                                              TimePoint now) const {
  auto type = ValidateSpec(spec, hosts.fleet());
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
  const JobTable::ActiveUse use = jobs.ActiveOf(spec.user);
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
  const int limit = quota.Of(spec.preemptible);
  if (JobCores(spec, *type) > limit) {
    return Error(StatusCode::kResourceExhausted,
                 (spec.slices > 1 ? std::to_string(spec.slices) + " slices of " : std::string()) +
                     spec.accelerator + " need" + (spec.slices > 1 ? "" : "s") + " " +
                     std::to_string(JobCores(spec, *type)) + " " +
                     (spec.preemptible ? "preemptible" : "on-demand") + " cores; the quota of " +
                     spec.user.value() + " is " + std::to_string(limit));
  }
  for (const Dependency& dep : spec.dependencies) {
    // Another user's job is named like a missing one: a dependency must not reveal it exists.
    const JobRecord* target = arrays_deps.Target(dep, jobs);
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
  job.id = jobs.NewId();
  job.spec = std::move(spec);
  job.submit_time = now;
  job.reason = "submitted";
  JobEvent event;
  event.time = now;
  event.job = job.id;
  event.to = JobState::kQueued;
  event.reason = "submitted";
  ++stats.events;
  arrays_deps.CountTargets(job.spec, +1);
  outbox.Record(std::move(event));
  const JobId id = job.id;
  JobRecord& stored = jobs.Add(std::move(job), type);
  Enqueue(stored, now);
  arrays_deps.Index(stored);
  dirty = true;
  return id;
}

void Scheduler::Impl::ResolveDependencies(TimePoint now) {
  while (auto verdict = arrays_deps.SettleNext(jobs)) {
    JobRecord& job = jobs.at(verdict->job);
    switch (verdict->kind) {
      case ArraysAndDependencies::Verdict::kNever: {
        Status s = Transition(job, JobState::kCancelled, verdict->reason, now);
        PODSCHED_CHECK_MSG(s.ok(), s.message().c_str());
        break;
      }
      case ArraysAndDependencies::Verdict::kFree:
        SetReason(job, verdict->reason);
        dirty = true;
        break;
      case ArraysAndDependencies::Verdict::kWaiting:
        SetReason(job, verdict->reason);
        break;
    }
  }
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
  const JobId first(s.jobs.next_id());
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
  const JobArray* array = s.arrays_deps.FindArray(id);
  if (array == nullptr) return NotFound("job " + std::to_string(id.value()) + " is not an array");
  bool any = false;
  for (const auto& [index, task] : array->tasks) {
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
  return impl_->arrays_deps.FindArray(array);
}

std::pair<DependencyTarget, DependencyStatus> Scheduler::DependencyStatusOf(
    const Dependency& dep) const {
  DependencyTarget target = impl_->arrays_deps.TargetOf(dep, impl_->jobs);
  DependencyStatus status = EvaluateDependency(dep.kind, target);
  return {std::move(target), std::move(status)};
}

}  // namespace podsched::core
