// Clock: the only way podsched code reads the time.
//
// Pure libraries never read the time at all: they take `now` as an argument. Daemons pass
// RealClock; tests and the simulator pass FakeClock and advance it by hand, so a month of a busy
// pod replays in seconds and a test never sleeps.
//
// Thread safety: RealClock is thread-safe. FakeClock is not; advance it from the thread that
// owns the code under test.
#pragma once

#include <chrono>
#include <cstdint>

namespace podsched {

// Time since the Unix epoch, in microseconds. One type for real and virtual time.
using Duration = std::chrono::microseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint{}) : now_(start) {}
  TimePoint Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }
  void Set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

// Seconds as a double, for reports and cost arithmetic.
inline double ToSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }
inline Duration FromSeconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

}  // namespace podsched
