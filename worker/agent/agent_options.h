// AgentOptions: what `podworker agent` was started with (podworker_main.cc parses the flags;
// docs/podworker.md lists them). Read by the agent, JobRunner and RshServer; a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/agent/job_account.h"

namespace podsched::agent {

struct AgentOptions {
  std::string bus = "tcp://127.0.0.1:8471";
  std::string pod = "pod0";
  std::vector<int32_t> hosts;        // sorted
  std::string agent_id;
  std::string advertise;  // empty: the address this machine reaches the bus from
  int32_t stop_grace_seconds = 30;  // SIGTERM: jobs get min(their grace, this) to save
  std::string state_dir;
  std::string mpirun = "mpirun";
  std::vector<std::string> mpirun_args;
  std::string mpi_subnet;            // CIDR
  // The binary jobs run as `rsh` (plm_rsh_agent): podworker-helper beside this one, or this
  // binary itself (HelperPath, child.h).
  std::string podworker_path;
  // The binary jobs run as `launch` and `rank`: podworker-rank beside this one, else as
  // podworker_path (RankBinaryPath, child.h). Empty: podworker_path.
  std::string rank_path;
  std::string bus_server_key;        // Z85; empty: no CURVE
  std::string bus_public_key;        // Z85 key pair of this agent (CURVE)
  std::string bus_secret_key;
  int32_t rsh_port = 0;              // 0: any free port
  int32_t start_timeout_ms = 120000; // a non-launcher with no rsh session by then releases
  JobAccountPolicy accounts;          // whose account runs each job (job_account.h)
  bool kill_account_leftovers = false;  // JobRunner::KillStrays (one agent on the machine)
  std::vector<std::string> pass_env;  // agent variables jobs get (JobEnvironment)
  std::string scratch_dir;            // per-account scratch root; empty: <state_dir>/scratch
  int64_t keep_failed_scratch_seconds = 24 * 3600;
  // Output each job may stream live on the bus, bytes a second (4 s of it saved up); 0: no
  // limit. Beyond it the live log skips (podsched marks the gap); the stored log is whole.
  int64_t live_log_bytes_per_second = int64_t{1} << 20;
  // Where a Launch may have the root agent create checkpoint prefixes and write logs
  // (LaunchPolicy, bus_validate.h); empty: anywhere (in normal form).
  std::vector<std::string> checkpoint_roots;  // --checkpoint-root, repeatable (a store per zone)
  std::string log_root;
  // A job's Exited waits for its log to be stored at most this long (the audit's M13: a
  // trickling object store held every later exit, and so its hosts); the upload goes on.
  int32_t exit_log_deadline_seconds = 30;
  // A job with more processes than this on this machine (a fork bomb, a 50,000-deep chain) is
  // killed whole at the next scan, and fails saying so (audit M12): the scans, and the machine,
  // stay the agent's. Threads do not count.
  int32_t max_job_processes = 10000;
  std::string version;
};

}  // namespace podsched::agent
