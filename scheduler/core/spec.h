// Job spec validation: what Scheduler::Submit checks before a job is queued.
//
// Pure; thread-safe.
#pragma once

#include "common/status.h"
#include "pod/accelerator.h"
#include "pod/fleet.h"
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
inline constexpr int kMaxSlices = 64;  // JobSpec::slices

// Which rules apply: a new submission gets every rule; a spec loaded from the job store was
// accepted when it was submitted and is checked only against rules that held then (a rule added
// later, such as the reserved env names, must not stop podsched from loading old jobs).
enum class SpecOrigin { kSubmission, kStored };

// Checks every field of `spec` against the fleet (its type must fit some pod) and returns the parsed accelerator type, or an
// InvalidArgument error naming the field and the fix ("max_restarts is -1; must be 0..100").
// A submission may not set env names of the job contract (common/env_contract.h), nor ask for
// more slices than one zone of the fleet holds when empty.
// What the spec makes podsched keep, in bytes (its strings: name, command, args, env), for the
// per-user bound on the specs of jobs that have not ended.
int64_t SpecBytes(const JobSpec& spec);

Result<pod::AcceleratorType> ValidateSpec(const JobSpec& spec, const pod::Fleet& fleet,
                                          SpecOrigin origin = SpecOrigin::kSubmission);

}  // namespace podsched::core
