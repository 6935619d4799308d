// The agent's state directory: which processes it is responsible for, so that a restarted agent
// (after kill -9) can kill what a previous run left behind (docs/podworker.md).
//
// File `processes`: one "PID STARTTIME" line per process (start time guards against pid reuse),
// rewritten atomically (temp + rename) whenever the set changes.
//
// Directory `jobs/JOB.EPOCH/hHOST/`: what the job keeps for a rank's host while the epoch runs,
// OpenMPI's session directory (`ompi/`); owned by the job's account (0700) when the agent runs
// as root, the directories above it root's and 0711; removed when the epoch ends here. The
// preemption notice POD_PREEMPT_FILE is `jobs/JOB.EPOCH/hHOST.preempt`, root's (0644) in the
// root-owned epoch directory: the agent never writes a file in a directory the job can change.
//
// Scratch: `<scratch>/<account>/job-JOB.EPOCH-hHOST/` (TMPDIR and POD_SCRATCH_DIR of the host's
// ranks), the per-account directory 0700 and owned by the account. Removed with the account's
// own rights when the epoch ends (a symlink the job left cannot make root delete elsewhere),
// kept for a while when it failed (SweepScratch).
//
// Thread safety: one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "worker/agent/job_account.h"

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

  // POD_PREEMPT_FILE of (job, epoch) on `host`: jobs/JOB.EPOCH/hHOST.preempt (not created).
  std::string PreemptFile(const JobEpoch& je, int32_t host) const;
  // jobs/JOB.EPOCH/hHOST (not created).
  std::string HostDir(const JobEpoch& je, int32_t host) const;
  // Creates jobs/JOB.EPOCH/hHOST/ and its ompi/ for each host, owned by `owner` (null: the
  // agent's own account).
  Status CreateJobDirs(const JobEpoch& je, const std::vector<int32_t>& hosts,
                       const JobAccount* owner);
  // Writes `text` to the file atomically (temp + rename: a reader sees all of it or nothing),
  // mode 0644; never through a symlink or into a FIFO at the temp file's name.
  Status WriteAtomically(const std::string& file, const std::string& text);
  // Removes jobs/JOB.EPOCH/ and everything in it (with the owner's rights when there is one:
  // its content goes on the agent's removal thread, the emptied directories at a later call),
  // and `also` (the epoch's scratch directories, the same owner's) in the same removal.
  void RemoveJobDirs(const JobEpoch& je, const JobAccount* owner,
                     const std::vector<std::string>& also = {});
  // At start, after KillLeftovers (nothing of a previous run is alive, and no job survives an
  // agent restart): removes every jobs/J.E a previous run left, each host directory with the
  // rights of the account that owns it, and its output spool files `job-J-epoch-E.log` (audit
  // L2: a killed agent's were never cleaned up). Returns how many of them.
  int RemoveLeftovers();
  // rmdirs the jobs/J.E whose removal has run since (their owners' removals run on the
  // removal thread): at every RemoveJobDirs, and now and then (the agent's heartbeat).
  void RmdirEmptied();

  // Scratch of (job, epoch) on `host` under `scratch_root`, created owned by `owner`.
  static std::string ScratchDir(const std::string& scratch_root, const std::string& account,
                                const JobEpoch& je, int32_t host);
  Result<std::string> CreateScratch(const std::string& scratch_root, const JobAccount& owner,
                                    const JobEpoch& je, int32_t host);
  // `dir` as a 0700 directory of `owner` in `parent` (created root's and traversable if missing;
  // it must not be writable by the owner). An existing `dir` must already be the owner's.
  static Status CreateOwnedBelow(const std::string& parent, const std::string& dir,
                                 const JobAccount* owner);
  // Removes directories with the owner's rights, queued to the agent's removal thread
  // (owner_removal.h; a tree too deep for it goes to an `rm` as the owner, reaped by the agent).
  // Without root (no other account to be), at once with the agent's own.
  static void RemoveAsOwner(const std::vector<std::string>& dirs, const JobAccount* owner);
  // Removes kept scratch directories (job-*) under `scratch_root` last changed before `before`
  // (wall-clock seconds). Returns how many.
  // A directory in `live` (the scratch of a job this agent runs; paths lexically normal) is
  // never removed, however old:
  // a long job's TMPDIR keeps its mtime while it fills subdirectories.
  static int SweepScratch(const std::string& scratch_root, int64_t before_unix_seconds,
                          const std::set<std::string>& live);

 private:
  // Empties the epoch directory `dir`: each directory in it with the rights of `owner` (with
  // `also`, in one removal), or of the account that owns it when `owner` is null; the agent's
  // own files unlinked.
  void EmptyEpochDir(const std::string& dir, const JobAccount* owner,
                     const std::vector<std::string>& also = {});

  std::string path_;
  std::vector<std::pair<pid_t, uint64_t>> recorded_;
  std::set<std::string> removing_;  // jobs/J.E of ended epochs whose owner is emptying them
};

}  // namespace podsched::agent
