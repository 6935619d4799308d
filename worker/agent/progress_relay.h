// What the agent makes of a training job's progress reports (docs/bus.md, "Progress and logs"):
// a UDP datagram to POD_PROGRESS_ENDPOINT, or a `POD_PROGRESS ` line printed by rank 0. Both
// become a bus Progress of the launch's epoch (never the epoch the report names), carrying the
// newest checkpoint step reported so far.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/ids.h"
#include "common/status.h"
#include "proto/bus.pb.h"
#include "worker/agent/bus_validate.h"
#include "worker/progress/progress_wire.h"

namespace podsched::agent {

// The bus Progress of report `p` of the job running as `je`. A checkpoint step the report names
// becomes `*last_checkpoint_step`, which the message carries.
bus::Envelope ProgressEnvelope(const JobEpoch& je, const progress::Progress& p,
                               int64_t* last_checkpoint_step);

// Whether datagram `p` may be forwarded. `launch_key` is the POD_PROGRESS_KEY of the launch of
// the job and epoch it names, null when none runs here. The port is reachable from the network:
// only the job's own processes have its key.
std::optional<Rejection> CheckProgressDatagram(const progress::Progress& p,
                                               const std::string* launch_key);

// One whole line of the launcher's output, judged.
struct OutputLine {
  bool keep = true;  // false: left out of the log (mpirun's harmless setpgid warning)
  // A progress line of rank 0's stdout (it stays in the log): its report, or why it is not one.
  std::optional<Result<progress::Progress>> progress;
  // A rank's stderr line ending in kRankPreemptedLine (exit_verdict.h): its program exited 75
  // under a Preempt. It stays in the log. (A program could print it itself; all that buys is the
  // verdict it would get by exiting 75.)
  bool rank_preempted = false;
};
OutputLine JudgeOutputLine(std::string_view line);

}  // namespace podsched::agent
