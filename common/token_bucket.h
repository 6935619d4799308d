// TokenBucket: `rate` tokens a second, at most `burst` saved up; full at the first Take. The
// HTTP API's per-user request limit and the agent's per-job live-log byte limit.
//
// Pure: the caller passes its clock's reading (any std::chrono time point). A reading earlier
// than the last one counts as no time passed (a clock that steps back gives nothing back).
// Thread safety: a value owned by one thread.
#pragma once

#include <algorithm>
#include <chrono>

namespace podsched {

template <class Time>
class TokenBucket {
 public:
  TokenBucket(double rate_per_second, double burst)
      : rate_(rate_per_second), burst_(burst), tokens_(burst) {}

  // Takes `n` tokens if the bucket holds them; all or nothing.
  bool Take(double n, Time now) {
    if (!started_) {
      started_ = true;
      last_ = now;
    } else if (now > last_) {
      tokens_ = std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
      last_ = now;
    }
    if (tokens_ < n) return false;
    tokens_ -= n;
    return true;
  }

 private:
  double rate_;
  double burst_;
  double tokens_;
  bool started_ = false;
  Time last_{};
};

}  // namespace podsched
