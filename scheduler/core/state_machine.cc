#include "scheduler/core/state_machine.h"

#include <string>

namespace podsched::core {

bool IsLegalTransition(std::optional<JobState> from, JobState to) {
  using S = JobState;
  if (!from) return to == S::kQueued;
  switch (*from) {
    case S::kQueued:
      return to == S::kPlaced || to == S::kCancelled;
    case S::kPlaced:
      return to == S::kStarting || to == S::kRunning || to == S::kPreempting ||
             to == S::kQueued || to == S::kSucceeded || to == S::kFailed;
    case S::kStarting:
      return to == S::kRunning || to == S::kPreempting || to == S::kQueued ||
             to == S::kSucceeded || to == S::kFailed;
    case S::kRunning:
      return to == S::kPreempting || to == S::kQueued || to == S::kSucceeded ||
             to == S::kFailed;
    case S::kPreempting:
      return to == S::kQueued || to == S::kSucceeded || to == S::kFailed ||
             to == S::kCancelled;
    case S::kSucceeded:
    case S::kFailed:
    case S::kCancelled:
      return false;
  }
  return false;
}

Status CheckTransition(JobId job, std::optional<JobState> from, JobState to) {
  if (IsLegalTransition(from, to)) return Status::Ok();
  std::string from_name = from ? std::string(JobStateName(*from)) : "(new)";
  return Status(StatusCode::kFailedPrecondition,
                "job " + std::to_string(job.value()) + ": illegal transition " + from_name +
                    " -> " + std::string(JobStateName(to)));
}

}  // namespace podsched::core
