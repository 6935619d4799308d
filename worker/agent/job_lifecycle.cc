#include "worker/agent/job_lifecycle.h"

namespace podsched::agent {

bool JobLifecycle::Preempt(MonotonicTime now, int32_t grace_seconds) {
  if (preempt_ || kill_) return false;
  preempt_ = true;
  grace_seconds_ = grace_seconds;
  grace_deadline_ = now + std::chrono::seconds(grace_seconds);
  return true;
}

std::vector<pid_t> JobLifecycle::RanksToTerminate(
    MonotonicTime now, const std::vector<pid_t>& ranks,
    const std::function<bool(pid_t)>& handles_sigterm) {
  std::vector<pid_t> out;
  if (!preempt_ || killing()) return out;
  for (pid_t p : ranks) {
    if (termed_.count(p)) continue;
    const MonotonicTime seen = rank_seen_.try_emplace(p, now).first->second;
    if (!handles_sigterm(p) && now - seen < kHandlerWait) continue;
    termed_.insert(p);
    out.push_back(p);
  }
  return out;
}

bool JobLifecycle::GraceOver(MonotonicTime now, bool ranks_alive) {
  if (!preempt_ || killing() || now < grace_deadline_) return false;
  if (!ranks_alive && grace_extensions_ < kMaxGraceExtensions) {
    // The ranks exited in time; mpirun and orted are still winding down.
    ++grace_extensions_;
    grace_deadline_ = now + kGraceExtension;
    return false;
  }
  grace_expired_ = true;
  return true;
}

bool JobLifecycle::MayRelease(MonotonicTime now, bool every_host_had_session,
                              Duration start_timeout) const {
  // A job preempted while mpirun is still starting its daemons stays until the grace ends, so
  // the late rsh request is accepted and its ranks get the SIGTERM (not a refusal that turns
  // the preemption into a failure).
  const bool preempt_over = preempt_ && now >= grace_deadline_;
  const bool timed_out = now - launched_at_ > start_timeout;
  return every_host_had_session || kill_ || preempt_over || timed_out;
}

}  // namespace podsched::agent
