// The text of /proc files podworker reads, parsed without I/O (process_tree.h does the reads).
//
// Every parser here reads bytes a job can shape (its process name is in /proc/PID/stat, its
// environment in /proc/PID/environ, PODWORKER_TAG is set by the job's own processes), in a
// root agent: none throws, none has undefined behaviour on any input (fuzz target
// proc_text_fuzz); a malformed text gives nullopt / false.
//
// Thread safety: pure functions.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/ids.h"

namespace podsched::agent {

struct ProcInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  uint64_t start_time = 0;  // clock ticks after boot (/proc/PID/stat field 22)
  std::string comm;
  bool zombie = false;  // exited, not yet reaped
};

// /proc/PID/stat: "PID (COMM) STATE PPID ... STARTTIME ...", where COMM may hold spaces and
// parentheses (the last ')' ends it). nullopt when a field is missing or not a number.
std::optional<ProcInfo> ParseProcStat(std::string_view stat, pid_t pid);
// /proc/PID/status: whether the SigCgt or SigIgn mask has signal `sig` (1..64) set.
bool StatusHandlesSignal(std::string_view status, int sig);
// /proc/PID/status: the real uid (the first field of its "Uid:" line); nullopt when missing.
std::optional<uint32_t> StatusRealUid(std::string_view status);
// /proc/PID/environ (NUL-separated NAME=VALUE): the value of the first `name`.
std::optional<std::string> FindEnvVar(std::string_view environ, std::string_view name);

inline constexpr const char* kTagVariable = "PODWORKER_TAG";

// PODWORKER_TAG value of the processes of (job, epoch) on `host`: "JOB:EPOCH:HOST". A rank and
// its descendants carry "JOB:EPOCH:HOST:RANK" (`podworker rank` appends it: rank_env.h).
std::string TagValue(const JobEpoch& je, int32_t host);
// Inverse of TagValue, either form (`rank` -1 without one); false for anything else, numbers
// out of range included.
bool ParseTag(std::string_view tag, JobEpoch& je, int32_t& host, int* rank = nullptr);

}  // namespace podsched::agent
