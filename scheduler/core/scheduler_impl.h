// Private state of Scheduler (the coordinator over its owners: HostLeases, Accounting, Timers,
// Outbox), shared by scheduler.cc, sweeps.cc, retention.cc and run_pass.cc. Not public API.
#pragma once

#include <array>
#include <initializer_list>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pod/placement.h"
#include "scheduler/core/accounting.h"
#include "scheduler/core/arrays_dependencies.h"
#include "scheduler/core/cycle.h"
#include "scheduler/core/host_leases.h"
#include "scheduler/core/job_table.h"
#include "scheduler/core/outbox.h"
#include "scheduler/core/profile.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/core/spec.h"
#include "scheduler/core/timers.h"

namespace podsched::core {

// Exits 75 without a Preempt that a job may make within an hour before it backs off (an agent
// stopped, a provider's notice: each is a real preemption; a program looping on exit 75 is not).
constexpr int kFreeUnaskedExits = 3;

// "job 12", as messages name a job.
inline std::string JobName(JobId id) { return "job " + std::to_string(id.value()); }

// Adds to `state` (a LoadEndedSince) the ended jobs its active jobs name in dependencies, and
// every task of a named array (retention.cc).
Status LoadDependencyTargets(JobRepository& repo, StoredState* state);

class Scheduler::Impl {
 public:
  Impl(pod::Fleet fleet, SchedulerConfig config, Profile profile, JobRepository* repo);

  // --- state ---
  HostLeases hosts;  // the fleet, its leases and reservations (host_leases.h)
  SchedulerConfig config;
  Accounting accounting;  // users, quotas, cores held, fair-share usage (accounting.h)
  Profile profile;  // the pass's step objects (profile.h)
  JobRepository* repo;
  // Jobs in memory, their parsed types, the active set, the counts per state (job_table.h).
  JobTable jobs;
  std::vector<QuarantinedJob> quarantined;  // left out at load
  JobQueue queued;  // QUEUED jobs, in submission order (job_queue.h)
  // Arrays' counts, the dependents index, waiting jobs (arrays_dependencies.h).
  ArraysAndDependencies arrays_deps;
  Timers timers;  // wake-ups, epochs' timers, kills sent (timers.h)
  // Retention (config.ended_job_retention > 0): ended jobs in memory, by when they may be
  // forgotten (a job an active job names in a dependency stays: a waiting job is judged by its
  // targets' states, again after a restart).
  std::set<std::pair<TimePoint, JobId>> forget_at;
  // Forgets the ended jobs whose retention is over (Tick), and one job (Forget).
  void ForgetEndedJobs(TimePoint now);
  void Forget(JobId job);
  // Exits 75 of a job without a Preempt of ours, within the last hour (ApplyExit): the first
  // few are requeued at once, later ones back off. In memory only: a restart forgets them.
  std::map<JobId, std::deque<TimePoint>> unasked_exits;
  std::mt19937_64 rng;
  bool dirty = true;
  SchedulerStats stats;
  // The pass's views of the pods (Pass::Inputs::views), kept so that their memory is reused.
  std::vector<pod::Pod> pass_views;
  // And its views without the backfill head's rectangle (Pass::Inputs::head_views).
  std::vector<pod::Pod> pass_head_views;
  // Where a pass's QueueSort puts its order (its memory reused from pass to pass).
  std::vector<QueueEntry> pass_order;
  // The backfill heads passes had, which the queued jobs' memos name (Pass::Inputs).
  PassHeads pass_heads;
  // Numbers of the texts passes give many jobs (Pass::Inputs::reason_texts).
  ReasonTexts reason_texts;
  StrictTail strict_tail;  // the jobs behind strict order's head, between passes (cycle.h)
  // What defragmentation may still make moved jobs lose (Pass::Inputs::defrag), in core-seconds;
  // unset when config.defrag_budget_core_seconds_per_hour is 0.
  std::optional<TokenBucket<TimePoint>> defrag_budget;

  // --- the current call's output ---
  Outbox outbox;  // actions, changed jobs and events, until Finish commits them (outbox.h)

  // --- helpers (scheduler.cc) ---
  // The job in memory, or NotFound ("job 12 does not exist").
  Result<JobRecord*> Existing(JobId id) {
    JobRecord* job = jobs.Find(id);
    if (job == nullptr) return NotFound(JobName(id) + " does not exist");
    return job;
  }
  int Cores(JobId job) const { return jobs.CoresOf(job); }
  // The job whose current epoch holds the lease, or nullptr for a lingering lease (the job moved
  // on; its hosts have not all reported the processes gone).
  const JobRecord* LiveOwner(const Lease& lease) const;
  void Enqueue(JobRecord& job, TimePoint now);
  // Checks legality, records the event, updates quota use and fair-share usage when the job
  // starts or stops holding hosts. Returns the legality error without changing anything.
  Status Transition(JobRecord& job, JobState to, std::string reason, TimePoint now);
  // Sets the job's reason, stored only when it changed; a queued job's QueuedRef::told is
  // forgotten then.
  void SetReason(JobRecord& job, SharedText reason);
  void SetReason(JobRecord& job, std::string reason) {
    SetReason(job, SharedText(std::move(reason)));
  }
  // SetReason without QueuedRef::told (a caller that sets it); whether the reason changed.
  bool Retell(JobRecord& job, SharedText reason);
  // Places `job` at `p`: allocates, new epoch, PLACED, Launch action, timers.
  // Holds `slices` (one, or a multislice job's) for the job's next epoch and launches it. The
  // Launch describes the first slice (the agents' launch of a multislice job: issue 28 stage 2,
  // not built; only podsim places them).
  void Bind(JobRecord& job, const std::vector<pod::FleetPlacement>& slices, TimePoint now);
  // Bills `job` for `bytes` of its checkpoints moved between its store's zone and `zone` (where
  // it runs) when the two differ and both are known.
  void ChargeEgress(JobRecord& job, std::string_view zone, int64_t bytes, TimePoint now);
  // The timers of an epoch that holds hosts, from its start_time: the preemptible lifetime and
  // max_runtime (a PREEMPTING one: its kill at the deadline); with `draw_reclaim`, also a
  // simulated provider reclaim (drawn at Bind only, not again after a restart).
  void ArmHoldTimers(const JobRecord& job, bool draw_reclaim);
  // Sends Preempt and moves the job to PREEMPTING.
  void StartPreemption(JobRecord& job, std::string reason, std::optional<JobId> reserved_for,
                       TimePoint now);
  // Removes `host` (or every host) from the lease's pending set; a pass may place on what that
  // released.
  void HostGone(JobEpoch owner, std::optional<HostId> host);
  // The wait before the nth retry (n >= 1): retry_backoff_base, doubled each time, at most
  // retry_backoff_max. For failures and for repeated exits 75 alike.
  Duration Backoff(int n) const;
  // After a failure: retry with backoff or FAILED.
  void FailOrRetry(JobRecord& job, const std::string& why, TimePoint now);
  void ApplyExit(JobRecord& job, ExitKind kind, const std::string& reason, TimePoint now);
  // Records a requeue that is no failure and no preemption of ours (an exit 75 of its own, a
  // lost launch) in unasked_exits; past kFreeUnaskedExits within an hour sets the job's backoff.
  // Returns the count within the hour and the backoff (zero while free).
  std::pair<size_t, Duration> CountUnaskedRequeue(JobRecord& job, TimePoint now);
  // The spec's max_runtime counts the time held over all epochs (Slurm's time limit, kept
  // across preemptions): what is left of it when the current epoch started, and whether it is
  // used up at `now` (always false without a limit).
  Duration RuntimeLeftAtStart(const JobRecord& job) const;
  bool RuntimeExhausted(const JobRecord& job, TimePoint now) const;
  std::string MaxRuntimeReason(const JobRecord& job) const;
  // Acts on every timer due at `now` (Timers::PopDue); drops those of epochs that moved on.
  void RunTimers(TimePoint now);
  // A worker's report that the epoch got further: `to` when the job is in one of `from` (an old
  // epoch's report is counted as stale and changes nothing).
  Result<Actions> Advance(JobEpoch je, std::initializer_list<JobState> from, JobState to,
                          const char* reason, TimePoint now);
  // Settles dependencies, commits what the call changed and returns its actions.
  Result<Actions> Finish(TimePoint now);
  // QUEUED: CANCELLED now; holding hosts: a graceful stop first (Scheduler::Cancel).
  void CancelOne(JobRecord& job, TimePoint now);

  // --- arrays and dependencies (sweeps.cc) ---
  // Everything Submit checks before a job is queued (spec, quota, dependency targets); returns
  // the parsed accelerator type.
  // `new_jobs`: how many jobs of this spec the submission adds (an array: its tasks).
  Result<pod::AcceleratorType> CheckSubmission(const JobSpec& spec, int new_jobs,
                                               TimePoint now) const;
  // Queues a checked job: record, submission event, indexes. Returns its id.
  JobId Queue(JobSpec spec, const pod::AcceleratorType& type, TimePoint now);
  // Re-evaluates stale dependencies: met ones free the job, never-met ones cancel it.
  void ResolveDependencies(TimePoint now);

  // --- the scheduling pass (run_pass.cc: the Pass of cycle.h over this state) ---
  void RunPass(TimePoint now);
};

}  // namespace podsched::core
