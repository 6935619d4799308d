#include "worker/agent/mpirun_argv.h"

#include <arpa/inet.h>

#include <charconv>

#include "common/host_list.h"

namespace podsched::agent {

std::string MpiHostName(int32_t host) { return "h" + std::to_string(host); }

Result<int32_t> ParseMpiHostName(std::string_view name) {
  std::string_view digits = name;
  if (digits.starts_with('h')) digits.remove_prefix(1);
  int32_t host = -1;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), host);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || host < 0 ||
      host > kMaxFleetHostId) {
    return InvalidArgument("'" + std::string(name) + "' is not a host name hN (e.g. h12)");
  }
  return host;
}

Result<std::vector<std::string>> BuildMpirunArgv(const MpirunPlan& plan) {
  if (plan.hosts.empty()) return InvalidArgument("mpirun plan without hosts");
  if (plan.command.empty() || plan.command[0].empty()) return InvalidArgument("empty command");
  if (plan.ranks_per_host < 1) return InvalidArgument("ranks_per_host must be at least 1");
  if (plan.podworker.empty() || plan.podworker[0] != '/' ||
      plan.podworker.find_first_of(" \t\n") != std::string::npos) {
    return InvalidArgument("podworker path '" + plan.podworker +
                           "' must be absolute and without whitespace (mpirun splits "
                           "plm_rsh_agent on spaces)");
  }
  if (plan.local && plan.hosts.size() != 1) {
    return InvalidArgument("a local mpirun plan has exactly one host");
  }
  std::string host_arg;
  for (int32_t h : plan.hosts) {
    if (!host_arg.empty()) host_arg += ',';
    host_arg += (plan.local ? std::string("localhost") : MpiHostName(h)) + ":" +
                std::to_string(plan.ranks_per_host);
  }
  const auto np = static_cast<int64_t>(plan.hosts.size()) * plan.ranks_per_host;
  std::vector<std::string> argv{plan.mpirun};
  if (plan.run_as_root) argv.push_back("--allow-run-as-root");
  auto mca = [&](std::string name, std::string value) {
    argv.insert(argv.end(), {"--mca", std::move(name), std::move(value)});
  };
  argv.insert(argv.end(), {"--oversubscribe", "-np", std::to_string(np), "--host", host_arg});
  if (!plan.local) {
    mca("plm_rsh_agent", plan.podworker + " rsh");
    // Every orted is started by mpirun itself (no tree spawn through other orteds, whose
    // environment lacks POD_RSH_*), and stays attached to its rsh session (no daemonizing), so
    // `podworker rsh` lives exactly as long as the orted.
    mca("plm_rsh_no_tree_spawn", "1");
    mca("orte_leave_session_attached", "1");
  }
  // An operator's `--mpirun-arg --mca NAME VALUE` for one of these replaces ours: mpirun refuses
  // a parameter given twice.
  const auto operator_sets = [&](std::string_view name) {
    for (size_t i = 0; i + 1 < plan.extra_args.size(); ++i) {
      if (plan.extra_args[i] == "--mca" && plan.extra_args[i + 1] == name) return true;
    }
    return false;
  };
  if (!operator_sets("btl")) mca("btl", "self,tcp");
  // Those are the ob1 PML's transports, so name ob1 too. Otherwise every rank's MPI_Init also
  // opens the cm PML, which loads and probes the psm and psm2 MTLs (Omni-Path libraries) before
  // giving up: 0.28 s per MPI_Init against 0.09 s with ob1 named (docs/podworker.md).
  if (!operator_sets("pml")) mca("pml", "ob1");
  if (!plan.subnet.empty()) {
    mca("btl_tcp_if_include", plan.subnet);
    mca("oob_tcp_if_include", plan.subnet);
  }
  argv.push_back("--tag-output");
  for (const auto& name : plan.env_names) argv.insert(argv.end(), {"-x", name});
  argv.insert(argv.end(), plan.extra_args.begin(), plan.extra_args.end());
  argv.insert(argv.end(), plan.command.begin(), plan.command.end());
  return argv;
}

Result<std::string> DefaultMpiSubnet(std::string_view advertise_ipv4) {
  in_addr addr{};
  const std::string text(advertise_ipv4);
  if (inet_pton(AF_INET, text.c_str(), &addr) != 1) {
    return InvalidArgument("advertise address '" + text + "' is not an IPv4 address");
  }
  const uint32_t a = ntohl(addr.s_addr);
  if ((a >> 24) == 127) return std::string("127.0.0.0/8");
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + ".0/24";
}

}  // namespace podsched::agent
