#include "scheduler/core/job.h"

#include <array>
#include <string>

namespace podsched::core {
namespace {

constexpr std::array<std::string_view, 8> kStateNames = {
    "QUEUED", "PLACED", "STARTING", "RUNNING", "PREEMPTING", "SUCCEEDED", "FAILED", "CANCELLED"};

}  // namespace

std::string_view JobStateName(JobState state) {
  return kStateNames.at(static_cast<size_t>(state));
}

Result<JobState> ParseJobState(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == name) return static_cast<JobState>(i);
  }
  return InvalidArgument(std::string(name) +
                         " is not a job state; valid: QUEUED, PLACED, STARTING, RUNNING, "
                         "PREEMPTING, SUCCEEDED, FAILED, CANCELLED");
}

std::string_view LauncherName(Launcher launcher) {
  return launcher == Launcher::kExec ? "exec" : "mpi";
}

Result<Launcher> ParseLauncher(std::string_view name) {
  if (name.empty() || name == "mpi") return Launcher::kMpi;
  if (name == "exec") return Launcher::kExec;
  return std::unexpected(Status(StatusCode::kInvalidArgument,
                                "launcher '" + std::string(name.substr(0, 32)) +
                                    "' is not one of: mpi (mpirun across the slice), exec (each "
                                    "host starts its ranks itself)"));
}

bool IsTerminal(JobState state) {
  return state == JobState::kSucceeded || state == JobState::kFailed ||
         state == JobState::kCancelled;
}

bool HoldsHosts(JobState state) {
  return state == JobState::kPlaced || state == JobState::kStarting ||
         state == JobState::kRunning || state == JobState::kPreempting;
}

}  // namespace podsched::core
