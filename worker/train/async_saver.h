// AsyncSaver: writes one checkpoint shard on a background thread while training goes on.
//
// At most one save is in flight: Start() requires that the previous one was collected with
// Wait(). The bytes are a snapshot owned by the saver, so the trainer may change its parameters
// right after Start(). The thread makes no MPI call.
//
// Thread safety: call from one thread (the trainer's); the background thread is internal.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "store/objects/object_store.h"
#include "worker/train/checkpoint.h"

namespace podsched::train {

class AsyncSaver {
 public:
  AsyncSaver() = default;
  ~AsyncSaver();
  AsyncSaver(const AsyncSaver&) = delete;
  AsyncSaver& operator=(const AsyncSaver&) = delete;

  // Starts writing `bytes` to `key`; `delay_ms` sleeps after each chunk (tests only).
  void Start(store::ObjectStore* store, std::string key, std::string bytes, int delay_ms);
  bool in_flight() const { return thread_.joinable(); }
  // True while a started save has not finished writing.
  bool busy() const { return in_flight() && !done_.load(std::memory_order_acquire); }
  // Blocks until the save finished; returns its result and clears the in-flight state.
  Result<ShardEntry> Wait();

 private:
  std::thread thread_;
  std::atomic<bool> done_{false};
  Result<ShardEntry> result_ = ShardEntry{};
};

}  // namespace podsched::train
