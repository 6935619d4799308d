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
  // A rank of an MPI job printed kRankPreemptedLine: its program exited 75 after a Preempt, and
  // `podworker rank` told mpirun 0 (JudgeRankEnd).
  bool rank_reported_preempted = false;
};

struct Verdict {
  ExitReason reason = ExitReason::kFailed;
  int32_t exit_code = 0;  // -N: killed by signal N
  std::string message;    // "exit code 3", "SIGKILL after 30 s grace"
};

// The launcher's verdict. Kill wins over everything; then a grace expiry; then the status
// (0 COMPLETED, 75 PREEMPTED, anything else FAILED with the code or -signal). A status of 0 after
// a Preempt with a rank that reported 75 is PREEMPTED (75).
Verdict ClassifyExit(const ExitFacts& facts);

// ---- `podworker rank` of an MPI job (docs/podworker.md, "Preemption under mpirun") ----
//
// mpirun (ORTE) treats a rank's non-zero exit as the job's failure: it sleeps a second, SIGTERMs
// the other ranks, sleeps another, SIGKILLs them, whatever the Preempt's grace. So a rank that
// exits 75 after its checkpoint cost every preemption 2 s of held hosts, and could cut short a
// slower rank still writing its own checkpoint. Under a Preempt (its host's POD_PREEMPT_FILE
// exists), `podworker rank` runs the program as its child and, when it exits 75, prints this
// line on stderr and exits 0: mpirun waits for the other ranks as for a normal end, and the
// agent, which reads mpirun's output before judging the exit, learns of the 75 from the line.
inline constexpr const char* kRankPreemptedLine =
    "podworker rank: the program exited 75 (preempted); mpirun is told 0";

struct RankEnd {
  int exit_code = 0;              // `podworker rank`'s own exit code, when signal is 0
  int signal = 0;                 // else: end by this signal, as the program did
  bool report_preempted = false;  // print kRankPreemptedLine first
};
// How `podworker rank` ends after its program's end (`wait_status`). Every end but 75 under a
// Preempt is passed to mpirun as it is: a failure still ends the job at once.
RankEnd JudgeRankEnd(int wait_status, bool preempt_notice);

// "exit code 3" or "killed by SIGKILL" for a waitpid status.
std::string DescribeWaitStatus(int wait_status);

// ssh's exit status for a waitpid status: the code, or 128+N for signal N.
int SshExitStatus(int wait_status);

const char* ExitReasonName(ExitReason r);

}  // namespace podsched::agent
