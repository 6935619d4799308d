// Traces for podsim: the podsim CSV format and the Philly format, read into one job list.
//
// podsim CSV (header required; columns in any order; unknown columns are ignored):
//   submit_time_s,user,accelerator,preemptible,duration_s,priority,checkpoint_interval_s,
//   steps,workload
// - submit_time_s: seconds from the start of the trace (>= 0, at most 100 years; rows may come
//   in any order: the list is the same for every permutation of a file)
// - user: any non-empty text; accelerator: "v2-8", "v2-32", ...; preemptible: 0/1 or true/false
// - duration_s: seconds of work, or empty when steps and workload are given: the duration is
//   then steps x the pod cost model's step time of that workload on that slice (pod/cost.h)
// - priority (default 0), checkpoint_interval_s (default 0: no periodic checkpoint)
// Sweeps and pipelines (optional columns; docs/scheduler.md "Arrays and dependencies in traces"):
// - job_id: the row's id in the trace (> 0, unique), for dependencies to name it
// - array_id, array_index, array_throttle: rows with the same array_id are the tasks of one job
//   array (submitted together at their common submit_time_s, one task per array_index; throttle
//   0 or empty: no limit). They share user, accelerator, preemptible, priority, throttle and
//   dependency; durations may differ. array_id shares job_id's namespace; array rows have no
//   job_id.
// - dependency: Slurm's --dependency with trace ids and ';' in place of ',' (CSV):
//   "afterok:3:5_2;afterany:7" (5 an array id: "5" is every task, "5_2" task 2). A target must
//   be a row submitted no later than this one; at an equal time targets are ordered first, and
//   a cycle is an error naming a row of it.
// - fails: 1 makes every run of the job exit with an error at the end of its duration; the
//   job gets max_restarts 0, so it ends FAILED at once (a failing parent for dependencies).
//
// Philly (public Microsoft trace, `timestamp,duration,num_gpus,gpu_time,cluster`):
// - submit time: timestamp minus the earliest row's timestamp (the public trace is unsorted)
// - one GPU = one v2 TensorCore (a P100's 21 TFLOPS is close to a v2 core's 22.5), rounded up to
//   the smallest v2 slice that holds it: 1-8 GPUs -> v2-8, 9-32 -> v2-32, ... up to v2-512.
//   Jobs needing more than 512 cores are rejected and counted (none in the 2017-09-10 file).
// - user = cluster; duration = duration (seconds)
// - preemptible: a seeded hash of the row's content (and of how many equal rows came before it)
//   puts `preemptible_fraction` of jobs there, so the choice does not depend on row order
// - a negative duration or num_gpus is an error naming the line; a zero duration is rejected
// - checkpoint interval: `checkpoint_interval_s` for every job (the trace has none)
//
// Pure parsing of an in-memory stream; thread-safe.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/core/job.h"

namespace podsched::sim {

struct TraceJob {
  double submit_s = 0;
  std::string user;
  std::string accelerator;
  bool preemptible = false;
  double duration_s = 0;
  int priority = 0;
  double checkpoint_interval_s = 0;
  int64_t job_id = 0;    // trace id (0: none)
  int64_t array_id = 0;  // trace id of the row's array (0: not an array task)
  int array_index = 0;
  int array_throttle = 0;
  std::vector<core::Dependency> dependencies;  // targets are trace ids
  bool fails = false;
  int slices = 1;  // multislice (core::JobSpec::slices); column `slices`, optional
};

struct Trace {
  // By submit time, then by content: every row order of a file gives the same list.
  std::vector<TraceJob> jobs;
  int64_t rejected = 0;        // rows that could not be mapped (Philly: larger than a pod)
};

// Parses the podsim CSV; errors name the line and column ("line 7: duration_s is -3").
Result<Trace> ParsePodsimCsv(std::istream& in);
void WritePodsimCsv(const std::vector<TraceJob>& jobs, std::ostream& out);

struct PhillyOptions {
  double preemptible_fraction = 0.3;
  uint64_t seed = 1;
  double checkpoint_interval_s = 1800;
  int64_t max_rows = 0;  // 0: all
};
Result<Trace> ParsePhilly(std::istream& in, const PhillyOptions& options);

// The smallest v2 type with at least `cores` TensorCores ("v2-8"), or an error beyond v2-512.
Result<std::string> SmallestV2SliceFor(int cores);

}  // namespace podsched::sim
