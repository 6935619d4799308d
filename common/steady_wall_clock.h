// SteadyWallClock: the clock podsched passes to its scheduler thread (clock.h has the others).
#pragma once

#include <algorithm>
#include <mutex>

#include "common/clock.h"

namespace podsched {

// Wall time that never jumps: it advances at the rate of a MonotonicClock and follows the wall
// clock only by slewing towards it, at most kMaxSlew of the elapsed time (so 60 s of offset take
// 20 minutes to catch up with).
//
// Why: podsched's scheduler thread keeps one notion of time for what it stores and shows (when a
// job was submitted, started, ended) and for its timers (heartbeat expiry, preemption grace,
// max_runtime, backoff, the rate limiter), and the timers compare against stored times
// (preempt_deadline, started_at). With the raw wall clock, an admin or chrony stepping the clock
// forward by 30 s expired every agent at once and requeued their jobs; a step back stopped
// expiry and the rate limiter's refill for as long as the step. Through this clock a step moves
// no timer by more than kMaxSlew of its length, and stored times still converge to the real
// wall time.
//
// Thread-safe (a mutex; reads are rare, once per request or tick).
class SteadyWallClock final : public Clock {
 public:
  static constexpr int64_t kMaxSlewDivisor = 20;  // kMaxSlew = 1/20 = 5%

  SteadyWallClock(const Clock& wall, const MonotonicClock& monotonic)
      : wall_(wall), monotonic_(monotonic), last_wall_(wall.Now()), last_mono_(monotonic.Now()) {}

  TimePoint Now() const override {
    std::lock_guard lock(mu_);
    const MonotonicTime mono = monotonic_.Now();
    const Duration elapsed = std::max(Duration::zero(), mono - last_mono_);
    const TimePoint steady = last_wall_ + elapsed;
    const Duration limit = elapsed / kMaxSlewDivisor;
    const Duration offset = std::clamp<Duration>(wall_.Now() - steady, -limit, limit);
    last_mono_ = mono;
    last_wall_ = steady + offset;  // never behind the last reading: limit < elapsed
    return last_wall_;
  }

 private:
  const Clock& wall_;
  const MonotonicClock& monotonic_;
  mutable std::mutex mu_;
  mutable TimePoint last_wall_;
  mutable MonotonicTime last_mono_;
};

}  // namespace podsched
