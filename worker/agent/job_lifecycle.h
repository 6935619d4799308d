// The signals and deadlines of one job (one epoch) on an agent, from its Launch to the end of
// its processes (docs/bus.md, "Preempt, Kill, exit"):
// - Preempt: SIGTERM to each rank once it handles SIGTERM, or 1 s after it was first seen (a rank
//   still loading its libraries would die of it); when the grace period ends, SIGKILL to
//   everything, unless the ranks are gone and only mpirun/orted are winding down (then up to 5
//   more seconds, 1 s at a time);
// - Kill (or a newer epoch's Launch): SIGKILL at once, and to every process found later;
// - a host that is not the launcher may release the job once each of its hosts had an rsh
//   session, after a Kill or the end of a Preempt's grace, or when no session came within the
//   start timeout.
//
// Pure: the caller passes `now` (a MonotonicClock reading) and what it found in /proc, and sends
// the signals itself. Thread safety: a value owned by one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "common/clock.h"
#include "worker/agent/exit_verdict.h"

namespace podsched::agent {

class JobLifecycle {
 public:
  // How long a rank without a SIGTERM handler is spared; grace extensions while mpirun winds down.
  static constexpr Duration kHandlerWait = std::chrono::seconds(1);
  static constexpr Duration kGraceExtension = std::chrono::seconds(1);
  static constexpr int kMaxGraceExtensions = 5;

  JobLifecycle() = default;
  JobLifecycle(MonotonicTime launched_at, int32_t grace_seconds)
      : launched_at_(launched_at), grace_seconds_(grace_seconds) {}

  // A Preempt with its grace period. false (ignored) after an earlier Preempt or a Kill.
  bool Preempt(MonotonicTime now, int32_t grace_seconds);
  // A Kill: SIGKILL to everything from now on; the verdict is KILLED, also after a grace expiry.
  void Kill() { kill_ = true; }
  // SIGKILL to everything from the agent's side (a newer epoch's Launch, the agent stopping, the
  // grace expiry): KILLED unless the grace has expired (then KILLED_AFTER_GRACE).
  void Abort() {
    if (!grace_expired_) kill_ = true;
  }

  // Of `ranks` (the job's rank processes as now found), those to send SIGTERM now; each pid is
  // returned once. `handles_sigterm` is asked only about ranks not yet signalled.
  std::vector<pid_t> RanksToTerminate(MonotonicTime now, const std::vector<pid_t>& ranks,
                                      const std::function<bool(pid_t)>& handles_sigterm);
  // After a scan of a preempted job: true once, when the grace period is over and everything
  // must get SIGKILL (then grace_expired()).
  bool GraceOver(MonotonicTime now, bool ranks_alive);

  // A host that is not the launcher, its processes gone: whether it may report RELEASED.
  bool MayRelease(MonotonicTime now, bool every_host_had_session, Duration start_timeout) const;

  // Every process found must get SIGKILL (Kill or grace expiry); no new rsh session is accepted.
  bool killing() const { return kill_ || grace_expired_; }
  bool preempted() const { return preempt_; }
  bool grace_expired() const { return grace_expired_; }
  int32_t grace_seconds() const { return grace_seconds_; }
  // The facts for ClassifyExit, with mpirun's wait status.
  ExitFacts Facts(int wait_status) const {
    return {wait_status, kill_, preempt_, grace_expired_, grace_seconds_};
  }

 private:
  MonotonicTime launched_at_{};
  int32_t grace_seconds_ = 0;
  bool preempt_ = false, kill_ = false, grace_expired_ = false;
  MonotonicTime grace_deadline_{};
  int grace_extensions_ = 0;
  std::set<pid_t> termed_;                     // ranks already sent SIGTERM
  std::map<pid_t, MonotonicTime> rank_seen_;   // when each rank was first seen after the Preempt
};

}  // namespace podsched::agent
