// Strong ids: a JobId is not a HostId is not an int.
//
// StrongId<Tag, Rep> wraps a value of type Rep; ids of different tags do not convert into each
// other. They are ordered, hashable and printable, so they work as map keys and in messages.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace podsched {

template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep value) : value_(value) {}
  constexpr const Rep& value() const { return value_; }
  friend constexpr auto operator<=>(const StrongId&, const StrongId&) = default;
  friend std::ostream& operator<<(std::ostream& os, const StrongId& id) { return os << id.value_; }

 private:
  Rep value_{};
};

using JobId = StrongId<struct JobIdTag, int64_t>;
// A host's index within its pod: row * host_grid_cols + col.
using HostId = StrongId<struct HostIdTag, int32_t>;
// One placement of one job (a job placed three times has three allocations).
using AllocationId = StrongId<struct AllocationIdTag, int64_t>;
using UserName = StrongId<struct UserNameTag, std::string>;

// Fencing token of one placement of a job: (job, epoch). Epochs of a job increase by one per
// placement; anything carrying an older epoch than the job's current one is ignored.
struct JobEpoch {
  JobId job;
  int64_t epoch = 0;
  friend constexpr auto operator<=>(const JobEpoch&, const JobEpoch&) = default;
};

}  // namespace podsched

template <typename Tag, typename Rep>
struct std::hash<podsched::StrongId<Tag, Rep>> {
  size_t operator()(const podsched::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};
