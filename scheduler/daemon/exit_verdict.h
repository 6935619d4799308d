// How an agent's Exited report becomes the core's ExitKind and the reason the job records
// (docs/bus.md "As built": exit reasons). Pure.
#pragma once

#include <optional>
#include <string>

#include "bus.pb.h"
#include "scheduler/core/scheduler.h"

namespace podsched::daemon {

struct ExitVerdict {
  bool released = false;  // RELEASED: no verdict on the job; the hosts are only freed
  core::ExitKind kind = core::ExitKind::kFailed;
  std::string reason;  // with the agent's message (at most 1 KiB of it) after ": "
};

// `past_grace`: the job's current epoch is being preempted and its grace period has ended (a
// KILLED then means the program did not honour SIGTERM: the core's own Kill at the deadline
// races the agent's grace timer). nullopt: an unknown Exited.reason.
std::optional<ExitVerdict> VerdictOf(const bus::Exited& m, bool past_grace);

}  // namespace podsched::daemon
