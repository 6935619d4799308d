// Scheduler: the podsched scheduling core. Pure and clock-injected: every call takes `now`; no
// sockets, threads, wall clock or SQLite. The daemon, the tests and podsim run this same code.
//
// Calls (submit, cancel, preempt, tick, worker reports, host up/down) change the state and return
// the actions the caller must carry out (LaunchPlan, Preempt, Kill). Every state change of a call is
// committed to the JobRepository in one batch before the call returns; a failed commit is
// returned as an error and is fatal for the caller (see repository.h).
//
// Scheduling passes are merged (as in the Mesos allocator): calls mark the scheduler dirty and
// Tick(now) runs at most one pass, and only when something changed or a timer expired (backoff,
// grace period, minimum runtime, preemptible lifetime, provider reclaim). A pass is a sequence of
// small named steps (cycle.h): queue sort, filter (backoff, quota, shape), score (placement
// policy), post-filter (preemption and reservation), permit (strict order or EASY backfill),
// bind (launch). A job that cannot start never blocks others for a reason that is its own
// (backoff, quota, a shape the healthy pod cannot hold).
//
// Host accounting: a job's hosts are released only when every host of its placement has reported
// the processes gone (ReportExited per host, or for all hosts at once). Until then they stay
// allocated even if the job itself has moved on (requeued, failed, cancelled).
//
// Deterministic: the same calls with the same `now`s and seed give the same actions.
// Not thread-safe: one owner (the daemon's strand or the simulator loop) calls it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "pod/accelerator.h"
#include "pod/cost.h"
#include "pod/fleet.h"
#include "scheduler/core/dependency.h"
#include "scheduler/core/job.h"
#include "scheduler/core/repository.h"

namespace podsched::core {

// Everything needed to start one placement of a job, so that whoever carries it out (the bus,
// podsim) never looks the job up again: the slice, the program, and the inputs of the job's
// environment contract (docs/bus.md "Launch"). A copy of the job as it was when it was bound.
struct LaunchPlan {
  JobEpoch job;
  pod::AcceleratorType accelerator;  // parsed when the job was submitted
  std::string pod;                   // name of the pod the (first) slice is in
  pod::Placement placement;          // in that pod's own coordinates
  // Every host of every slice, fleet-wide ids, in rank order: the first slice row-major, then
  // each of more_slices (accelerator.hosts() hosts each). hosts[0] runs mpirun.
  std::vector<HostId> hosts;
  // The same hosts as their pods number them (Fleet::Locate): what the pods' agents and users
  // know them by (a fleet of one pod numbers them alike).
  std::vector<HostId> pod_hosts;
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // the spec's env (opaque to the core)
  int ranks_per_host = 1;
  Launcher launcher = Launcher::kMpi;
  Duration grace_period{0};  // SIGTERM -> SIGKILL
  int restarts = 0;          // failures so far (JobRecord::restarts)
  int preemptions = 0;       // preemptions so far (JobRecord::preemptions)
  std::optional<ArrayTask> array;  // the job's array and index (POD_ARRAY_ID, POD_ARRAY_INDEX)
  UserName user;                   // who submitted it (whose Unix account runs it)
  // A multislice job's other slices (JobSpec::slices): pod and placement, as the first above.
  struct Slice {
    std::string pod;
    pod::Placement placement;
  };
  std::vector<Slice> more_slices;
  std::string zone;  // the (first) slice's pod's zone
  // The job's checkpoint store (JobRecord::checkpoint_store), empty until a launch chose one.
  std::string checkpoint_store;
};
// Every host a job holds (JobRecord::placement, then more_slices), fleet-wide ids in rank order;
// empty when it holds none.
std::vector<HostId> HostsOfJob(const pod::Fleet& fleet, const JobRecord& job);

struct PreemptAction {
  JobEpoch job;
  Duration grace{0};  // SIGTERM now, SIGKILL after grace
  std::vector<HostId> hosts;
  std::string reason;
};
struct KillAction {
  JobEpoch job;
  std::vector<HostId> hosts;
  std::string reason;
};
using Action = std::variant<LaunchPlan, PreemptAction, KillAction>;
using Actions = std::vector<Action>;

// How a job's processes ended, as a worker reports it.
enum class ExitKind {
  kSucceeded,  // exit code 0
  kFailed,     // non-zero exit or crash
  kPreempted,  // exited after SIGTERM with the documented "preempted" code (checkpoint written)
  kKilled,     // SIGKILLed (grace expired, or Kill)
  // No process of the launch ever ran: a PLACED job its agent does not know after a restart
  // (the Launch was lost). Requeued without a restart charged; in any later state, as kKilled.
  kNeverStarted,
};

// A checkpoint store: its URL (opaque to the core) and its zone ("": unknown).
struct CheckpointStore {
  std::string url;
  std::string zone;
};

struct SchedulerConfig {
  // One of ProfileNames() (profile.h): "fair-best-fit" (fair share + best-fit + EASY
  // backfill, the default), "fair-first-fit" (the same with first-fit), "fifo-backfill" (FIFO +
  // first-fit + backfill) or "fifo-first-fit" (FIFO + first-fit, no backfill); preemption is on
  // in all four.
  std::string profile = "fair-best-fit";
  Quota default_quota;                               // for users not configured otherwise
  Duration fair_share_half_life = std::chrono::hours(24);
  Duration aging_step = std::chrono::hours(1);       // +1 effective priority per step waited
  int max_aging_bonus = 10;
  // Jobs a user may have that have not ended (queued or holding hosts); a submission beyond it
  // is refused (kResourceExhausted). Bounds what one user can make podsched keep and sort.
  int max_active_jobs_per_user = 50000;
  // The same for the bytes of those jobs' specs (SpecBytes, an array counts each task): 50,000
  // jobs of 64 KiB specs would otherwise be 3 GiB of one user's memory and store.
  int64_t max_active_spec_bytes_per_user = int64_t{256} << 20;
  // Jobs a user may create per hour, array tasks counted one by one (a token bucket: this many
  // at once, then refilled at this rate). With the active limits above, it bounds how fast one
  // user can make podsched create and store ended jobs by submitting and cancelling (audit H1).
  // In memory only: a restart gives every user a full hour's budget again.
  int max_jobs_created_per_user_per_hour = 50000;
  // How long an ended job stays in memory (lists, /pods, dependencies on it) before the
  // scheduler forgets it; its rows stay in the store, where Scheduler::FindStored reads it back
  // (as Slurm's MinJobAge and sacct). An array goes as a whole after its last task; a job a
  // waiting job depends on, or whose hosts are not all released, stays until it is not. 0: keep
  // every ended job (podsim and the tests; the daemon's default is an hour).
  Duration ended_job_retention{0};
  Duration min_runtime_before_preemption = std::chrono::minutes(10);  // anti-thrash
  // Defragmentation (issue 28 stage 3): an on-demand job blocked only by fragmentation (a pod it
  // may use has as many available hosts as it needs, but no free block of its shape) may move
  // preemptible jobs still inside their minimum runtime (checkpoint, stop, requeue: they start
  // again on the free hosts) instead of waiting for them to come of age. What the moved jobs
  // lose (cores x time since their last checkpoint) is bounded by this many core-seconds an hour
  // (a token bucket holding one hour's worth; in memory, full again after a restart). 0: off.
  double defrag_budget_core_seconds_per_hour = 0;
  // What moving checkpoints across zones costs (JobRecord::egress_usd).
  pod::EgressPricing egress;
  // Where a job's checkpoints go, chosen once at its first launch (JobRecord::checkpoint_store,
  // checkpoint_zone) from its spec and the zone it is placed in; later launches keep it (its
  // checkpoints are there). `zone` is "" for a job that has checkpoints but no store recorded
  // (a job stored before stores were): they are in the default store. Unset: no stores
  // (podsim), nothing is billed.
  std::function<CheckpointStore(const JobSpec& spec, std::string_view zone)>
      choose_checkpoint_store;
  Duration preemptible_lifetime = std::chrono::hours(24);  // 0: unlimited
  double reclaim_rate_per_hour = 0;  // provider reclaims per preemptible allocation-hour
  Duration retry_backoff_base = std::chrono::seconds(30);
  Duration retry_backoff_max = std::chrono::hours(1);
  uint64_t seed = 1;
  // For tests: a pass evaluates every job its memo would skip (QueuedRef::Memo) and CHECKs that
  // the job gets the reason it has, i.e. that skipping it was right.
  bool check_pass_memos = false;
};

// A job array as the scheduler tracks it: its tasks and how many are in each state, kept up to
// date on every transition (so a throttle or a dependency on the array costs O(1) to check).
struct JobArray {
  JobId id;  // the first task's id
  int throttle = 0;
  std::string expression;
  std::map<int, JobId> tasks;           // by index
  std::array<int, 8> by_state{};        // tasks per JobState (its integer value)
  std::optional<JobId> unsuccessful;    // a task that ended FAILED or CANCELLED, if any
  int Count(JobState state) const { return by_state[static_cast<int>(state)]; }
  int Holding() const;  // tasks in PLACED, STARTING, RUNNING, PREEMPTING
  int Ended() const;    // tasks in a terminal state
};

struct SchedulerStats {
  int64_t passes = 0;
  int64_t stale_reports = 0;  // reports with an old epoch, ignored
  int64_t preemptions = 0;    // Preempt actions issued (any cause)
  int64_t launches = 0;
  int64_t events = 0;         // transitions recorded
  int64_t forgotten = 0;      // ended jobs dropped from memory (ended_job_retention)
  // Queued jobs a pass skipped because nothing their reason was made of had changed
  // (QueuedRef::Memo): a pass's cost is the jobs it did not skip.
  int64_t skipped_by_memo = 0;
  // Of those, jobs behind strict order's head that a pass skipped without reading them at all
  // (StrictTail in cycle.h: their user's counts and the strict-order text had not changed).
  int64_t skipped_unread = 0;
  // Jobs told the reason they had, known by its number, without reading theirs (QueuedRef::told).
  int64_t told_known = 0;
  // Defragmentation: preemptible jobs moved for an on-demand job blocked only by fragmentation,
  // and the work they lost (core-seconds since their last checkpoint), within the budget.
  int64_t defrag_moves = 0;
  double defrag_lost_core_seconds = 0;
};

class Scheduler {
 public:
  // Loads `repo` and rebuilds the state from it (jobs holding hosts get their placements back).
  // An ended job that cannot be read, or whose spec the pod no longer accepts (a changed
  // generation or size), is left out and listed in quarantined(). `repo` must outlive the
  // scheduler. Errors: unknown profile, invalid config, load failure, an active job that cannot
  // be read or placed on this pod (named), a stored placement that no longer fits the pod.
  static Result<std::unique_ptr<Scheduler>> Create(pod::Fleet fleet, SchedulerConfig config,
                                                   JobRepository* repo, TimePoint now);
  // A fleet of one pod.
  static Result<std::unique_ptr<Scheduler>> Create(pod::Pod pod, SchedulerConfig config,
                                                   JobRepository* repo, TimePoint now);
  ~Scheduler();

  // Validates (spec.h) and queues a job. Errors name the problem ("v2-12 is not ..."). Its
  // dependencies must name existing jobs (or array tasks) of the same user; the job stays QUEUED
  // while they are unmet (reason "waiting for afterok:12 (RUNNING)") and ends CANCELLED once one
  // can never be met ("dependency never satisfied: job 12 ended FAILED (afterok)").
  // `spec.array` must be unset (SubmitArray sets it).
  Result<JobId> Submit(JobSpec spec, TimePoint now);
  // Queues one job per index of `array` (dependency.h), all validated and committed together
  // (one store batch); the ids are consecutive and the first is the array's id. Returns the ids
  // in index order. Errors as Submit, and for an empty or oversized array; nothing is queued then.
  Result<std::vector<JobId>> SubmitArray(JobSpec spec, const ArraySpec& array, TimePoint now);
  // QUEUED: ends CANCELLED now. Holding hosts: Preempt with the grace period, then CANCELLED
  // when it exits. Error for an unknown or finished job.
  Result<Actions> Cancel(JobId job, TimePoint now);
  // Cancels every task of the array that has not ended, in one store batch. Errors: not an
  // array id, or every task ended already.
  Result<Actions> CancelArray(JobId array, TimePoint now);
  // Manual preemption (podctl preempt): the job is requeued after a graceful stop.
  Result<Actions> Preempt(JobId job, std::string reason, TimePoint now);

  // Timers (grace expiry -> Kill, lifetime, reclaim, backoff) and at most one scheduling pass.
  Actions Tick(TimePoint now);
  // The earliest pending timer, if any: a driver with a virtual clock ticks at that time.
  std::optional<TimePoint> NextTimer() const;
  // True when the next Tick would run a scheduling pass.
  bool dirty() const;

  // Worker reports. A report whose epoch is not the job's current one is ignored and counted
  // (stats().stale_reports); an exit report of an old epoch still frees that epoch's hosts.
  Result<Actions> ReportStarted(JobEpoch job, TimePoint now);
  // Every rank's process of the slice is up: PLACED or STARTING -> RUNNING. (The first progress
  // report also means RUNNING: a program that reports has got past its rendezvous.)
  Result<Actions> ReportRunning(JobEpoch job, TimePoint now);
  // `checkpoint_bytes`: the size of the job's checkpoints, when the report says (a committed
  // checkpoint while the job runs in another zone than its store is billed as egress).
  Result<Actions> ReportProgress(JobEpoch job, int64_t step, int64_t last_checkpoint_step,
                                 TimePoint now,
                                 std::optional<int64_t> checkpoint_bytes = std::nullopt);

  // `host`: the host whose processes are gone; nullopt for every host of the placement.
  Result<Actions> ReportExited(JobEpoch job, std::optional<HostId> host, ExitKind kind,
                               std::string reason, TimePoint now);
  // One host of a placement reports the processes of `job` gone without a verdict on the job (a
  // host other than the one running mpirun: its MPI daemon ended). Only frees that host once the
  // whole lease is gone; the job's state is decided by the ReportExited of the mpirun host (or by
  // HostDown). Stale epochs are fine here (that is how lingering leases end).
  Result<Actions> ReportHostReleased(JobEpoch job, HostId host, TimePoint now);
  Result<Actions> HostDown(HostId host, TimePoint now);
  Result<Actions> HostUp(HostId host, TimePoint now);

  // Admin.
  Status SetQuota(const UserName& user, Quota quota, TimePoint now);

  // Queries.
  const JobRecord* Find(JobId job) const;
  // The accelerator type of a job in memory, parsed once when it came in (the read side converts
  // without parsing again); nullptr when the job is not in memory.
  const pod::AcceleratorType* TypeOf(JobId job) const;
  // A job that is not in memory any more (forgotten after ended_job_retention), read from the
  // store; nullopt when the store has no such job. Find first: this reads the store.
  Result<std::optional<JobRecord>> FindStored(JobId job) const;
  // Ended jobs as the store has them (history, GET /jobs?history=true): forgotten ones and
  // those still in memory alike.
  Result<EndedJobPage> StoredEndedJobs(const EndedJobQuery& query) const;
  // The array whose first task is `array`, or nullptr.
  const JobArray* FindArray(JobId array) const;
  // What `dep` waits for now: its target's state ("RUNNING", "4/6 ended") and its verdict.
  // Unknown targets are kNever.
  std::pair<DependencyTarget, DependencyStatus> DependencyStatusOf(const Dependency& dep) const;
  QuotaUsage UsageOf(const UserName& user) const;
  Quota QuotaOf(const UserName& user) const;
  // Decayed recent usage in core-hours including running allocations (the fair-share key).
  double FairShareUsage(const UserName& user, TimePoint now) const;
  const std::map<JobId, JobRecord>& jobs() const;
  // Ended jobs left out at load (Create), with the reason; they are never loaded again.
  const std::vector<QuarantinedJob>& quarantined() const;
  // The pods and their hosts (HostIds in every call here are the fleet's: pod/fleet.h).
  const pod::Fleet& fleet() const;
  const SchedulerStats& stats() const;
  const SchedulerConfig& config() const;
  // Jobs whose recent unasked exits 75 are counted (the M3 backoff): active jobs only.
  size_t JobsWithUnaskedExits() const;
  // Cores of the job's slice.
  int CoresOf(const JobRecord& job) const;
  // Jobs not in a terminal state.
  int ActiveJobs() const;
  // Their ids: what a view of running and waiting work iterates (never jobs(), which also holds
  // every ended job still kept).
  const std::set<JobId>& ActiveJobIds() const;
  int ActiveJobsOf(const UserName& user) const;
  // Jobs in `state` and cores held per class over every user: kept as jobs change, O(1).
  int64_t JobsIn(JobState state) const;
  QuotaUsage CoresHeld() const;
  // Every user who has submitted or has a quota record, by name.
  std::vector<UserName> KnownUsers() const;
  // The user's egress so far (UserRecord::egress_usd); 0 for an unknown user.
  double EgressUsdOf(const UserName& user) const;

  // The state behind the calls (scheduler_impl.h); named in public so that the steps of a pass
  // (cycle.h) can take it. Code outside scheduler/core never sees its definition.
  class Impl;

 private:
  explicit Scheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace podsched::core
