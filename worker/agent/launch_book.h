// The agent's bookkeeping of epochs and exits (docs/bus.md, "Launch" and "Preempt, Kill, exit").
//
// - the highest epoch seen per job: a Launch not above it is stale (re-delivery is harmless);
// - at most one epoch per job runs: a newer Launch replaces (kills first) the running one;
// - Exited reports stay unacknowledged (resent with every heartbeat) until an Ack names them.
//
// Thread safety: one thread (the agent's loop).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "proto/bus.pb.h"
#include "worker/agent/exit_verdict.h"

namespace podsched::agent {

struct ExitReport {
  JobEpoch job;
  ExitReason reason = ExitReason::kReleased;
  int32_t exit_code = 0;
  int64_t last_checkpoint_step = 0;
  std::vector<int32_t> hosts;
  std::string message;
};

// The bus form of an exit report.
void ToProto(const ExitReport& report, bus::Exited& exited);

class LaunchBook {
 public:
  enum class Decision {
    kStart,          // new job (or newer epoch of one that no longer runs)
    kStale,          // epoch not above the highest seen: ignore
    kReplaceOlder,   // an older epoch still runs: kill it, start this one when it is gone
  };
  struct Outcome {
    Decision decision = Decision::kStale;
    int64_t older_epoch = 0;  // for kReplaceOlder
  };

  // Records the Launch's epoch as the highest seen when it is not stale.
  Outcome OnLaunch(JobEpoch launch);
  int64_t HighestEpoch(JobId job) const;

  // The epoch of `job` that runs on this agent (has processes or is starting).
  void MarkRunning(JobEpoch je);
  void MarkEnded(JobEpoch je);
  std::optional<int64_t> RunningEpoch(JobId job) const;
  bool IsRunning(JobEpoch je) const;

  // An exit to report until acknowledged. A second report for the same (job, epoch) replaces
  // the first.
  void AddExit(ExitReport report);
  const std::vector<ExitReport>& unacked() const { return unacked_; }
  // Forgets the named exits; names that are not pending are ignored.
  void Ack(const std::vector<JobEpoch>& acked);

 private:
  std::map<JobId, int64_t> highest_;
  std::map<JobId, int64_t> running_;
  std::vector<ExitReport> unacked_;
};

}  // namespace podsched::agent
