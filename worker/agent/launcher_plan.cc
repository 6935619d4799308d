#include "worker/agent/launcher_plan.h"

#include <algorithm>
#include <map>

#include "common/host_list.h"
#include "common/ids.h"
#include "worker/agent/bus_validate.h"
#include "worker/agent/exec_launch.h"
#include "worker/agent/mpi_runtime_env.h"
#include "worker/agent/mpirun_argv.h"
#include "worker/agent/proc_text.h"
#include "worker/agent/rsh_wire.h"
#include "worker/progress/progress_wire.h"

namespace podsched::agent {

LauncherPlan PlanLauncher(const AgentOptions& o, const bus::Launch& l,
                          const LauncherInputs& in) {
  LauncherPlan plan;
  std::vector<std::string> names;  // what the ranks must get: the Launch's env and ours
  for (const auto& [name, value] : in.env) {
    if (IsReservedEnvName(name)) {
      plan.ignored.push_back(name);
      continue;
    }
    plan.overrides.push_back(name + "=" + value);
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  if (!in.env.contains(kHwlocComponentsVariable)) {  // why: mpi_runtime_env.h
    plan.overrides.push_back(std::string(kHwlocComponentsVariable) + "=" +
                             kHwlocComponentsDefault);
  }
  plan.overrides.push_back("POD_PROGRESS_ENDPOINT=" + in.progress_endpoint);
  names.push_back("POD_PROGRESS_ENDPOINT");
  plan.overrides.push_back(std::string(progress::kProgressKeyVariable) + "=" + in.progress_key);
  names.push_back(std::string(progress::kProgressKeyVariable));
  // A slice of one host needs no side channel: its ranks start here, from `podworker launch` or
  // from mpirun itself, and the rsh token never reaches the launcher's environment (which
  // such ranks inherit).
  const bool one_host = l.hosts_size() == 1;
  if (!one_host) {
    std::map<int32_t, std::string> eps(l.rsh_endpoints().begin(), l.rsh_endpoints().end());
    plan.overrides.push_back("POD_RSH_ENDPOINTS=" + FormatRshEndpoints(eps));
    plan.overrides.push_back("POD_RSH_TOKEN=" + l.rsh_token());
  }
  const JobEpoch je{JobId(l.job().job_id()), l.job().epoch()};
  plan.overrides.push_back(std::string(kTagVariable) + "=" + TagValue(je, l.hosts(0)));
  if (!in.scratch.empty()) {
    plan.overrides.push_back("TMPDIR=" + in.scratch);
    plan.overrides.push_back("POD_SCRATCH_DIR=" + in.scratch);
  }

  const std::string& rank_binary = o.rank_path.empty() ? o.podworker_path : o.rank_path;
  const bool exec = l.launcher() == bus::Launch::EXEC;
  if (exec || one_host) {
    // The launcher host's own variables, for the ranks started on it without rsh (as
    // RshServer::Run sets them for a rank that arrives by rsh): POD_HOST is the pod's id.
    plan.overrides.push_back("POD_HOST=" + std::to_string(l.hosts(0) - l.first_host()));
    plan.overrides.push_back("POD_PREEMPT_FILE=" + in.preempt_file);
    plan.overrides.push_back("OMPI_MCA_orte_tmpdir_base=" + in.host_dir + "/ompi");
  }
  if (exec) {
    // The ranks' hosts as the Launch names them (fleet ids: POD_HOSTS has the pods' own, which
    // two pods share), and the launcher's own among them.
    std::vector<HostId> hosts;
    for (int32_t h : l.hosts()) hosts.emplace_back(h);
    plan.overrides.push_back(std::string(kLaunchHostsVariable) + "=" + FormatHostSequence(hosts));
    plan.overrides.push_back(std::string(kLaunchHostVariable) + "=" + std::to_string(l.hosts(0)));
    if (!one_host) {
      // Each rank of another host through the rsh side channel, which sends these variables
      // along (SendEnv).
      std::string send;
      for (const auto& n : names) send += (send.empty() ? "" : ",") + n;
      plan.overrides.push_back("POD_RSH_SEND_ENV=" + send);
    }
    plan.argv = ExecLauncherArgv(rank_binary, o.podworker_path, l.command());
    return plan;
  }
  std::vector<std::string> rank_command{rank_binary, "rank", "--"};
  rank_command.insert(rank_command.end(), l.command().begin(), l.command().end());
  MpirunPlan mpi;
  mpi.mpirun = o.mpirun;
  mpi.podworker = o.podworker_path;
  mpi.hosts.assign(l.hosts().begin(), l.hosts().end());
  mpi.ranks_per_host = l.ranks_per_host();
  mpi.command = rank_command;
  mpi.env_names = names;
  mpi.subnet = o.mpi_subnet;
  mpi.run_as_root = in.run_as_root;
  mpi.extra_args = o.mpirun_args;
  mpi.local = one_host;
  plan.argv = BuildMpirunArgv(mpi);
  return plan;
}

}  // namespace podsched::agent
