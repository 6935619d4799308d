// `podworker rsh [ssh options] hN COMMAND...`: the rsh agent mpirun calls instead of ssh
// (docs/bus.md, "podworker rsh"). Reads POD_RSH_ENDPOINTS, POD_RSH_TOKEN, POD_JOB_ID and
// POD_EPOCH from the environment, asks the agent serving host N to run COMMAND, relays its
// output and returns its exit status (255 when refused or the connection fails).
#pragma once

#include <string>
#include <vector>

namespace podsched::agent {

int RshMain(const std::vector<std::string>& args);

}  // namespace podsched::agent
