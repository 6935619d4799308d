// ArraysAndDependencies: what the scheduler keeps to answer questions about job arrays and
// dependencies in O(1) (Slurm's sweeps and pipelines; issue 27 named it).
//
// Holds
//   - each array: its tasks by index and how many are in each state (JobArray);
//   - the dependents index: for each target (a job, or an array for its tasks), the waiting jobs
//     that name it;
//   - the waiting jobs (QUEUED, not yet free to start) with their reason, and which of them are
//     stale: a target changed state since their verdict;
//   - how many active jobs name each job or array id (retention keeps those in memory).
//
// Promises
//   - A waiting job's verdict changes only when one of its targets changes state, so it is
//     evaluated then (SettleNext), never on every pass.
//   - A met dependency stays met (it concerns ended jobs only): a job placed before (epoch > 0)
//     never waits again.
//   - A dependency names another user's job like a missing one (Target).
//
// Who calls it: Scheduler::Impl, the coordinator: Index for every job in, NoteTransition for
// every change of state (Transition), CountTargets as jobs become active and end, Forget as
// retention drops a job, SettleNext before every pass and commit (the coordinator applies each
// verdict: a cancellation is a Transition); the pass reads HeldBack through PassJobs.
//
// Pure (no I/O); single-threaded, like the Scheduler that owns it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/ids.h"
#include "scheduler/core/dependency.h"
#include "scheduler/core/job_table.h"
#include "scheduler/core/scheduler.h"

namespace podsched::core {

class ArraysAndDependencies {
 public:
  // A job in (queued, or loaded once every job is in the table): its array's counts; a QUEUED
  // job with dependencies that was never placed waits until its first verdict.
  void Index(const JobRecord& job);
  // The job moved from `from` to `to`: its array's counts; the jobs waiting on it (or on its
  // array) become stale; an ended job waits no more.
  void NoteTransition(const JobRecord& job, JobState from, JobState to);
  // `spec` became active (+1) or ended (-1): the ids it names are needed while it waits.
  void CountTargets(const JobSpec& spec, int delta);
  // Retention forgot `job`: out of its array (the array goes with its last task) and the index.
  void Forget(const JobRecord& job);

  // An active job names the job or its array in a dependency.
  bool NamedByActive(const JobRecord& job) const;
  // The array whose first task is `id`, or nullptr.
  const JobArray* FindArray(JobId id) const;
  // The job `dep` names (an array's task by index, or a job), nullptr when it is not in `jobs`.
  const JobRecord* Target(const Dependency& dep, const JobTable& jobs) const;
  // What `dep` waits for now: its target's state ("RUNNING", "4/6 ended"); a target that is not
  // in memory (a damaged store) is a missing one that can never end well.
  DependencyTarget TargetOf(const Dependency& dep, const JobTable& jobs) const;
  // Why `job` may not start because of other jobs: unmet dependencies, then its array's
  // throttle; nullopt when nothing holds it back.
  std::optional<std::string> HeldBack(const JobRecord& job) const;

  // The verdict on one stale waiting job: free (every dependency met), never (cancel it, with
  // `reason`), or still waiting (with `reason`, "waiting for afterok:12 (RUNNING)").
  struct Verdict {
    enum Kind { kFree, kNever, kWaiting };
    JobId job;
    Kind kind;
    std::string reason;
  };
  // The next stale waiting job's verdict (lowest id first); nullopt when none is stale. A free
  // or never job waits no more. The coordinator applies it before asking for the next: a
  // cancellation makes the jobs waiting on that job stale in turn.
  std::optional<Verdict> SettleNext(const JobTable& jobs);

 private:
  std::map<JobId, JobArray> arrays_;  // by array id
  std::map<JobId, std::vector<JobId>> dependents_;
  std::set<JobId> stale_;
  std::map<JobId, std::string> waiting_;  // QUEUED jobs not yet free to start, with the reason
  std::map<JobId, int> named_by_active_;
};

}  // namespace podsched::core
