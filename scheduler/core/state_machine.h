// The job state machine (docs/scheduler.md, "States and epochs"): which transitions are legal.
//
//   (submit) -> QUEUED
//   QUEUED     -> PLACED | CANCELLED
//   PLACED     -> STARTING | RUNNING | PREEMPTING | QUEUED | SUCCEEDED | FAILED
//   STARTING   -> RUNNING | PREEMPTING | QUEUED | SUCCEEDED | FAILED
//   RUNNING    -> PREEMPTING | QUEUED | SUCCEEDED | FAILED
//   PREEMPTING -> QUEUED | SUCCEEDED | FAILED | CANCELLED
// A job holding hosts is cancelled through PREEMPTING (graceful stop first). QUEUED from a
// holding state is a requeue (host failure, retry after a failure). Terminal states are final.
//
// Pure; thread-safe.
#pragma once

#include <optional>

#include "common/status.h"
#include "scheduler/core/job.h"

namespace podsched::core {

// `from` nullopt means submission (only QUEUED is legal).
bool IsLegalTransition(std::optional<JobState> from, JobState to);
// OK, or FailedPrecondition "job 5: illegal transition SUCCEEDED -> RUNNING".
Status CheckTransition(JobId job, std::optional<JobState> from, JobState to);

}  // namespace podsched::core
