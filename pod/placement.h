// Placement policies: where in a pod a slice goes.
//
// A policy only chooses among Pod::LegalPlacements; it never changes the pod. Policies are
// chosen by name, so a scheduler profile or the simulator can name them ("first-fit",
// "best-fit"). Stateless and thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pod/accelerator.h"
#include "pod/pod.h"

namespace podsched::pod {

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // Where a slice of `type` should go in `pod`, or nullopt when there is no legal position.
  virtual std::optional<Placement> Choose(const Pod& pod, const AcceleratorType& type) const = 0;
};

// "first-fit" or "best-fit"; any other name is an error listing the valid ones.
Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(std::string_view name);
std::vector<std::string_view> PlacementPolicyNames();

}  // namespace podsched::pod
