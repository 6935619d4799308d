// The mpirun command line of a Launch (docs/bus.md, "Launch"; the MPI facts behind each
// parameter are in docs/podworker.md).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace podsched::agent {

struct MpirunPlan {
  std::string mpirun = "mpirun";
  std::string podworker;              // absolute path; mpirun splits plm_rsh_agent on spaces
  std::vector<int32_t> hosts;         // the slice, row-major; hosts[0] is the launcher
  int32_t ranks_per_host = 1;
  std::vector<std::string> command;   // program + args of every rank
  std::vector<std::string> env_names; // each passed with -x (values come from mpirun's env)
  std::string subnet;                 // CIDR for btl_tcp_if_include / oob_tcp_if_include
  bool run_as_root = false;           // adds --allow-run-as-root
  // --mpirun-arg, before the command; a `--mca btl X` or `--mca pml X` among them replaces the
  // default (self,tcp and ob1).
  std::vector<std::string> extra_args;
  // The slice is the launcher's host alone: mpirun starts the ranks itself (`--host localhost`),
  // with no orted and no rsh session (its environment holds the host's variables).
  bool local = false;
};

// The name of host N (a Launch's fleet id, bus.proto) for mpirun and `podworker rsh`: "hN".
std::string MpiHostName(int32_t host);
// "h12" (or "12") -> 12; kInvalidArgument otherwise.
Result<int32_t> ParseMpiHostName(std::string_view name);

// The full argv (argv[0] = plan.mpirun). kInvalidArgument if the plan cannot be expressed
// (no hosts, no command, a podworker path with whitespace, ranks_per_host < 1).
Result<std::vector<std::string>> BuildMpirunArgv(const MpirunPlan& plan);

// Default --mpi-subnet of an advertise address: 127.0.0.0/8 for loopback, else its /24.
// kInvalidArgument for anything but a dotted IPv4 address.
Result<std::string> DefaultMpiSubnet(std::string_view advertise_ipv4);

}  // namespace podsched::agent
