// The progress wire format: what a job's rank 0 reports to the agent (podtrain, podprobe) and
// the agent parses and forwards as a bus Progress message (docs/bus.md, "Progress and logs").
//
// POD_PROGRESS_ENDPOINT=udp://HOST:PORT makes rank 0 send one JSON object per report as one
// UDP datagram (fire and forget; a lost datagram is only a missed update):
//   {"job":"j","epoch":2,"step":40,"steps":200,"loss":0.61,"accuracy":0.78,
//    "examples_per_s":51234.5,"checkpoint":"ckpt-2-40","key":"<POD_PROGRESS_KEY>"}
// "key" is the job's POD_PROGRESS_KEY, a secret the agent draws per launch and gives only to the
// job's own processes: the port is open to the network, and a datagram without the key is
// dropped, so no one else can move a job's checkpoint step (which steers preemption victims).
// "checkpoint" is the last committed checkpoint ("" when none yet). Optional too:
// "checkpoint_step" (the step of the last committed checkpoint, for programs whose checkpoints
// are not named ckpt-EPOCH-STEP) and "scalars" ({"lr": 0.001, ...}: named figures).
//
// Any program may instead print a line on rank 0's stdout (no socket, no library):
//   POD_PROGRESS step=120 total_steps=1000 loss=0.31 accuracy=0.9 checkpoint_step=100 lr=0.001
// Keys: step (required), total_steps, loss, accuracy, examples_per_second, checkpoint_step;
// any other KEY=NUMBER is a named scalar. The line stays in the job's log.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/endpoint.h"
#include "common/status.h"

namespace podsched::progress {

struct Progress {
  std::string job;
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t steps = 0;
  double loss = 0;      // mean training loss of the last step
  double accuracy = 0;  // held-out accuracy
  double examples_per_s = 0;
  std::string checkpoint;
  int64_t checkpoint_step = 0;            // explicit; else CheckpointStep(checkpoint)
  std::map<std::string, double> scalars;  // at most kMaxScalars, names kMaxScalarName bytes
  std::string key;                        // the job's POD_PROGRESS_KEY (datagrams only)
};

inline constexpr size_t kMaxScalars = 16;
inline constexpr size_t kMaxScalarName = 32;
inline constexpr std::string_view kProgressLinePrefix = "POD_PROGRESS ";
inline constexpr std::string_view kProgressKeyVariable = "POD_PROGRESS_KEY";
inline constexpr size_t kMaxProgressKey = 128;

// The committed checkpoint's step of a report: checkpoint_step, else that of its name.
int64_t ReportedCheckpointStep(const Progress& p);

// The human-readable form podtrain prints on stdout:
// "step=40/200 loss=0.6123 accuracy=0.7812 examples_per_s=51234 checkpoint=ckpt-2-40"
std::string ProgressLine(const Progress& p);
std::string ProgressJson(const Progress& p);
// Inverse of ProgressJson for the receiving agent: kInvalidArgument for anything that is not one
// JSON object with a string "job" and integer "epoch" and "step" (other keys optional; "key", when
// present, a string of at most kMaxProgressKey bytes).
Result<Progress> ParseProgressJson(std::string_view json);
// A line printed by rank 0 (starting with kProgressLinePrefix), for the job and epoch whose
// output it is; kInvalidArgument naming the bad field otherwise.
Result<Progress> ParseProgressLine(std::string_view line);
// The step S of a checkpoint name "ckpt-E-S"; 0 for "" or anything else.
int64_t CheckpointStep(std::string_view checkpoint);

// Parses "udp://127.0.0.1:9000"; kInvalidArgument for anything else.
Result<Ipv4Endpoint> ParseProgressEndpoint(std::string_view url);

}  // namespace podsched::progress
