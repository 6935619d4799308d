#include "worker/agent/exit_verdict.h"

#include <sys/wait.h>

#include <cstring>

namespace podsched::agent {
namespace {

int32_t SignedCode(int wait_status) {
  if (WIFSIGNALED(wait_status)) return -WTERMSIG(wait_status);
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return -1;
}

}  // namespace

std::string DescribeWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const char* name = sigabbrev_np(WTERMSIG(wait_status));
    return std::string("killed by SIG") + (name ? name : std::to_string(WTERMSIG(wait_status)));
  }
  return "exit code " + std::to_string(SignedCode(wait_status));
}

Verdict ClassifyExit(const ExitFacts& f) {
  Verdict v;
  v.exit_code = SignedCode(f.wait_status);
  if (f.kill_requested) {
    v.reason = ExitReason::kKilled;
    v.message = "killed on request (" + DescribeWaitStatus(f.wait_status) + ")";
  } else if (f.grace_expired) {
    v.reason = ExitReason::kKilledAfterGrace;
    v.message = "SIGKILL after " + std::to_string(f.grace_seconds) + " s grace";
  } else if (v.exit_code == 0 && f.preempt_requested && f.rank_reported_preempted) {
    v.reason = ExitReason::kPreempted;
    v.exit_code = kPreemptedExitCode;
    v.message = "preempted: a rank exited 75 within the grace period, the others 0";
  } else if (v.exit_code == 0) {
    v.reason = ExitReason::kCompleted;
    v.message = "exit code 0";
  } else if (v.exit_code == kPreemptedExitCode) {
    v.reason = ExitReason::kPreempted;
    v.message = f.preempt_requested ? "preempted: exited 75 within the grace period"
                                    : "exited 75 (preempted) without a Preempt";
  } else {
    v.reason = ExitReason::kFailed;
    v.message = DescribeWaitStatus(f.wait_status);
  }
  return v;
}

RankEnd JudgeRankEnd(int wait_status, bool preempt_notice) {
  RankEnd end;
  if (WIFSIGNALED(wait_status)) {
    end.signal = WTERMSIG(wait_status);
  } else if (WIFEXITED(wait_status)) {
    end.exit_code = WEXITSTATUS(wait_status);
    if (end.exit_code == kPreemptedExitCode && preempt_notice) {
      end.exit_code = 0;
      end.report_preempted = true;
    }
  } else {
    end.exit_code = 127;  // not an end (stopped): never passed by waitpid without WUNTRACED
  }
  return end;
}

int SshExitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return 255;
}

const char* ExitReasonName(ExitReason r) {
  switch (r) {
    case ExitReason::kCompleted: return "COMPLETED";
    case ExitReason::kFailed: return "FAILED";
    case ExitReason::kPreempted: return "PREEMPTED";
    case ExitReason::kKilledAfterGrace: return "KILLED_AFTER_GRACE";
    case ExitReason::kKilled: return "KILLED";
    case ExitReason::kReleased: return "RELEASED";
  }
  return "?";
}

}  // namespace podsched::agent
