// Clock and MonotonicClock: the only ways podsched code reads the time.
//
// Clock is wall time (since the Unix epoch): what is stored, sent and shown. MonotonicClock is
// for timeouts and intervals within one process (heartbeat periods, grace deadlines): it never
// jumps when the wall clock is set, and its values mean nothing outside the process, so they are
// never stored or sent.
//
// Pure libraries never read the time at all: they take `now` as an argument. Daemons pass
// RealClock / RealMonotonicClock; tests and the simulator pass FakeClock / FakeMonotonicClock and
// advance them by hand, so a month of a busy pod replays in seconds and a test never sleeps.
//
// Thread safety: the real clocks are thread-safe. The fake ones are not; advance them from the
// thread that owns the code under test.
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

// Monotonic time in the same unit; comparable only with other MonotonicTime values.
using MonotonicTime = std::chrono::time_point<std::chrono::steady_clock, Duration>;

class MonotonicClock {
 public:
  virtual ~MonotonicClock() = default;
  virtual MonotonicTime Now() const = 0;
};

class RealMonotonicClock final : public MonotonicClock {
 public:
  MonotonicTime Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
  }
};

class FakeMonotonicClock final : public MonotonicClock {
 public:
  explicit FakeMonotonicClock(MonotonicTime start = MonotonicTime{}) : now_(start) {}
  MonotonicTime Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }

 private:
  MonotonicTime now_;
};

// Seconds as a double, for reports and cost arithmetic.
inline double ToSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }
inline Duration FromSeconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

}  // namespace podsched
