#include "scheduler/core/arrays_dependencies.h"

#include "scheduler/core/job_grammar.h"

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

void ArraysAndDependencies::Index(const JobRecord& job) {
  if (const std::optional<ArrayTask>& task = job.spec.array) {
    JobArray& array = arrays_[task->array_id];
    if (array.tasks.empty()) {
      array.id = task->array_id;
      array.throttle = task->throttle;
      array.expression = task->expression;
    }
    array.tasks.emplace(task->index, job.id);
    ++array.by_state[static_cast<int>(job.state)];
    if (Unsuccessful(job.state) && !array.unsuccessful) array.unsuccessful = job.id;
  }
  if (job.spec.dependencies.empty() || job.state != JobState::kQueued || job.epoch > 0) return;
  for (const Dependency& dep : job.spec.dependencies) {
    JobId key = dep.job;
    if (dep.array_index) {
      auto array = arrays_.find(dep.job);
      if (array == arrays_.end()) continue;  // unknown: its verdict ends the job
      auto t = array->second.tasks.find(*dep.array_index);
      if (t == array->second.tasks.end()) continue;
      key = t->second;
    }
    std::vector<JobId>& list = dependents_[key];
    if (list.empty() || list.back() != job.id) list.push_back(job.id);
  }
  waiting_.emplace(job.id,
                   job.reason == "submitted" ? "waiting for dependencies" : job.reason.str());
  stale_.insert(job.id);
}

void ArraysAndDependencies::NoteTransition(const JobRecord& job, JobState from, JobState to) {
  if (IsTerminal(to)) waiting_.erase(job.id);
  auto notify = [&](JobId key, bool no_more_changes) {
    auto it = dependents_.find(key);
    if (it == dependents_.end()) return;
    stale_.insert(it->second.begin(), it->second.end());
    if (no_more_changes) dependents_.erase(it);
  };
  const std::optional<ArrayTask>& task = job.spec.array;
  const bool names_its_array = task && task->array_id == job.id;
  if (task) {
    JobArray& array = arrays_.at(task->array_id);
    --array.by_state[static_cast<int>(from)];
    ++array.by_state[static_cast<int>(to)];
    if (Unsuccessful(to) && !array.unsuccessful) array.unsuccessful = job.id;
    notify(task->array_id, array.Ended() == static_cast<int>(array.tasks.size()));
  }
  if (!names_its_array) notify(job.id, IsTerminal(to));
}

void ArraysAndDependencies::CountTargets(const JobSpec& spec, int delta) {
  for (const Dependency& dep : spec.dependencies) {
    int& n = named_by_active_[dep.job];
    n += delta;
    if (n <= 0) named_by_active_.erase(dep.job);
  }
}

void ArraysAndDependencies::Forget(const JobRecord& job) {
  if (job.spec.array) {
    auto array = arrays_.find(job.spec.array->array_id);
    if (array != arrays_.end()) {
      array->second.tasks.erase(job.spec.array->index);
      if (array->second.tasks.empty()) arrays_.erase(array);
    }
  }
  dependents_.erase(job.id);
}

bool ArraysAndDependencies::NamedByActive(const JobRecord& job) const {
  if (named_by_active_.contains(job.id)) return true;
  return job.spec.array && named_by_active_.contains(job.spec.array->array_id);
}

const JobArray* ArraysAndDependencies::FindArray(JobId id) const {
  auto it = arrays_.find(id);
  return it == arrays_.end() ? nullptr : &it->second;
}

const JobRecord* ArraysAndDependencies::Target(const Dependency& dep,
                                               const JobTable& jobs) const {
  if (!dep.array_index) return jobs.Find(dep.job);
  const JobArray* array = FindArray(dep.job);
  if (array == nullptr) return nullptr;
  auto task = array->tasks.find(*dep.array_index);
  return task == array->tasks.end() ? nullptr : jobs.Find(task->second);
}

DependencyTarget ArraysAndDependencies::TargetOf(const Dependency& dep,
                                                 const JobTable& jobs) const {
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
  const JobArray* array = FindArray(dep.job);
  if (array != nullptr && !dep.array_index) {
    DependencyTarget t;
    t.name = "array " + std::to_string(array->id.value());
    t.jobs = static_cast<int>(array->tasks.size());
    t.succeeded = array->Count(JobState::kSucceeded);
    t.ended = array->Ended();
    t.state = std::to_string(t.ended) + "/" + std::to_string(t.jobs) + " ended";
    if (array->unsuccessful) {
      const JobRecord& bad = jobs.at(*array->unsuccessful);
      t.unsuccessful = "job " + TaskName(bad.id, bad.spec.array) + " ended " +
                       std::string(JobStateName(bad.state));
    }
    return t;
  }
  if (const JobRecord* job = Target(dep, jobs)) return one(*job);
  // Only a damaged store gets here (a waiting job's targets stay in memory, retention.cc):
  // a target that cannot end well.
  DependencyTarget missing;
  missing.name = "job " + TargetName(dep);
  missing.ended = 1;
  missing.state = "missing";
  missing.unsuccessful = missing.name + " does not exist";
  return missing;
}

std::optional<std::string> ArraysAndDependencies::HeldBack(const JobRecord& job) const {
  // Only a job with dependencies waits on them (Index): most jobs skip the lookup, which a pass
  // made for every queued job.
  if (!job.spec.dependencies.empty()) {
    if (auto waiting = waiting_.find(job.id); waiting != waiting_.end()) return waiting->second;
  }
  if (!job.spec.array || job.spec.array->throttle <= 0) return std::nullopt;
  const JobArray& array = arrays_.at(job.spec.array->array_id);
  if (array.Holding() < array.throttle) return std::nullopt;
  // The same text for every waiting task, so that it is stored once, not once per pass.
  return "array throttle: at most " + std::to_string(array.throttle) +
         (array.throttle == 1 ? " task" : " tasks") + " of array " +
         std::to_string(array.id.value()) + " at once";
}

std::optional<ArraysAndDependencies::Verdict> ArraysAndDependencies::SettleNext(
    const JobTable& jobs) {
  while (!stale_.empty()) {
    const JobId id = *stale_.begin();
    stale_.erase(stale_.begin());
    auto waiting = waiting_.find(id);
    if (waiting == waiting_.end()) continue;  // free already (or ended)
    std::vector<std::string> unmet;
    for (const Dependency& dep : jobs.at(id).spec.dependencies) {
      const DependencyTarget target = TargetOf(dep, jobs);
      const DependencyStatus status = EvaluateDependency(dep.kind, target);
      if (status.verdict == DependencyVerdict::kNever) {
        waiting_.erase(waiting);
        return Verdict{id, Verdict::kNever, "dependency never satisfied: " + status.why_never};
      }
      if (status.verdict == DependencyVerdict::kWaiting) {
        unmet.push_back(FormatDependency(dep) + " (" + target.state + ")");
      }
    }
    if (unmet.empty()) {
      waiting_.erase(waiting);
      return Verdict{id, Verdict::kFree, "dependencies met"};
    }
    std::string reason = "waiting for ";
    for (size_t i = 0; i < unmet.size() && i < kMaxListedDependencies; ++i) {
      reason += (i == 0 ? "" : ", ") + unmet[i];
    }
    if (unmet.size() > kMaxListedDependencies) {
      reason += " and " + std::to_string(unmet.size() - kMaxListedDependencies) + " more";
    }
    waiting->second = reason;
    return Verdict{id, Verdict::kWaiting, std::move(reason)};
  }
  return std::nullopt;
}

}  // namespace podsched::core
