#include "scheduler/daemon/checkpoint_stores.h"

#include "scheduler/daemon/checkpoint_prefix.h"

namespace podsched::daemon {

CheckpointStores::CheckpointStores(std::string default_url,
                                   std::map<std::string, std::string> zone_urls)
    : default_url_(std::move(default_url)), zone_urls_(std::move(zone_urls)) {}

Status CheckpointStores::CheckUserUrl(std::string_view url, std::string_view user) const {
  if (!UserPrefixHolding(url, user).empty()) return Status::Ok();
  // The default store's refusal says what is wrong: malformed whichever store, or outside it.
  Status first = CheckUnderPrefix(url, UserCheckpointPrefix(default_url_, user));
  if (!zoned() || first.code() != StatusCode::kPermissionDenied) return first;
  std::string prefixes = UserCheckpointPrefix(default_url_, user);
  for (const auto& [zone, store] : zone_urls_) {
    prefixes += ", " + UserCheckpointPrefix(store, user) + " (zone " + zone + ")";
  }
  return Status(StatusCode::kPermissionDenied,
                "checkpoint URL '" + std::string(url) +
                    "' is outside your prefixes (your checkpoints go to one of " + prefixes +
                    " or below it)");
}

core::CheckpointStore CheckpointStores::Choose(const core::JobSpec& spec,
                                               std::string_view zone) const {
  const std::string& user = spec.user.value();
  if (auto own = spec.env.find("POD_CHECKPOINT_URL"); own != spec.env.end()) {
    for (const auto& [z, store] : zone_urls_) {
      if (CheckUnderPrefix(own->second, UserCheckpointPrefix(store, user)).ok()) {
        return {own->second, z};
      }
    }
    return {own->second, ""};
  }
  if (auto it = zone_urls_.find(std::string(zone)); it != zone_urls_.end()) {
    return {UserCheckpointPrefix(it->second, user), std::string(zone)};
  }
  return {UserCheckpointPrefix(default_url_, user), ""};
}

std::string CheckpointStores::UserPrefixHolding(std::string_view url,
                                                std::string_view user) const {
  for (std::string& prefix : UserPrefixes(user)) {
    if (CheckUnderPrefix(url, prefix).ok()) return std::move(prefix);
  }
  return "";
}

std::vector<std::string> CheckpointStores::UserPrefixes(std::string_view user) const {
  std::vector<std::string> prefixes{UserCheckpointPrefix(default_url_, user)};
  for (const auto& [zone, store] : zone_urls_) {
    prefixes.push_back(UserCheckpointPrefix(store, user));
  }
  return prefixes;
}

}  // namespace podsched::daemon
