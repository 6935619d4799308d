// `podworker launch -- COMMAND...` (the launcher of exec jobs: exec_launch.h) and
// `podworker rank [--rank R] -- COMMAND...` (every rank of both launchers: rank_env.h).
#pragma once

#include <string>
#include <vector>

namespace podsched::agent {

// Starts every rank of POD_HOSTS x LOCAL_WORLD_SIZE through `podworker rsh`, relays their output
// as tagged whole lines, and returns the job's exit code (RankExits).
int ExecLauncherMain(const std::string& podworker, const std::vector<std::string>& args);
// Sets the rank's variables and becomes COMMAND (returns only on failure: 127).
int RankMain(const std::vector<std::string>& args);

}  // namespace podsched::agent
