// Validation of what the agent receives on the bus (docs/bus.md, "Validation and limits").
// A rejected message is dropped, logged and counted under its reason; it never crashes the agent.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/bus.pb.h"

namespace podsched::agent {

inline constexpr size_t kMaxBusMessage = 1 << 20;

struct Rejection {
  std::string reason;   // malformed, oversized, unknown_host, stale_epoch, unknown_job, invalid
  std::string message;  // for the log
};

// Parses one bus message: at most kMaxBusMessage bytes, a valid Envelope with a body.
std::optional<Rejection> ParseEnvelope(std::string_view bytes, bus::Envelope& out);

// A Launch: ids positive, hosts unique and in range, at least one of them in `my_hosts`, an rsh
// endpoint for every host, a hex token, a command, env names [A-Za-z_][A-Za-z0-9_]* without NUL
// in values, env POD_JOB_ID and POD_EPOCH equal to the Launch's job and epoch (podsched owns
// every POD_* variable of the job contract; the agent adds only those of IsReservedEnvName),
// bounded sizes.
//
// Where the root agent creates and writes (the audit's M7): checkpoint_root, when set, is an
// absolute path in normal form (no `.`, `..`, `//`) directly below one of
// `policy.checkpoint_roots` when any is set (the user's prefix, <root>/<user>: a site with a
// checkpoint store per zone gives each store's users directory); a file:// log_url has an absolute
// path without `..`, and starts with `policy.log_root` (whole path components) when that is set.
struct LaunchPolicy {
  std::vector<std::string> checkpoint_roots;  // podworker --checkpoint-root; none: any path
  std::string log_root;                       // podworker --log-root (a URL prefix); empty: any
};
std::optional<Rejection> ValidateLaunch(const bus::Launch& launch,
                                        const std::vector<int32_t>& my_hosts,
                                        const LaunchPolicy& policy = {});
// `path` is absolute, in normal form, and `root` itself or below it (whole components).
bool PathIsWithin(std::string_view path, std::string_view root);

// Environment names the agent sets itself (PODWORKER_*, POD_RSH_*, POD_HOST,
// POD_PROGRESS_ENDPOINT): a Launch's env may not override them; the agent skips them.
bool IsReservedEnvName(std::string_view name);

// A Preempt or Kill for (job, epoch) given the epoch of the job this agent runs (if any).
std::optional<Rejection> ValidateJobControl(const bus::JobEpoch& job,
                                            std::optional<int64_t> running_epoch);

}  // namespace podsched::agent
