// Starting the processes podworker is responsible for (Linux).
//
// Each child: its own process group (so it and what stays in its group can be killed at once),
// PR_SET_PDEATHSIG = SIGKILL (if podworker dies, the child dies with it), stdin from /dev/null,
// stdout/stderr to pipes the caller reads, no inherited fds, default signal mask and handlers.
//
// Thread safety: call from the agent's one thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace podsched::agent {

struct ChildProcess {
  pid_t pid = -1;      // also its process group id
  int stdout_fd = -1;  // read ends, non-blocking, close-on-exec
  int stderr_fd = -1;
};

// argv[0] is looked up in PATH of `env` (NAME=VALUE strings, the whole environment).
Result<ChildProcess> SpawnChild(const std::vector<std::string>& argv,
                                const std::vector<std::string>& env);

// The current environment with `overrides` (NAME=VALUE) replacing or adding variables.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides);

}  // namespace podsched::agent
