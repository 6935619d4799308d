// The rule that decides whether a dependency is met. How users write arrays and dependencies
// is job_grammar.h (a leaf library podctl links without the core).
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/core/job.h"
#include "scheduler/core/job_grammar.h"

namespace podsched::core {

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
