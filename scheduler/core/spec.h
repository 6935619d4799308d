// Job spec validation: what Scheduler::Submit checks before a job is queued.
//
// Pure; thread-safe.
#pragma once

#include "common/status.h"
#include "pod/accelerator.h"
#include "pod/pod.h"
#include "scheduler/core/job.h"

namespace podsched::core {

// Limits on spec fields (bytes or counts).
inline constexpr int kMaxNameLength = 128;
inline constexpr int kMaxUserLength = 64;
inline constexpr int kMaxCommandLength = 4096;
inline constexpr int kMaxArgs = 256;
inline constexpr int kMaxEnv = 256;
inline constexpr int kMaxPriority = 1000;
inline constexpr int kMaxRanksPerHost = 64;
inline constexpr int kMaxRestarts = 100;

// Checks every field of `spec` against `pod` and returns the parsed accelerator type, or an
// InvalidArgument error naming the field and the fix ("max_restarts is -1; must be 0..100").
Result<pod::AcceleratorType> ValidateSpec(const JobSpec& spec, const pod::Pod& pod);

}  // namespace podsched::core
