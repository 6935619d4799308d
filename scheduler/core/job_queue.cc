#include "scheduler/core/job_queue.h"

#include <algorithm>

namespace podsched::core {

void JobQueue::Add(JobId id, TimePoint submit, const QueuedRef& ref) {
  changed_.push_back({submit, id});
  if (auto it = by_id_.find(id); it != by_id_.end()) {
    const QueuedRef& old = it->second->ref;
    if (it->second->submit == submit && old.priority == ref.priority &&
        old.user_number == ref.user_number) {
      it->second->ref = ref;  // its entries point at this node and hold the same copies
      return;
    }
    Remove(id);
  }
  Node* node = nullptr;
  if (free_.empty()) {
    node = &pool_.emplace_back(Node{ref, submit});
  } else {
    node = free_.back();
    free_.pop_back();
    *node = Node{ref, submit};
  }
  by_id_.emplace(id, node);
  added_.push_back(QueueEntry{ref.priority, ref.user_number, 0, submit, id, &node->ref});
}

void JobQueue::Remove(JobId id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  const QueueEntry key{0, 0, 0, it->second->submit, id, nullptr};
  free_.push_back(it->second);
  by_id_.erase(it);
  // A job removed and added again with the same submit time has a dead entry beside its live one.
  for (auto e = std::lower_bound(ordered_.begin(), ordered_.end(), key, Before);
       e != ordered_.end() && e->id == id; ++e) {
    if (e->ref != nullptr) {
      e->ref = nullptr;
      ++removed_;
      return;
    }
  }
  // Added since the last InSubmitOrder: not in ordered_ yet.
  auto a = std::find_if(added_.begin(), added_.end(), [&](const QueueEntry& e) { return e.id == id; });
  if (a != added_.end()) {
    *a = added_.back();
    added_.pop_back();
  }
}

const std::vector<QueueEntry>& JobQueue::InSubmitOrder() {
  if (removed_ > 0) {
    std::erase_if(ordered_, [](const QueueEntry& e) { return e.ref == nullptr; });
    removed_ = 0;
  }
  if (!added_.empty()) {
    std::sort(added_.begin(), added_.end(), Before);
    const bool after_all = ordered_.empty() || Before(ordered_.back(), added_.front());
    const auto middle = static_cast<std::ptrdiff_t>(ordered_.size());
    ordered_.insert(ordered_.end(), added_.begin(), added_.end());
    if (!after_all) std::inplace_merge(ordered_.begin(), ordered_.begin() + middle, ordered_.end(), Before);
    added_.clear();
  }
  return ordered_;
}

std::vector<QueueKey> JobQueue::TakeChanged() {
  std::vector<QueueKey> changed;
  changed.swap(changed_);
  return changed;
}

}  // namespace podsched::core
