// Who may see a job: the one rule every API reply and every stream frame follows.
//
// An admin sees (and changes) every job. A user sees only their own: another user's job is
// "not found" (404), never "permission denied", so its existence does not leak; in the pod view
// its hosts show as held, not by whom.
//
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "common/ids.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/auth.h"

namespace podsched::daemon {

// The only owner whose jobs `who` sees; nullopt for an admin (every owner).
inline std::optional<std::string_view> OnlyOwnerFor(const Principal& who) {
  if (who.admin) return std::nullopt;
  return who.user;
}

// Whether `who` sees a job of `owner`.
inline bool MaySee(const Principal& who, std::string_view owner) {
  std::optional<std::string_view> only = OnlyOwnerFor(who);
  return !only || *only == owner;
}
inline bool MaySee(const Principal& who, const core::JobRecord& job) {
  return MaySee(who, job.spec.user.value());
}

// The job if it exists and `who` may see it; nullptr otherwise (both are "not found").
inline const core::JobRecord* FindVisible(const core::Scheduler& scheduler, JobId id,
                                          const Principal& who) {
  const core::JobRecord* job = scheduler.Find(id);
  return job != nullptr && MaySee(who, *job) ? job : nullptr;
}

}  // namespace podsched::daemon
