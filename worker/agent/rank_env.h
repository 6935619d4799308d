// One rank's part of the job contract (docs/jobspec.md, "The launch contract"): what differs
// from rank to rank, derived from the variables podsched gives every rank (LaunchComposer) and
// the rank's index. `podworker rank` applies it just before it becomes the user's program, for
// both launchers: under mpirun the index comes from OpenMPI's OMPI_COMM_WORLD_* variables, under
// `podworker launch` from its command line.
//
// Pure; thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace podsched::agent {

// Looks a variable up (std::getenv in podworker, a map in tests).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

struct RankIdentity {
  int rank = 0;        // 0..world_size-1, host-major: rank = node_rank * local_world_size + local
  int local_rank = 0;  // 0..local_world_size-1
  int node_rank = 0;   // the host's index in the slice (rank order)
  int world_size = 1;
  int local_world_size = 1;
};

// From OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE (mpirun sets them for each rank).
Result<RankIdentity> RankFromMpi(const EnvLookup& env);
// From a rank index and WORLD_SIZE / LOCAL_WORLD_SIZE of the contract.
Result<RankIdentity> RankFromIndex(int rank, const EnvLookup& env);

// The variables of that rank, NAME -> value:
//   RANK, LOCAL_RANK, NODE_RANK, JAX_PROCESS_ID;
//   TF_CONFIG {"cluster":{"worker":[POD_RANK_ADDRS...]},"task":{"type":"worker","index":RANK}}
//   when POD_RANK_ADDRS lists world_size addresses;
//   PODWORKER_TAG with ":RANK" appended (the agent finds its ranks by it: process_tree.h);
//   POD_SLICE_ID (and MEGASCALE_SLICE_ID for a multislice job) when POD_NUM_SLICES is given:
//   the slice of the rank's host, the slices holding equally many hosts in rank order.
std::map<std::string, std::string> RankEnv(const RankIdentity& id, const EnvLookup& env);

}  // namespace podsched::agent
