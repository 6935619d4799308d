// What /proc says about the processes podworker started (Linux only).
//
// podworker is a child subreaper (PR_SET_CHILD_SUBREAPER): every process it started, and every
// process those started, stays its descendant even when an intermediate parent exits (orted's
// ranks are in their own process groups, so process groups alone cannot find them). Each
// process tree it starts carries PODWORKER_TAG=JOB:EPOCH:HOST in its environment, inherited by
// orted and the ranks, which attributes every descendant to a job and host.
//
// Thread safety: functions of the calling process's view of /proc; no shared state.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podsched::agent {

inline constexpr const char* kTagVariable = "PODWORKER_TAG";

struct ProcInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  uint64_t start_time = 0;  // clock ticks after boot (/proc/PID/stat field 22)
  std::string comm;
  bool zombie = false;  // exited, not yet reaped
};

// Every descendant of `root` (not root itself), from /proc/PID/task/TID/children.
std::vector<pid_t> Descendants(pid_t root);
// std::nullopt when the process is gone.
std::optional<ProcInfo> ReadProc(pid_t pid);
// The value of `name` in the process's initial environment (/proc/PID/environ).
std::optional<std::string> ReadEnvVar(pid_t pid, const std::string& name);

}  // namespace podsched::agent
