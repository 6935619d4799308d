// `podworker launch [--rsh PATH] -- COMMAND...` (the launcher of exec jobs: exec_launch.h) and
// `podworker rank [--rank R] -- COMMAND...` (every rank of both launchers: rank_env.h).
#pragma once

#include <string>
#include <vector>

namespace podsched::agent {

// Starts every rank of POD_HOSTS x LOCAL_WORLD_SIZE as `self rank` through the rsh client
// (--rsh, else `self rsh`), relays their output as tagged whole lines, and returns the job's exit
// code (RankExits). `self` is the absolute path of the running binary.
int ExecLauncherMain(const std::string& self, const std::vector<std::string>& args);
// Sets the rank's variables and runs COMMAND. A rank of `podworker launch` (--rank R) becomes
// COMMAND (returns only on failure: 127); a rank of mpirun (no --rank) runs it as its child and
// ends as it did, but for a 75 under a Preempt (JudgeRankEnd, exit_verdict.h).
int RankMain(const std::vector<std::string>& args);

}  // namespace podsched::agent
