// Job arrays and dependencies as users write them (Slurm's sbatch --array / --dependency):
//
//   array       "0-99", "1,3,5-9", "0-15:4" (step), each optionally "%N" (at most N tasks hold
//               hosts at once). At most kMaxArrayTasks tasks, indices 0..kMaxArrayIndex.
//   dependency  "afterok:12[:13...]", "afterany:...", "afternotok:..."; several joined by ","
//               must all hold. A target is a job id, an array id (every task of the array) or
//               "ARRAY_INDEX" (one task).
//
// A leaf library (podsched_job_grammar): podctl checks a submission with the parser podsched
// uses, without linking the scheduling core. Whether a dependency is met: dependency.h.
//
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
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

}  // namespace podsched::core
