// The environment names of the job contract (docs/jobspec.md, "The launch contract"): what the
// scheduler and the agents set in every rank's environment. A job spec may not set them (a rank
// that found its own RANK overridden by a typo in a spec would rendezvous with the wrong peers).
// This is the one list: the core's spec validation refuses these names, and whoever composes a
// launch environment sets only names from it.
//
// Pure; thread-safe.
#pragma once

#include <array>
#include <string_view>

namespace podsched {

// Whole names of the framework rendezvous contract (torchrun, jax.distributed, TensorFlow).
inline constexpr std::array<std::string_view, 11> kContractEnvNames = {"RANK",
                                                                       "WORLD_SIZE",
                                                                       "LOCAL_RANK",
                                                                       "LOCAL_WORLD_SIZE",
                                                                       "NODE_RANK",
                                                                       "MASTER_ADDR",
                                                                       "MASTER_PORT",
                                                                       "JAX_COORDINATOR_ADDRESS",
                                                                       "JAX_NUM_PROCESSES",
                                                                       "JAX_PROCESS_ID",
                                                                       "TF_CONFIG"};

// Prefixes the scheduler (POD_*, and MEGASCALE_* of multislice jobs as Cloud TPU names them) and
// the agents (PODWORKER_*) own entirely.
inline constexpr std::array<std::string_view, 3> kContractEnvPrefixes = {"POD_", "PODWORKER_",
                                                                         "MEGASCALE_"};

// POD_* names a spec may still set, because they are read from the spec: POD_CHECKPOINT_URL is
// the spec's checkpoint_url (the API puts it into the spec's env; the launch takes it over the
// server's default; deploy/ and the tests set it), POD_TOTAL_STEPS is the job's own hint for
// `podctl wait`'s progress bar (deploy/up.sh sets it).
inline constexpr std::array<std::string_view, 2> kSpecSettableContractNames = {"POD_CHECKPOINT_URL",
                                                                               "POD_TOTAL_STEPS"};

// A name the agents can export to every rank (mpirun -x, execve): letters, digits and _, not
// first a digit.
constexpr bool IsEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// True when `name` belongs to the job contract and a spec may not set it.
constexpr bool IsReservedEnvName(std::string_view name) {
  for (std::string_view allowed : kSpecSettableContractNames) {
    if (name == allowed) return false;
  }
  for (std::string_view n : kContractEnvNames) {
    if (name == n) return true;
  }
  for (std::string_view prefix : kContractEnvPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace podsched
