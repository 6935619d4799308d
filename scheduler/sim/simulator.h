// podsim's discrete-event simulator: the scheduling core (scheduler/core) on a virtual clock,
// with the simulator playing every worker.
//
// Model:
// - A fleet (pod/fleet.h): `pods` full pods of one generation, or the pods of `fleet` (full
//   pods, partial grids, standalone devices). One Scheduler serves the whole fleet, as podsched
//   does: it chooses the pod and the rectangle in one decision, and quotas and fair share are
//   fleet-wide (issue 28).
// - Launch: the job starts at once and runs for the rest of its work (trace duration minus the
//   work saved at its last checkpoint). It checkpoints every checkpoint_interval_s of running
//   time and reports the progress (step = seconds of work done) to the core.
// - Preempt: the job finishes its step and exits `stop_delay_s` later (at most its grace); the
//   work since its last periodic checkpoint is lost. Kill: exits at once, same loss.
// - Provider reclaims (rate per preemptible allocation-hour) and the 24 h preemptible lifetime
//   are the core's; host failures (rate per host-day) are drawn here, repaired after
//   `host_repair_s`.
// - The scheduler ticks on a grid of `tick_s` when something changed, and at its timers.
// - Sweeps (trace.h): the rows of an array are submitted together (Scheduler::SubmitArray) when
//   they arrive; a row's dependencies are mapped to the core's ids of the rows they name. A row
//   that `fails` exits with an error at the
//   end of its duration. Jobs the core ends because a dependency can never be met are counted
//   in SimResult::cancelled with the core's reason.
//
// Deterministic for (trace, options). Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "pod/accelerator.h"
#include "pod/fleet.h"
#include "scheduler/core/job.h"
#include "scheduler/sim/trace.h"

namespace podsched::sim {

struct SimOptions {
  std::string profile = "fair-best-fit";
  int pods = 1;
  pod::Generation generation = pod::Generation::kV2;
  // When not empty, the fleet replayed on (`pods` and `generation` then do not apply).
  std::vector<pod::FleetPodSpec> fleet;
  uint64_t seed = 1;
  double reclaim_rate_per_hour = 0;
  double host_failures_per_host_day = 0;
  double host_repair_s = 3600;
  double tick_s = 10;
  double stop_delay_s = 5;
  // Per-user quota over the fleet; 0 means the fleet's size (no quota).
  int quota_on_demand_cores = 0;
  int quota_preemptible_cores = 0;
  double min_runtime_before_preemption_s = 600;
  // SchedulerConfig::defrag_budget_core_seconds_per_hour (0: no defragmentation).
  double defrag_budget_core_seconds_per_hour = 0;
  // Zones and checkpoint stores (docs/scheduler.md): every job's checkpoints are this many GiB
  // and live in the zone it first runs in; a job resumed in another zone, and each checkpoint it
  // writes there, is billed egress (SchedulerConfig::egress). 0: not modelled (no egress).
  double checkpoint_gib = 0;
  // Backfill estimates: the trace's duration (an oracle, as in many backfill studies), or none
  // (no estimate: backfill then keeps every long job off the head's rectangle).
  bool exact_estimates = true;
  double timeseries_interval_s = 3600;
  // The replay ends early when, after the last arrival, no job started for the first time or
  // ended for this long (simulated seconds): what is left can never finish, and is reported in
  // SimResult::unfinished_jobs with its reason instead of running on without end. 0: twice the
  // longest job of the trace, and at least 30 days.
  double stall_horizon_s = 0;
  std::function<void(double fraction_done)> progress;  // called about every 1%
  // For tests: SchedulerConfig::check_pass_memos (slower; a wrong skip aborts).
  bool check_pass_memos = false;
};

struct ClassMetrics {
  int64_t jobs = 0;       // submitted
  int64_t completed = 0;  // SUCCEEDED
  std::vector<double> jct_s;   // completion - submit, completed jobs
  std::vector<double> wait_s;  // first start - submit, jobs that started
  double work_lost_core_h = 0;
  double useful_core_h = 0;    // completed work
  double held_core_h = 0;      // cores x time held, every epoch
  double cost_usd = 0;         // slice prices x time held, plus egress
  double egress_gib = 0;       // checkpoints moved across zones (SimOptions::checkpoint_gib)
  double egress_usd = 0;
  int64_t preemptions = 0;     // times a job of this class was preempted or killed
};

struct Sample {
  double t_s = 0;
  double utilization = 0;  // allocated hosts / hosts
  int64_t queued = 0;
  int64_t running = 0;
};

// A job the replay refused or could not finish, with the reason (the core's own for a refusal or
// a job still waiting).
struct JobOutcome {
  int64_t trace_index = 0;
  std::string user;
  std::string accelerator;
  bool preemptible = false;
  std::string reason;
};

struct SimResult {
  std::string profile;
  int64_t jobs = 0;              // in the trace
  int64_t rejected = 0;          // refused at submit (validation or quota)
  int64_t unfinished = 0;        // never finished (e.g. could never be placed)
  std::vector<JobOutcome> rejected_jobs;    // every refused job, in trace order
  std::vector<JobOutcome> unfinished_jobs;  // every unfinished job, in trace order
  int64_t failed = 0;
  // Ended CANCELLED by the core because a dependency can never be met (the core's reason).
  int64_t cancelled = 0;
  std::vector<JobOutcome> cancelled_jobs;
  ClassMetrics overall, on_demand, preemptible;
  double utilization = 0;        // allocated host-time / (hosts x makespan)
  double makespan_s = 0;         // first submit to last end
  int64_t preemptions = 0;       // Preempt actions issued by the core
  // Of those, jobs moved to defragment (SchedulerStats::defrag_moves), and their lost work.
  int64_t defrag_moves = 0;
  double defrag_lost_core_h = 0;
  bool egress_modelled = false;  // SimOptions::checkpoint_gib > 0: the egress_* figures mean it
  int64_t events = 0;            // simulated events processed
  int64_t passes = 0;            // scheduling passes run
  int64_t stale_reports = 0;
  double wall_s = 0;
  std::vector<Sample> timeseries;
};

Result<SimResult> Simulate(const Trace& trace, const SimOptions& options);

// Simulate for each of `runs` (one per policy, say), up to `threads` of them at once (0: one per
// core; 1: one after the other): the answer comes in the time of the slowest run rather than of
// all of them. Runs share only the trace, which they read, so each result is the one Simulate
// gives alone. `clock` times each run (SimResult::wall_s); each run's SimOptions::progress is
// called from the thread that runs it. Memory: the runs at once each hold their scheduler's state;
// with more than one thread, malloc's M_TOP_PAD is set to 64 MiB for the rest of the process (each
// thread's heap then grows in large steps: simulate_each.cc).
std::vector<Result<SimResult>> SimulateEach(const Trace& trace, const std::vector<SimOptions>& runs,
                                            int threads, const Clock& clock);

}  // namespace podsched::sim
