// The rendezvous ports of a launch on the launcher's machine (audit M10): MASTER_PORT (torch's
// env:// rendezvous) and the port of JAX_COORDINATOR_ADDRESS. podsched derives them from the
// host index, so they are predictable, and every job on the same machine shares its network
// namespace: another user's job could listen on them first and take over the rendezvous (the
// protocols are unauthenticated). The launcher's agent therefore checks them before the launch,
// and moves a port that something already holds to a free one the kernel picks, in the
// environment every rank gets.
//
// The rewrite is pure (RendezvousPortsOf, MoveRendezvousPorts); the probe is I/O (podworker:
// TcpPortInUse, PickFreeTcpPorts). TF_CONFIG's per-rank ports (POD_RANK_ADDRS) lie on every host
// of the slice and are not checked.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace podsched::agent {

using EnvMap = std::map<std::string, std::string>;

// The ports MASTER_PORT and JAX_COORDINATOR_ADDRESS (HOST:PORT) name, each once, in that order;
// values that are not a port 1..65535 are left out.
std::vector<int> RendezvousPortsOf(const EnvMap& env);
// `env` with every port in `moved` (old -> new) replaced in MASTER_PORT and
// JAX_COORDINATOR_ADDRESS.
EnvMap MoveRendezvousPorts(EnvMap env, const std::map<int, int>& moved);

// I/O (podworker only, port_probe.cc). Whether a TCP socket of this machine's namespace holds
// `port` (a bind to it on every address, with SO_REUSEADDR, fails with EADDRINUSE).
bool TcpPortInUse(int port);
// `n` distinct free TCP ports chosen by the kernel (bound together, then released).
Result<std::vector<int>> PickFreeTcpPorts(int n);

// The launch's environment with every rendezvous port something here already holds moved to a
// free one; one line per moved port for the job's log, and why none could be picked ("" when
// nothing had to be, or it could).
struct FreedRendezvous {
  EnvMap env;
  std::vector<std::string> notes;
  std::string error;
};
FreedRendezvous FreeRendezvousPorts(EnvMap env);

}  // namespace podsched::agent
