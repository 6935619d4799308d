// Starting the processes podworker is responsible for (Linux).
//
// Each child: its own process group (so it and what stays in its group can be killed at once),
// PR_SET_PDEATHSIG = SIGKILL (if podworker dies, the child dies with it), stdin from /dev/null,
// stdout/stderr to pipes the caller reads (or /dev/null), no inherited fds, no blocked signal and
// every signal's disposition the default (what the agent ignores too), the default OOM score (not
// the agent's protected one), RLIMIT_MEMLOCK at most kChildMemlockBytes, and the job's tag
// (PODWORKER_TAG) first in its environment.
//
// The child is started without copying the agent (clone with CLONE_VM, as posix_spawn does):
// the calling thread waits until it has exec'd, a few hundred microseconds, for at most
// `start_deadline`. A child that has not exec'd by then (its working directory or program on
// a file server that stopped answering) is killed and SpawnChild returns kUnavailable; the
// memory it borrowed is kept until it has gone.
// Thread safety: any thread may call it, also several at once. Parent-death is the calling
// thread's (PR_SET_PDEATHSIG): a child started from a thread dies when that thread ends.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/agent/job_account.h"

namespace podsched::agent {

// RLIMIT_MEMLOCK of every child, when the agent's is higher (OpenMPI's shared memory needs
// none of it; 64 MiB is what Debian gives a login since systemd 253).
inline constexpr unsigned long kChildMemlockBytes = 64ul << 20;

// How long a child may take from clone to exec. Well under the bus's heartbeat timeout (10 s
// by default): the agent's poll thread starts launchers.
inline constexpr std::chrono::milliseconds kChildStartDeadline{3000};

struct ChildProcess {
  pid_t pid = -1;      // also its process group id
  int stdout_fd = -1;  // read ends, non-blocking, close-on-exec (-1 with ChildOutput::kDiscard)
  int stderr_fd = -1;
};

enum class ChildOutput {
  kPipes,    // stdout and stderr to pipes the caller reads
  kDiscard,  // both to /dev/null: a child whose output nobody reads (a closed pipe would kill
             // it with SIGPIPE at its first complaint, e.g. `rm` at the first of its operands)
};

// argv[0] is looked up in PATH of `env` (NAME=VALUE strings, the whole environment).
// With `as` and an agent running as root, the child takes that account's groups, gid and uid
// (in that order, before exec) and works in `cwd`; without root, `as` must be the agent's own
// account (job_account.h) and nothing changes. Parent-death SIGKILL is set after the switch,
// since the kernel clears it when the credentials change.
Result<ChildProcess> SpawnChild(const std::vector<std::string>& argv,
                                const std::vector<std::string>& env, const JobAccount* as = nullptr,
                                const std::string& cwd = "",
                                ChildOutput output = ChildOutput::kPipes,
                                std::chrono::milliseconds start_deadline = kChildStartDeadline);

// The current environment with `overrides` (NAME=VALUE) replacing or adding variables.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides);

// The absolute path of this program's binary (/proc/self/exe; `argv0` made absolute without it).
std::string SelfPath(const char* argv0);
// The binary that serves a job's `rsh` (and `launch` and `rank` where RankBinaryPath finds no
// podworker-rank): podworker-helper beside the agent's binary `agent_path` when it is an
// executable file there, else the agent's binary itself (it has the same subcommands).
std::string HelperPath(const std::string& agent_path);
// The binary that serves a job's `launch` and `rank`, which every rank starts: podworker-rank
// beside the agent's binary when it is an executable file there (it links neither libcrypto
// nor libprotobuf, which only `rsh` needs), else HelperPath(agent_path).
std::string RankBinaryPath(const std::string& agent_path);

}  // namespace podsched::agent
