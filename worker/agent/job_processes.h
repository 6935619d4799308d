// The processes of the jobs running on this agent: one scan of the agent's descendants
// (ProcessTable) sorted into the jobs by their tags, with the rule of whose tag to trust (audit
// M1: a tag holds only for the account its job runs as), a process of an epoch that no longer
// runs here killed at once (never two epochs of one job), and the live set recorded in the state
// dir so that a restarted agent kills what this one left (StateDir::Record).
//
// It knows the running jobs only as a scan needs them (epoch and account uid), and decides
// nothing about their lifecycle: what to signal, and when, is JobRunner's (JobLifecycle).
//
// Who may call it: JobRunner, on the agent's poll thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "worker/agent/process_tree.h"
#include "worker/agent/state_dir.h"

namespace podsched::agent {

class JobProcesses {
 public:
  // A job running here, as a scan needs it: its epoch, and the uid its account runs as
  // (nullopt: none resolved, so no process of it can be another account's).
  struct Running {
    int64_t epoch = 0;
    std::optional<uint32_t> uid;
  };
  // One scan's findings, for the running jobs only.
  struct Found {
    std::map<JobId, std::vector<pid_t>> pids;           // live processes of each job
    std::map<std::pair<JobId, int32_t>, int> ranks_up;  // (job, host) -> live ranks
  };

  explicit JobProcesses(StateDir& state);

  // Walks the descendants, kills those of epochs not in `running`, records the live set.
  Found Scan(std::map<JobId, Running> running);
  // The ranks among `pids` (ProcessTable::IsRank), as of the last scan.
  std::vector<pid_t> RanksAmong(const std::vector<pid_t>& pids) const;
  // SIGKILL to every process tagged (je, host), ranks included, as of the last scan. (The rsh
  // server's call when a session's client is gone: orted puts its ranks in process groups of
  // their own, so the session's process group alone does not reach them.)
  void KillTagged(const JobEpoch& je, int32_t host);
  // SIGKILL to every process of `uid` on this machine; how many got it.
  static int KillProcessesOfUid(uid_t uid);
  // The agent stops with nothing left: the record is cleared.
  void ClearRecord();

 private:
  bool Trusts(pid_t pid, const JobEpoch& je, uint32_t uid);

  StateDir& state_;
  ProcessTable table_;
  std::map<JobId, Running> running_;  // as of the scan under way
  std::set<pid_t> untrusted_warned_;  // pids logged for another account's tag (at most 4096)
};

}  // namespace podsched::agent
