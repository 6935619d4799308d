// The agent's state directory: which processes it is responsible for, so that a restarted agent
// (after kill -9) can kill what a previous run left behind (docs/podworker.md).
//
// File `processes`: one "PID STARTTIME" line per process (start time guards against pid reuse),
// rewritten atomically (temp + rename) whenever the set changes.
//
// Directory `jobs/JOB.EPOCH/hHOST/`: what the agent keeps for a rank's host while the epoch runs,
// e.g. the preemption notice POD_PREEMPT_FILE; removed when the epoch ends here.
//
// Thread safety: one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"

namespace podsched::agent {

class StateDir {
 public:
  explicit StateDir(std::string path) : path_(std::move(path)) {}
  // Creates the directory (and parents).
  Status Open();
  const std::string& path() const { return path_; }

  // SIGKILLs every recorded process that still exists with the recorded start time (and its
  // process group when it leads one), waits up to `wait` for them to go, and clears the
  // record. Returns how many were killed.
  int KillLeftovers(Duration wait, const MonotonicClock& clock);

  // Records the processes (pid, start time); no write when unchanged (an empty set after
  // KillLeftovers means no file).
  Status Record(std::vector<std::pair<pid_t, uint64_t>> processes);

  // POD_PREEMPT_FILE of (job, epoch) on `host`: jobs/JOB.EPOCH/hHOST/preempt (not created).
  std::string PreemptFile(const JobEpoch& je, int32_t host) const;
  // Creates jobs/JOB.EPOCH/hHOST/ for each host.
  Status CreateJobDirs(const JobEpoch& je, const std::vector<int32_t>& hosts);
  // Writes `text` to the file atomically (temp + rename: a reader sees all of it or nothing).
  Status WriteAtomically(const std::string& file, const std::string& text);
  // Removes jobs/JOB.EPOCH/ and everything in it.
  void RemoveJobDirs(const JobEpoch& je);

 private:
  std::string path_;
  std::vector<std::pair<pid_t, uint64_t>> recorded_;
};

}  // namespace podsched::agent
