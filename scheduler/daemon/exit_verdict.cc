#include "scheduler/daemon/exit_verdict.h"

namespace podsched::daemon {
namespace {

constexpr char kGraceReason[] = "killed after the grace period (SIGTERM not honoured)";

}  // namespace

std::optional<ExitVerdict> VerdictOf(const bus::Exited& m, bool past_grace) {
  ExitVerdict v;
  switch (m.reason()) {
    case bus::Exited::COMPLETED:
      v.kind = core::ExitKind::kSucceeded;
      break;
    case bus::Exited::PREEMPTED:
      v.kind = core::ExitKind::kPreempted;
      v.reason = "preempted (exit 75)";
      break;
    case bus::Exited::KILLED_AFTER_GRACE:
      v.kind = core::ExitKind::kKilled;
      v.reason = kGraceReason;
      break;
    case bus::Exited::KILLED:
      v.kind = core::ExitKind::kKilled;
      v.reason = past_grace ? kGraceReason : "killed";
      break;
    case bus::Exited::FAILED:
      v.reason = m.exit_code() < 0 ? "killed by signal " + std::to_string(-m.exit_code())
                                   : "exit code " + std::to_string(m.exit_code());
      break;
    case bus::Exited::RELEASED:
      v.released = true;
      return v;
    default:
      return std::nullopt;
  }
  if (!m.message().empty()) v.reason += ": " + m.message().substr(0, 1024);
  return v;
}

}  // namespace podsched::daemon
