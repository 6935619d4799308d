// Backlog: the bound on work queued from one thread to another (the bus thread posting agent
// messages to the scheduler thread). A message is admitted while the queued bytes (each message
// counted with a fixed overhead, so that a flood of tiny messages is bounded too) stay within
// the limit; otherwise it is dropped and counted. Dropping is safe for the bus: heartbeats repeat,
// Exited reports are resent until acknowledged, progress is a sample, and a job's whole log is
// in the object store (the live tail loses lines).
//
// Thread-safe (atomics): TryAdd on the producer, Remove on the consumer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace podsched::daemon {

class Backlog {
 public:
  static constexpr int64_t kOverheadBytes = 256;  // per message: the post, its strings

  explicit Backlog(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // Admits a message of `bytes` (then Remove(bytes) once it is handled), or counts a drop.
  bool TryAdd(size_t bytes) {
    const int64_t cost = static_cast<int64_t>(bytes) + kOverheadBytes;
    if (queued_.fetch_add(cost, std::memory_order_relaxed) + cost > max_bytes_) {
      queued_.fetch_sub(cost, std::memory_order_relaxed);
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void Remove(size_t bytes) {
    queued_.fetch_sub(static_cast<int64_t>(bytes) + kOverheadBytes, std::memory_order_relaxed);
  }
  int64_t queued_bytes() const { return queued_.load(std::memory_order_relaxed); }
  int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  const int64_t max_bytes_;
  std::atomic<int64_t> queued_{0};
  std::atomic<int64_t> dropped_{0};
};

}  // namespace podsched::daemon
