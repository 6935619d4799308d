// TokenBucket: `rate` tokens a second, at most `burst` saved up; full at the first Take. The
// HTTP API's per-user request limit, the agent's per-job live-log byte limit and the core's
// per-user job creation budget.
//
// Pure: the caller passes its clock's reading (any std::chrono time point). A reading earlier
// than the last one counts as no time passed (a clock that steps back gives nothing back).
// Thread safety: a value owned by one thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>

namespace podsched {

template <class Time>
class TokenBucket {
 public:
  TokenBucket(double rate_per_second, double burst)
      : rate_(rate_per_second), burst_(burst), tokens_(burst) {}

  // Takes `n` tokens if the bucket holds them; all or nothing.
  bool Take(double n, Time now) {
    tokens_ = Available(now);
    if (!started_ || now > last_) last_ = now;
    started_ = true;
    if (tokens_ < n) return false;
    tokens_ -= n;
    return true;
  }
  // The tokens it would hold at `now`, taking none.
  double Available(Time now) const {
    if (!started_ || now <= last_) return started_ ? tokens_ : burst_;
    return std::min(burst_,
                    tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
  }
  // Seconds from `now` until it holds `n` tokens (0 if it does; infinite past `burst`).
  double SecondsUntil(double n, Time now) const {
    if (n > burst_) return std::numeric_limits<double>::infinity();
    const double missing = n - Available(now);
    return missing <= 0 ? 0 : missing / rate_;
  }

 private:
  double rate_;
  double burst_;
  double tokens_;
  bool started_ = false;
  Time last_{};
};

}  // namespace podsched
