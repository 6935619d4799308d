// Job arrays and dependencies as users write them (Slurm's sbatch --array / --dependency), and
// the rule that decides whether a dependency is met.
//
//   array       "0-99", "1,3,5-9", "0-15:4" (step), each optionally "%N" (at most N tasks hold
//               hosts at once). At most kMaxArrayTasks tasks, indices 0..kMaxArrayIndex.
//   dependency  "afterok:12[:13...]", "afterany:...", "afternotok:..."; several joined by ","
//               must all hold. A target is a job id, an array id (every task of the array) or
//               "ARRAY_INDEX" (one task).
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/core/job.h"

namespace podsched::core {

inline constexpr int kMaxArrayTasks = 10000;
inline constexpr int kMaxArrayIndex = 1000000;
inline constexpr int kMaxDependencies = 64;

struct ArraySpec {
  std::string text;          // as written ("0-99%10")
  std::vector<int> indices;  // ascending, distinct
  int throttle = 0;          // 0: no limit
};

// Errors (kInvalidArgument) name the part that is wrong and the accepted forms.
Result<ArraySpec> ParseArraySpec(std::string_view text);
Result<std::vector<Dependency>> ParseDependencies(std::string_view text);

// "afterok", "afterany", "afternotok".
std::string_view DependencyKindName(DependencyKind kind);
// "afterok:12", "afterok:12_3".
std::string FormatDependency(const Dependency& dep);
// The target as written: "12", "12_3".
std::string TargetName(const Dependency& dep);
// The Slurm form of a whole list, as ParseDependencies reads it ("afterok:12,afterany:13_2").
std::string FormatDependencies(const std::vector<Dependency>& deps);
// "12" or "12_3": how users name a job that is an array task.
std::string TaskName(JobId id, const std::optional<ArrayTask>& array);

// What a dependency's target is now: one job, or every task of an array.
struct DependencyTarget {
  std::string name;   // "job 12", "array 12"
  int jobs = 1;       // jobs the target counts (tasks of an array)
  int succeeded = 0;  // ... that ended SUCCEEDED
  int ended = 0;      // ... in any terminal state
  std::string state;  // one job: its state ("RUNNING"); an array: "4/6 ended"
  // A job of the target that ended FAILED or CANCELLED ("job 12 ended FAILED"); empty if none.
  std::string unsuccessful;
};

enum class DependencyVerdict { kWaiting, kMet, kNever };
struct DependencyStatus {
  DependencyVerdict verdict = DependencyVerdict::kWaiting;
  std::string why_never;  // kNever: "job 12 ended FAILED (afterok)"
};

// afterok: met when every job succeeded, never once one did not. afterany: met when every job
// ended. afternotok: met when every job ended and one did not succeed, never when all succeeded.
DependencyStatus EvaluateDependency(DependencyKind kind, const DependencyTarget& target);

}  // namespace podsched::core
