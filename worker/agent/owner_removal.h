// Removing a job's directories with the rights of its Unix account, inside the agent.
//
// The agent (root) never removes what a job wrote with root's rights: a symlink or a directory
// the job left would make root delete elsewhere. It used to run `rm -rf` as the account, a
// process per ended epoch: on a host running trivial jobs that `rm` cost 4.7 ms of CPU per job,
// more than the job's own program (docs/benchmarks.md). Now one thread of the agent takes the
// account's file-system identity for each removal (fsuid, fsgid and supplementary groups are
// per thread in Linux, and the capabilities that bypass permission checks leave the thread's
// effective set while its fsuid is not 0) and removes the trees itself: never through a
// symlink, never into another file system (as `rm -rf --one-file-system`). A tree deeper than
// kMaxInProcessDepth is handed to `rm` as before, so that a job's directory chain cannot
// exhaust the agent's stack or fds.
//
// Thread safety: OwnerRemovals is thread-safe; RemoveTreeBounded has no state.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "worker/agent/job_account.h"

namespace podsched::agent {

// How deep RemoveTreeBounded descends (the tree's root is depth 0): one fd and one stack frame
// per level. A job's host directory and scratch are rarely more than a few levels deep.
inline constexpr int kMaxInProcessDepth = 32;

// Removes `path` and everything below it on the file system `path` is on, with the calling
// thread's rights, never following a symlink (a symlink is removed, not what it names). What
// cannot be removed stays (as with rm -rf). Returns false when a directory deeper than
// `max_depth` was left with its content (someone else must finish: `rm`), true otherwise.
bool RemoveTreeBounded(const std::string& path, int max_depth = kMaxInProcessDepth);

class OwnerRemovals {
 public:
  // The agent's removal thread, started at the first call.
  static OwnerRemovals& Get();

  // Queues the removal of `dirs` (each a tree) with `owner`'s rights; returns at once.
  void Remove(std::vector<std::string> dirs, const JobAccount& owner);
  // Waits until every queued removal has run (tests; a deep tree's `rm` may still run, as a
  // child process of this one).
  void WaitIdle();

 private:
  OwnerRemovals();
  void Run();

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::pair<std::vector<std::string>, JobAccount>> queue_;
  bool busy_ = false;
  std::thread thread_;
};

}  // namespace podsched::agent
