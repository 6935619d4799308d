#include "scheduler/core/timers.h"

namespace podsched::core {

void Timers::Add(TimePoint at, TimerKind kind, JobEpoch job) {
  due_.emplace(at, Timer{kind, job});
}

void Timers::AddWakeup(TimePoint at) {
  auto [begin, end] = due_.equal_range(at);
  for (auto it = begin; it != end; ++it) {
    if (it->second.kind == TimerKind::kWakeup) return;
  }
  due_.emplace(at, Timer{TimerKind::kWakeup, {}});
}

std::optional<Timer> Timers::PopDue(TimePoint now) {
  if (due_.empty() || due_.begin()->first > now) return std::nullopt;
  const Timer timer = due_.begin()->second;
  due_.erase(due_.begin());
  return timer;
}

std::optional<TimePoint> Timers::Next() const {
  if (due_.empty()) return std::nullopt;
  return due_.begin()->first;
}

}  // namespace podsched::core
