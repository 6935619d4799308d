#include "worker/train/async_saver.h"

#include <chrono>

#include "common/check.h"
#include "worker/train/checkpoint_store.h"

namespace podsched::train {

AsyncSaver::~AsyncSaver() {
  if (thread_.joinable()) thread_.join();
}

void AsyncSaver::Start(store::ObjectStore* store, std::string key, std::string bytes,
                       int delay_ms) {
  PODSCHED_CHECK(!in_flight());
  done_.store(false, std::memory_order_release);
  thread_ = std::thread([this, store, key = std::move(key), bytes = std::move(bytes), delay_ms] {
    std::function<void()> delay;
    if (delay_ms > 0) {
      delay = [delay_ms] { std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms)); };
    }
    result_ = WriteShard(*store, key, bytes, delay);
    done_.store(true, std::memory_order_release);
  });
}

Result<ShardEntry> AsyncSaver::Wait() {
  PODSCHED_CHECK(in_flight());
  thread_.join();
  return std::move(result_);
}

}  // namespace podsched::train
