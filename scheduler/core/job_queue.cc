#include "scheduler/core/job_queue.h"

#include <algorithm>

namespace podsched::core {

std::optional<JobQueue::GroupKey> JobQueue::GroupKeyOf(const QueuedRef& ref) {
  // What Pass::Remember keeps no memo for (dependencies, arrays) or what Pass::SkippedAsGroup does
  // not judge alike (a zone or pod: other pods; several slices: ConsiderSlices).
  const JobSpec& spec = ref.job->spec;
  if (!spec.dependencies.empty() || spec.array || !spec.zone.empty() || !spec.pod.empty() ||
      spec.slices != 1) {
    return std::nullopt;
  }
  const pod::SliceShape shape = ref.type.shape();
  return GroupKey{static_cast<int>(ref.type.generation()),
                  shape.rows,
                  shape.cols,
                  ref.priority,
                  spec.preemptible,
                  JobCores(spec, ref.type)};
}

void JobQueue::Join(Node& node, JobId job) {
  node.group = 0;
  const std::optional<GroupKey> key = GroupKeyOf(node.ref);
  if (!key) return;
  auto [it, fresh] = group_ids_.try_emplace(*key, 0);
  if (fresh) {
    if (free_groups_.empty()) {
      it->second = static_cast<uint32_t>(groups_.size());
      groups_.emplace_back();
      group_keys_.push_back(*key);
      group_nodes_.emplace_back();
    } else {
      it->second = free_groups_.back();
      free_groups_.pop_back();
      group_keys_[it->second] = *key;
    }
  }
  const uint32_t id = it->second;
  QueueGroup& group = groups_[id];
  // The new member's memo is its own: judged on its own until a pass finds it alike.
  if (group.stamped && !group.AddOutlier(node.ref, job)) Unstamp(id);
  const JobSpec& spec = node.ref.job->spec;
  if (const Duration estimate = spec.expected_runtime.value_or(spec.max_runtime);
      estimate > Duration::zero()) {
    group.min_estimate = std::min(group.min_estimate, estimate);
  }
  node.group = id;
  node.slot = static_cast<uint32_t>(group.members.size());
  group.members.push_back(&node.ref);
  group_nodes_[id].push_back(&node);
}

void JobQueue::Leave(Node& node, JobId job) {
  if (node.group == 0) return;
  const uint32_t id = node.group;
  groups_[id].TakeBackOutliers([job](JobId outlier, const QueuedRef&) { return outlier == job; });
  std::vector<QueuedRef*>& members = groups_[id].members;
  std::vector<Node*>& nodes = group_nodes_[id];
  members[node.slot] = members.back();
  nodes[node.slot] = nodes.back();
  nodes[node.slot]->slot = node.slot;
  members.pop_back();
  nodes.pop_back();
  node.group = 0;
  if (members.empty()) {
    groups_[id] = QueueGroup{};
    group_ids_.erase(group_keys_[id]);
    free_groups_.push_back(id);
  }
}

void QueueGroup::GiveStampTo(QueuedRef& member) const {
  const Duration estimate = member.memo.estimate;  // the member's own
  member.memo = memo;
  member.memo.estimate = estimate;
  member.told = told;
}

bool QueueGroup::AddOutlier(QueuedRef& member, JobId id) {
  if (outliers_.size() >= kMaxOutliers) return false;
  outliers_.emplace_back(id, &member);
  outlier_bits_ |= Bit(id);
  return true;
}

void JobQueue::SetApart(Node& node, JobId id, bool keep_stamp) {
  if (node.group == 0) return;
  QueueGroup& group = groups_[node.group];
  if (!group.stamped || group.IsOutlier(id)) return;
  if (keep_stamp) group.GiveStampTo(node.ref);
  if (!group.AddOutlier(node.ref, id)) Unstamp(node.group);
}

void JobQueue::Unstamp(uint32_t id) {
  QueueGroup& g = groups_[id];
  if (!g.stamped) return;
  for (QueuedRef* member : g.members) {
    const bool outlier = std::any_of(g.outliers().begin(), g.outliers().end(),
                                     [member](const auto& o) { return o.second == member; });
    if (!outlier) g.GiveStampTo(*member);
  }
  g.ClearOutliers();
  g.stamped = false;
}

void JobQueue::Add(JobId id, TimePoint submit, const QueuedRef& ref) {
  changed_.push_back({submit, id});
  if (auto it = by_id_.find(id); it != by_id_.end()) {
    Node& node = *it->second;
    const QueuedRef& old = node.ref;
    const std::optional<GroupKey> key = GroupKeyOf(ref);
    const bool same_group = node.group == 0 ? !key : key && *key == group_keys_[node.group];
    if (node.submit == submit && old.priority == ref.priority &&
        old.user_number == ref.user_number && same_group) {
      // Its entries point at this node and hold the same copies; its memo starts again.
      SetApart(node, id, /*keep_stamp=*/false);
      node.ref = ref;
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
  Join(*node, id);
  added_.push_back(
      QueueEntry{ref.priority, ref.user_number, 0, submit, id, &node->ref, node->group});
}

void JobQueue::Remove(JobId id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  const QueueEntry key{0, 0, 0, it->second->submit, id, nullptr};
  Leave(*it->second, id);
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
