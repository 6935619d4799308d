// What /proc says about the processes podworker started (Linux only).
//
// podworker is a child subreaper (PR_SET_CHILD_SUBREAPER): every process it started, and every
// process those started, stays its descendant even when an intermediate parent exits (orted's
// ranks are in their own process groups, so process groups alone cannot find them). Each
// process tree it starts carries PODWORKER_TAG=JOB:EPOCH:HOST in its environment, inherited by
// orted and the ranks, which attributes every descendant to a job and host.
//
// Thread safety: functions of the calling process's view of /proc; no shared state.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "worker/agent/proc_text.h"  // ProcInfo, TagValue, ParseTag and the parsers

namespace podsched::agent {

// How much of a process's environment a scan reads for its tag (audit M12: an environment may
// be megabytes). SpawnChild puts the tag first; entries past this are not seen.
inline constexpr size_t kMaxEnvironRead = 64 << 10;

// Every descendant of `root` (not root itself), from /proc/PID/task/TID/children.
std::vector<pid_t> Descendants(pid_t root);
// std::nullopt when the process is gone.
std::optional<ProcInfo> ReadProc(pid_t pid);
// Every live process whose effective uid is `uid` (the owner of /proc/PID).
std::vector<pid_t> ProcessesOfUid(uid_t uid);
// Whether the process has a handler for `sig` or ignores it (/proc/PID/status SigCgt, SigIgn):
// a process that has not got that far yet (still loading its libraries) dies of the signal.
bool HandlesSignal(pid_t pid, int sig);

// The descendants of this process as of the last Scan, each with its tag (read from
// /proc/PID/environ once per pid, start time and name, once it has one).
class ProcessTable {
 public:
  struct Process {
    ProcInfo info;
    std::string tag;  // "" when it has none (or is a zombie)
    int rank = -1;    // the rank of its tag; -1: none
    // The tag is its parent's: its own environ had none. Inside execve the kernel gives a
    // process its new name before its new environment, and /proc shows an empty environ until
    // then; a process that dropped its environment (env -i) has none either. Either way it
    // belongs to its parent's job (not as a rank), and an empty environ is read again at every
    // scan: a rank once cached untagged was never counted as up, never killed, and its job
    // ended with it alive.
    bool inherited = false;
  };

  // Whether process `pid`, whose real uid is `uid`, may carry `tag` in its own environment. A
  // process that may not is taken as untagged: it belongs to its parent's job, and is no rank
  // (audit M1: the tag is the process's own claim, so another account's process could pass as a
  // rank of your job). Unset: every tag is trusted.
  using TagTrust = std::function<bool(pid_t pid, std::string_view tag, uint32_t uid)>;
  void set_tag_trust(TagTrust trust) { trust_ = std::move(trust); }

  // Walks this process's descendants.
  void Scan();
  // The same from a given walk (the unit tests' way to stand for a walk that missed some).
  // /proc/PID/task/TID/children is read one process at a time, not atomically: a process
  // reparented to us while the walk runs (its parent dying, as orted does on a Kill) can be in
  // neither list. A process found before is still our descendant while it lives (we are the
  // subreaper, nothing leaves the tree), so one the walk missed is kept while /proc shows it
  // with the same start time: a job is never declared over with a known rank still alive.
  void ScanFrom(const std::vector<pid_t>& walked);
  const std::map<pid_t, Process>& processes() const { return processes_; }
  // A rank: the topmost process of a rank's tag, i.e. the user's program that `podworker rank`
  // became (under orted or under an rsh session); its descendants (a shell's children, data
  // loader workers) are not ranks.
  bool IsRank(pid_t pid) const;
  // (pid, start time) of every process found that is not a zombie, for the state dir.
  std::vector<std::pair<pid_t, uint64_t>> Live() const;

 private:
  std::map<pid_t, Process> processes_;
  TagTrust trust_;
};

}  // namespace podsched::agent
