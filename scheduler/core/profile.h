// Scheduler profiles: the step objects (steps.h) that fill a scheduling pass, chosen by name.
//
//   profile          QueueSort       Score       PostFilter      Permit
//   fifo-first-fit   FifoSort        first-fit   LeastLostWork   StrictOrder
//   fifo-backfill    FifoSort        first-fit   LeastLostWork   EasyBackfill
//   fair-first-fit   FairShareSort   first-fit   LeastLostWork   EasyBackfill
//   fair-best-fit    FairShareSort   best-fit    LeastLostWork   EasyBackfill
//
// A profile without a PostFilter never preempts (a blocked job only waits).
//
// Immutable once made; its steps are shared by every pass.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "pod/placement.h"
#include "scheduler/core/steps.h"

namespace podsched::core {

struct Profile {
  std::string_view name;
  std::shared_ptr<const QueueSort> queue_sort;
  std::shared_ptr<const pod::PlacementPolicy> score;
  std::shared_ptr<const PostFilter> post_filter;  // null: no preemption
  std::shared_ptr<const Permit> permit;
};

// What FairShareSort needs from the configuration.
struct FairShareRules {
  Duration aging_step;  // +1 priority per step waited
  int max_aging_bonus;
};

// One of ProfileNames(); an unknown name is an error listing them.
Result<Profile> MakeProfile(std::string_view name, const FairShareRules& fair_share);
std::vector<std::string_view> ProfileNames();

}  // namespace podsched::core
