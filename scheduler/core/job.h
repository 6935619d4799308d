// The scheduler core's domain types: job specs, job records, states, events, users and quotas.
//
// These are plain values shared by the core, the job store (store/jobdb) and the simulator. They
// carry no behaviour beyond naming; the rules live in scheduler.h / state_machine.h.
//
// Thread safety: value types; safe to copy between threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/shared_text.h"
#include "common/status.h"
#include "pod/fleet.h"

namespace podsched::core {

// How a job's ranks are started (docs/jobspec.md, "The launch contract").
enum class Launcher {
  kMpi = 0,   // one mpirun across the slice (MPI programs, podtrain)
  kExec = 1,  // each host's agent starts ranks_per_host processes itself (torchrun-style)
};
// "mpi" / "exec".
std::string_view LauncherName(Launcher launcher);
// Parses a name produced by LauncherName ("" is mpi); an error lists the valid names.
Result<Launcher> ParseLauncher(std::string_view name);

// Membership of a job in a job array (`podctl submit --array 0-99%10`): every task is a job of
// its own; the array is named by the id of its first task.
struct ArrayTask {
  JobId array_id;          // the id of the array's first task
  int index = 0;           // the task's index (POD_ARRAY_INDEX)
  int throttle = 0;        // at most this many tasks of the array hold hosts at once; 0: no limit
  std::string expression;  // the array as submitted ("0-99%10"), for display
  friend bool operator==(const ArrayTask&, const ArrayTask&) = default;
};

// Slurm's dependency types (sbatch --dependency). The integer values are stable (stored).
enum class DependencyKind {
  kAfterOk = 0,     // the target SUCCEEDED
  kAfterAny = 1,    // the target ended, however
  kAfterNotOk = 2,  // the target ended FAILED or CANCELLED
};

// "afterok:12" (job 12; every task when 12 is an array id) or "afterok:12_3" (task 3 of array 12).
struct Dependency {
  DependencyKind kind = DependencyKind::kAfterOk;
  JobId job;
  std::optional<int> array_index;
  friend bool operator==(const Dependency&, const Dependency&) = default;
};

// What a user asks for. `accelerator` stays text here ("v2-32"); the scheduler parses it against
// its pod when the job is submitted (ValidateSpec in spec.h).
struct JobSpec {
  std::string name;
  UserName user;
  std::string accelerator;  // "v2-8", "v2-32", ...
  bool preemptible = false;
  int priority = 0;  // higher runs first; 0..kMaxPriority
  // Multislice (issue 28, stage 2): this many slices of `accelerator`, placed all or nothing, in
  // one pod or across the pods of one zone. Quota counts them all. (Beside `preemptible`: a pass
  // reads both for every job it judges, and a field further down cost it a cache line.)
  int slices = 1;
  std::string command;
  std::vector<std::string> args;           // opaque to the core
  std::map<std::string, std::string> env;  // opaque to the core
  int ranks_per_host = 1;
  Launcher launcher = Launcher::kMpi;
  Duration checkpoint_interval{0};  // 0: the job does not checkpoint periodically
  Duration grace_period = std::chrono::seconds(30);  // SIGTERM -> SIGKILL
  Duration max_runtime{0};                            // 0: unlimited
  int max_restarts = 3;                               // failures tolerated before FAILED
  std::optional<Duration> expected_runtime;           // for backfill; else max_runtime
  std::optional<ArrayTask> array;                     // set by Scheduler::SubmitArray
  std::vector<Dependency> dependencies;               // all must be met before the job starts
  // Where it may run (empty: anywhere): the pods of a zone, or one pod by name. Checked against
  // the fleet at submission; a stored job whose pod or zone left the configuration waits, saying
  // so, rather than run elsewhere.
  std::string zone;
  std::string pod;
  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

// The TensorCores a job of `spec` holds (what quotas count): its type's, times its slices.
inline int JobCores(const JobSpec& spec, const pod::AcceleratorType& type) {
  return type.tensor_cores() * spec.slices;
}

// docs/scheduler.md, "States and epochs": QUEUED -> PLACED -> STARTING -> RUNNING -> (PREEMPTING -> QUEUED) ...
//                      -> SUCCEEDED | FAILED | CANCELLED
// The integer values are stable (the job store persists them).
enum class JobState {
  kQueued = 0,
  kPlaced = 1,      // hosts chosen and reserved; Launch sent
  kStarting = 2,    // a worker reported the processes started
  kRunning = 3,     // the job reported progress
  kPreempting = 4,  // Preempt sent; hosts held until every host reports the processes gone
  kSucceeded = 5,
  kFailed = 6,
  kCancelled = 7,
};
inline constexpr int kJobStateCount = 8;
// "QUEUED", "PLACED", ... (upper case, as users see them).
std::string_view JobStateName(JobState state);
// Parses a name produced by JobStateName.
Result<JobState> ParseJobState(std::string_view name);
bool IsTerminal(JobState state);
// True while the job holds hosts (PLACED, STARTING, RUNNING, PREEMPTING).
bool HoldsHosts(JobState state);

// The scheduler's record of one job. The store persists every field; loading the records back
// rebuilds the scheduler's state.
struct JobRecord {
  JobId id;
  JobSpec spec;
  JobState state = JobState::kQueued;
  int64_t epoch = 0;     // epoch of the current (or last) placement; 0 = never placed
  int restarts = 0;      // failures counted against spec.max_restarts
  int preemptions = 0;   // times the job was preempted (not counted against max_restarts)
  // Why the job waits (QUEUED), why it is being preempted (PREEMPTING), or why it ended. Shared:
  // a pass tells thousands of queued jobs one text (common/shared_text.h).
  SharedText reason;
  std::optional<pod::FleetPlacement> placement;  // set while HoldsHosts(state); the first slice
  int64_t step = 0;                  // last reported training step
  int64_t last_checkpoint_step = 0;  // last committed checkpoint's step
  TimePoint submit_time{};
  TimePoint start_time{};            // when the current epoch was placed
  TimePoint last_checkpoint_time{};  // when last_checkpoint_step was committed (or start_time)
  TimePoint end_time{};              // when the job reached a terminal state
  TimePoint not_before{};            // retry backoff: not placed before this time
  TimePoint preempt_deadline{};      // PREEMPTING: grace ends (Kill is sent after it)
  std::optional<JobId> reserved_for;  // PREEMPTING: whose preemption this is, if any
  bool cancel_requested = false;      // PREEMPTING: ends CANCELLED instead of QUEUED
  double usage_core_hours = 0;        // cores x hours held, over all epochs (closed ones)
  Duration run_time{0};               // time held over all closed epochs
  // A multislice job's slices after the first, while it holds hosts. (Last: a pass reads the
  // fields above for every queued job, and this one for none.)
  std::vector<pod::FleetPlacement> more_slices;
  // Where its checkpoints are (docs/scheduler.md, "Zones and checkpoint stores"): the store its
  // first launch chose (opaque to the core; the daemon sets it, SetCheckpointStore) and that
  // store's zone ("": unknown, never billed). A launch or a checkpoint in another zone crosses
  // zones: egress of `checkpoint_bytes` (the last size the job reported), priced by
  // SchedulerConfig::egress and summed over its life.
  std::string checkpoint_store;
  std::string checkpoint_zone;
  int64_t checkpoint_bytes = 0;
  int64_t egress_bytes = 0;
  double egress_usd = 0;
  friend bool operator==(const JobRecord&, const JobRecord&) = default;
};

// Every slice a job holds, in rank order: `placement`, then `more_slices`; empty when it holds
// none.
inline std::vector<pod::FleetPlacement> SlicesOf(const JobRecord& job) {
  if (!job.placement) return {};
  std::vector<pod::FleetPlacement> slices{*job.placement};
  slices.insert(slices.end(), job.more_slices.begin(), job.more_slices.end());
  return slices;
}

// One state transition. Every transition of every job produces exactly one event; submission is
// the event with no `from` state.
struct JobEvent {
  int64_t seq = 0;  // global, increasing
  TimePoint time{};
  JobId job;
  int64_t epoch = 0;
  std::optional<JobState> from;  // nullopt: submission
  JobState to = JobState::kQueued;
  std::string reason;
  // The placement's pod and its hosts, by that pod's own ids, when the transition concerns them:
  // what the store keeps and users read stays true when the configured pods are reordered.
  std::vector<HostId> hosts;
  std::string pod;
  // A multislice job's other slices, each named the same way (hosts by their pod's own ids).
  struct Slice {
    std::string pod;
    std::vector<HostId> hosts;
    friend bool operator==(const Slice&, const Slice&) = default;
  };
  std::vector<Slice> more_slices;
  friend bool operator==(const JobEvent&, const JobEvent&) = default;
};

// A user's quota: cores (TensorCores) the user may hold at once, per class.
struct Quota {
  int on_demand_cores = 40;    // five on-demand v2-8s (a research grant of the time)
  int preemptible_cores = 800; // a hundred preemptible v2-8s
  int Of(bool preemptible) const { return preemptible ? preemptible_cores : on_demand_cores; }
  friend bool operator==(const Quota&, const Quota&) = default;
};

struct UserRecord {
  UserName name;
  Quota quota;
  bool admin = false;
  // Fair share: recent usage in core-hours, decayed exponentially (half-life in the config),
  // as of `usage_as_of`. Running allocations are added on top when the queue is sorted.
  double decayed_core_hours = 0;
  TimePoint usage_as_of{};
  // Dollars of egress billed to the user's jobs so far (JobRecord::egress_usd, summed here when
  // billed, so that it outlives the jobs the scheduler forgets).
  double egress_usd = 0;
  friend bool operator==(const UserRecord&, const UserRecord&) = default;
};

// Cores a user holds now, per class (what the quota limits).
struct QuotaUsage {
  int on_demand_cores = 0;
  int preemptible_cores = 0;
  int Of(bool preemptible) const { return preemptible ? preemptible_cores : on_demand_cores; }
  int& Of(bool preemptible) { return preemptible ? preemptible_cores : on_demand_cores; }
};

}  // namespace podsched::core
