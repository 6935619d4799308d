// The launcher of one job on its launcher host, as data: the argv (mpirun, or `podworker launch`
// for `launcher: exec`) and the variables the agent adds to the job's environment. Each rank is
// `podworker rank -- COMMAND`, which adds the rank's own variables and becomes COMMAND. The job
// contract comes with the Launch's env (podsched owns it); the agent adds only the names
// IsReservedEnvName reserves for it, and ignores a Launch's value for one of those.
//
// Pure (JobRunner::StartLauncher spawns what it returns); thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "proto/bus.pb.h"
#include "worker/agent/agent_options.h"
#include "worker/agent/rendezvous_ports.h"

namespace podsched::agent {

struct LauncherInputs {
  EnvMap env;                     // the Launch's env, its rendezvous ports already free here
  std::string progress_endpoint;  // POD_PROGRESS_ENDPOINT (this agent's UDP port)
  std::string progress_key;       // POD_PROGRESS_KEY of this launch (hex)
  std::string scratch;            // TMPDIR of the launcher host; empty: none
  bool run_as_root = false;       // the job's account is root (mpirun needs to be told)
  // The launcher host's POD_PREEMPT_FILE and state directory (StateDir): `launch` starts that
  // host's ranks itself and gives them what its rsh server would (exec_launch.h).
  std::string preempt_file;
  std::string host_dir;
};

struct LauncherPlan {
  Result<std::vector<std::string>> argv;
  std::vector<std::string> overrides;  // NAME=VALUE, added to the job's environment
  std::vector<std::string> ignored;    // the Launch's env names the agent sets itself
};

LauncherPlan PlanLauncher(const AgentOptions& options, const bus::Launch& launch,
                          const LauncherInputs& inputs);

}  // namespace podsched::agent
