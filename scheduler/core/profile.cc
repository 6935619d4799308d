#include "scheduler/core/profile.h"

#include <array>
#include <string>

namespace podsched::core {
namespace {

constexpr std::array<Profile, 4> kProfiles = {{
    {"fifo-first-fit", QueueOrder::kFifo, "first-fit", false, true},
    {"fifo-backfill", QueueOrder::kFifo, "first-fit", true, true},
    {"fair-first-fit", QueueOrder::kFairShare, "first-fit", true, true},
    {"fair-best-fit", QueueOrder::kFairShare, "best-fit", true, true},
}};

}  // namespace

Result<Profile> LookupProfile(std::string_view name) {
  std::string valid;
  for (const Profile& p : kProfiles) {
    if (p.name == name) return p;
    valid += (valid.empty() ? "" : ", ") + std::string(p.name);
  }
  return InvalidArgument(std::string(name) + " is not a scheduler profile; valid: " + valid);
}

std::vector<std::string_view> ProfileNames() {
  std::vector<std::string_view> names;
  for (const Profile& p : kProfiles) names.push_back(p.name);
  return names;
}

}  // namespace podsched::core
