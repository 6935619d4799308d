// podworker-rank: `launch` (the launcher of `launcher: exec` jobs) and `rank` (every rank of both
// launchers), which a job starts once per rank, in a binary that links neither libcrypto nor
// libprotobuf: only `rsh` needs them (the HMAC proof and the frames of the side channel), and
// it stays in podworker-helper. Loading those two libraries is most of podworker-helper's start
// (docs/benchmarks.md, issue 29). podworker uses this binary when it finds it beside itself
// (RankBinaryPath, child.h).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "worker/agent/child.h"
#include "worker/agent/exec_launcher.h"

int main(int argc, char** argv) {
  using namespace podsched::agent;
  const std::string command = argc >= 2 ? argv[1] : "";
  const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  // No option parser: `launch` and `rank` take a user's command after "--".
  if (command == "launch") return ExecLauncherMain(SelfPath(argv[0]), args);
  if (command == "rank") return RankMain(args);
  std::fprintf(stderr,
               "usage: podworker-rank launch [--rsh PATH] -- COMMAND...\n"
               "       podworker-rank rank [--rank R] -- COMMAND...\n"
               "(started by podworker for its jobs; '%s' is neither of these)\n",
               command.substr(0, 64).c_str());
  return 2;
}
