#include "scheduler/core/profile.h"

#include <array>
#include <string>

namespace podsched::core {
namespace {

struct ProfileSpec {
  std::string_view name;
  bool fair_share;
  std::string_view placement;  // pod::MakePlacementPolicy name
  bool backfill;
  bool preemption;
};

constexpr std::array<ProfileSpec, 4> kProfiles = {{
    {"fifo-first-fit", false, "first-fit", false, true},
    {"fifo-backfill", false, "first-fit", true, true},
    {"fair-first-fit", true, "first-fit", true, true},
    {"fair-best-fit", true, "best-fit", true, true},
}};

}  // namespace

Result<Profile> MakeProfile(std::string_view name, const FairShareRules& fair_share) {
  std::string valid;
  for (const ProfileSpec& p : kProfiles) {
    valid += (valid.empty() ? "" : ", ") + std::string(p.name);
    if (p.name != name) continue;
    auto score = pod::MakePlacementPolicy(p.placement);
    if (!score) return std::unexpected(score.error());
    Profile profile;
    profile.name = p.name;
    if (p.fair_share) {
      profile.queue_sort =
          std::make_shared<FairShareSort>(fair_share.aging_step, fair_share.max_aging_bonus);
    } else {
      profile.queue_sort = std::make_shared<FifoSort>();
    }
    profile.score = std::move(*score);
    if (p.preemption) profile.post_filter = std::make_shared<LeastLostWork>();
    if (p.backfill) {
      profile.permit = std::make_shared<EasyBackfill>();
    } else {
      profile.permit = std::make_shared<StrictOrder>();
    }
    return profile;
  }
  return InvalidArgument(std::string(name) + " is not a scheduler profile; valid: " + valid);
}

std::vector<std::string_view> ProfileNames() {
  std::vector<std::string_view> names;
  for (const ProfileSpec& p : kProfiles) names.push_back(p.name);
  return names;
}

}  // namespace podsched::core
