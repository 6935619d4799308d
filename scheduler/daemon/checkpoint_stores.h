// Where jobs' checkpoints go (docs/scheduler.md, "Zones and checkpoint stores"): the default
// store (default_checkpoint_url) and, optionally, a store per zone (`zones: {Z: {checkpoint_url:
// URL}}`). Every user has a prefix `<store>/users/<user>` in each (checkpoint_prefix.h).
//
// A job keeps one store for life, chosen at its first launch (core::SchedulerConfig::
// choose_checkpoint_store, via Choose): its spec's own URL, else its user's prefix of the store of
// the zone it first runs in, else of the default store. The store's zone is known for a zone's
// store (and a URL of the spec inside one); the default store's is not, and is never billed.
//
// Pure; thread-safe once built.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/core/job.h"
#include "scheduler/core/scheduler.h"

namespace podsched::daemon {

class CheckpointStores {
 public:
  CheckpointStores() = default;
  // `zone_urls`: zone -> the store URL of that zone (may be empty).
  CheckpointStores(std::string default_url, std::map<std::string, std::string> zone_urls);

  const std::string& default_url() const { return default_url_; }
  const std::map<std::string, std::string>& zone_urls() const { return zone_urls_; }
  // Whether any zone has a store of its own.
  bool zoned() const { return !zone_urls_.empty(); }

  // Ok when `url` (a spec's own checkpoint URL) lies in `user`'s prefix of some store; else the
  // error of CheckUnderPrefix, naming every prefix the user has.
  Status CheckUserUrl(std::string_view url, std::string_view user) const;
  // The store a job's first launch in `zone` takes (see above); `zone` "": the default store.
  core::CheckpointStore Choose(const core::JobSpec& spec, std::string_view zone) const;
  // `user`'s prefix of the store `url` lies in, or "" when it lies in none.
  std::string UserPrefixHolding(std::string_view url, std::string_view user) const;
  // Every prefix `user` has: the default store's, then each zone's (what Choose may give).
  std::vector<std::string> UserPrefixes(std::string_view user) const;

 private:
  std::string default_url_;
  std::map<std::string, std::string> zone_urls_;
};

}  // namespace podsched::daemon
