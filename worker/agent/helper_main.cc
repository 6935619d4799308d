// podworker-helper: the three commands a job starts over and over (`rsh`, mpirun's rsh agent;
// `launch`, the launcher of `launcher: exec` jobs; `rank`, every rank of both launchers), in a
// binary that links only what they use. The agent's own binary loads 46 shared libraries (zmq,
// curl, the object store) at 7.7 ms of CPU per start; an exec job starts three of these
// (issue 29). podworker uses the helper found beside it and falls back to its own subcommands
// (the same code) when there is none. `launch` and `rank` are also in podworker-rank, which
// links less still (rank_main.cc); podworker prefers that one for them.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "worker/agent/child.h"
#include "worker/agent/exec_launcher.h"
#include "worker/agent/rsh_client.h"

int main(int argc, char** argv) {
  using namespace podsched::agent;
  const std::string command = argc >= 2 ? argv[1] : "";
  const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  // No option parser: `rsh` takes ssh-style arguments, `launch` and `rank` a user's command.
  if (command == "rsh") return RshMain(args);
  if (command == "launch") return ExecLauncherMain(SelfPath(argv[0]), args);
  if (command == "rank") return RankMain(args);
  std::fprintf(stderr,
               "usage: podworker-helper rsh [ssh options] hN COMMAND...\n"
               "       podworker-helper launch [--rsh PATH] -- COMMAND...\n"
               "       podworker-helper rank [--rank R] -- COMMAND...\n"
               "(started by podworker for its jobs; '%s' is none of these)\n",
               command.substr(0, 64).c_str());
  return 2;
}
