// Scheduler profiles: which policy fills each step of a scheduling pass, chosen by name.
//
//   queue sort   kFifo: submit time;  kFairShare: effective priority (priority + aging bonus),
//                then the user's decayed recent usage in core-hours, then submit time
//   score        a pod::PlacementPolicy by name ("first-fit", "best-fit")
//   permit       backfill on: EASY (a later job may start only if it cannot delay the head's
//                earliest start); off: strict order (the first job that does not fit blocks
//                every job behind it, except those filtered out by quota or backoff)
//   preemption   on: a blocked job may evict lower-class / lower-priority jobs
//
// Pure values; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace podsched::core {

enum class QueueOrder { kFifo, kFairShare };

struct Profile {
  std::string_view name;
  QueueOrder order;
  std::string_view placement;  // pod::MakePlacementPolicy name
  bool backfill;
  bool preemption;
};

// "fifo-first-fit", "fifo-backfill", "fair-first-fit", "fair-best-fit"; others are an error
// listing these.
Result<Profile> LookupProfile(std::string_view name);
std::vector<std::string_view> ProfileNames();

}  // namespace podsched::core
