// How the end of a job's processes becomes an Exited report (docs/bus.md, "Preempt, Kill, exit").
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace podsched::agent {

// Mirrors bus.proto's Exited.Reason (converted at the edge).
enum class ExitReason { kCompleted, kFailed, kPreempted, kKilledAfterGrace, kKilled, kReleased };

inline constexpr int kPreemptedExitCode = 75;  // podtrain's "checkpoint committed, exited"

struct ExitFacts {
  int wait_status = 0;           // mpirun's status from waitpid
  bool kill_requested = false;   // a Kill arrived (SIGKILL sent at once)
  bool preempt_requested = false;
  bool grace_expired = false;    // SIGKILL sent because the Preempt's grace ran out
  int32_t grace_seconds = 0;
};

struct Verdict {
  ExitReason reason = ExitReason::kFailed;
  int32_t exit_code = 0;  // -N: killed by signal N
  std::string message;    // "exit code 3", "SIGKILL after 30 s grace"
};

// The launcher's verdict. Kill wins over everything; then a grace expiry; then the status
// (0 COMPLETED, 75 PREEMPTED, anything else FAILED with the code or -signal).
Verdict ClassifyExit(const ExitFacts& facts);

// "exit code 3" or "killed by SIGKILL" for a waitpid status.
std::string DescribeWaitStatus(int wait_status);

// ssh's exit status for a waitpid status: the code, or 128+N for signal N.
int SshExitStatus(int wait_status);

const char* ExitReasonName(ExitReason r);

}  // namespace podsched::agent
