// The flags of `podctl submit` applied to a job spec (docs/podctl.md), and the parsers of the
// values users write in Slurm's forms. Each error names the flag and the accepted forms; the
// array and dependency syntax is the server's own parser (scheduler/core/job_grammar.h, a leaf
// library: podctl does not link the core), so podctl refuses exactly what the server would,
// before any request.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api.pb.h"
#include "common/status.h"

namespace podsched::ctl {

struct SubmitOptions {
  std::string file;  // -f job.yaml
  std::string accelerator;
  std::string zone;                  // --zone: only the pods of this zone
  std::string pod;                   // --pod: only this pod
  bool preemptible = false;
  int priority = 0;
  std::string name;
  int64_t checkpoint_every = 0;
  std::vector<std::string> env;      // --env K=V, repeatable
  int ranks_per_host = 0;            // 0: unset
  int slices = 0;                    // --slices: multislice; 0: unset (the server checks 1..64)
  std::string time;                  // --time: max runtime
  std::string launcher;              // --launcher mpi|exec
  std::string array;                 // --array 0-99%10
  std::string dependency;            // --dependency afterok:12
  bool parsable = false;             // print only the id
  std::vector<std::string> command;  // after --
};

// Slurm's time limit forms: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", and
// a number with a unit: "90s", "30m", "2h", "1d". Returns seconds (> 0).
Result<int64_t> ParseTimeLimit(std::string_view text);
// "K=V" (V may be empty or hold '='); K is [A-Za-z_][A-Za-z0-9_]* and not a name of the job
// contract (common/env_contract.h).
Result<std::pair<std::string, std::string>> ParseEnvFlag(std::string_view text);
// Applies the flags on top of `spec` (from -f, or empty) and fills the default name.
Status ApplySubmitFlags(const SubmitOptions& o, api::JobSpec* spec);

}  // namespace podsched::ctl
