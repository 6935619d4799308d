// JobDirectories: the directories one job epoch has on this machine, from its start to its end
// (a JobRunner owner, issue 27).
//
//   - the state dir's host directories (jobs/JOB.EPOCH/hHOST, where POD_PREEMPT_FILE and Open
//     MPI's session files live), owned by the job's account;
//   - a scratch directory per host (TMPDIR, POD_SCRATCH_DIR) under the scratch root, the
//     account's; kept for keep_failed_scratch_seconds after a failure, for a post-mortem;
//   - for file:// checkpoints, the user's storage prefix (Launch.checkpoint_root), so that the
//     user's first job can create directories below it. POD_CHECKPOINT_DIR itself is made by
//     `podworker rank`, with the job's own rights.
//
// A directory that cannot be made is logged and the job runs without it (its program then says
// what is missing); nothing here ends a job.
//
// Thread safety: the agent's poll thread only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/ids.h"
#include "worker/agent/job_account.h"
#include "worker/agent/state_dir.h"

namespace podsched::agent {

class JobDirectories {
 public:
  // `scratch_root` empty: <state dir>/scratch.
  JobDirectories(StateDir& state, std::string scratch_root, int64_t keep_failed_scratch_seconds);

  const std::string& scratch_root() const { return scratch_root_; }

  // Creates the epoch's directories for `account`. Returns each host's scratch directory (a
  // host missing from it has none).
  std::map<int32_t, std::string> Prepare(const JobEpoch& je, const std::vector<int32_t>& hosts,
                                         const JobAccount& account,
                                         const std::string& checkpoint_root);
  // At the end of the epoch here: the host directories go; scratch goes too, unless `failed`
  // (then it stays, stamped now, until a Sweep finds it past its time).
  void Remove(const JobEpoch& je, const JobAccount* account,
              const std::map<int32_t, std::string>& scratch, bool failed);
  // Removes kept scratch past keep_failed_scratch_seconds, never one in `live` (the scratch of
  // a job that runs here: audit H5). `now_unix_seconds`: the wall clock. Returns how many.
  int Sweep(const std::set<std::string>& live, int64_t now_unix_seconds);
  // POD_PREEMPT_FILE of each host, holding the deadline (Unix seconds): it appears before the
  // SIGTERM, for programs that poll it instead of handling the signal.
  void WritePreemptNotices(const JobEpoch& je, const std::vector<int32_t>& hosts,
                           int64_t deadline_unix_seconds);

 private:
  StateDir& state_;
  const std::string scratch_root_;
  const int64_t keep_failed_scratch_seconds_;
};

}  // namespace podsched::agent
