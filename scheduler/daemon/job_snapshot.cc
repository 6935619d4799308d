#include "scheduler/daemon/job_snapshot.h"

#include <algorithm>
#include <string_view>

namespace podsched::daemon {
namespace {

template <typename Keys>
auto LowerBound(Keys& keys, JobId id) {
  return std::lower_bound(keys.begin(), keys.end(), id.value(),
                          [](const auto& key, int64_t v) { return key.id < v; });
}

// The last chunk whose first id is at most `id` (or the first chunk).
template <typename Chunks>
size_t FindChunk(const Chunks& chunks, JobId id) {
  auto it = std::upper_bound(chunks.begin(), chunks.end(), id.value(),
                             [](int64_t v, const auto& c) { return v < c->keys.front().id; });
  return it == chunks.begin() ? 0 : static_cast<size_t>(it - chunks.begin()) - 1;
}

}  // namespace

uint64_t JobSnapshot::UserHash(std::string_view user) { return std::hash<std::string_view>{}(user); }

JobSnapshot::Key JobSnapshot::KeyOf(const core::JobRecord& job) {
  Key key;
  key.id = job.id.value();
  key.array = job.spec.array ? job.spec.array->array_id.value() : 0;
  key.user = UserHash(job.spec.user.value());
  key.state = job.state;
  key.preemptible = job.spec.preemptible;
  return key;
}

const JobSnapshot::Entry* JobSnapshot::Find(JobId id) const {
  if (chunks_.empty()) return nullptr;
  const Chunk& chunk = *chunks_[FindChunk(chunks_, id)];
  auto it = LowerBound(chunk.keys, id);
  if (it == chunk.keys.end() || it->id != id.value()) return nullptr;
  return chunk.entries[static_cast<size_t>(it - chunk.keys.begin())].get();
}

JobSnapshot::Page JobSnapshot::List(const Filter& filter, JobId after, int page_size) const {
  const uint64_t user = filter.user ? UserHash(*filter.user) : 0;
  const int64_t array = filter.array ? filter.array->value() : 0;
  Page page;
  for (const auto& chunk : chunks_) {
    for (size_t i = 0; i < chunk->keys.size(); ++i) {
      const Key& key = chunk->keys[i];
      if ((filter.state && key.state != *filter.state) ||
          (filter.preemptible && key.preemptible != *filter.preemptible) ||
          (filter.array && key.array != array) ||
          (filter.user && (key.user != user ||
                           chunk->entries[i]->job.spec.user.value() != *filter.user))) {
        continue;
      }
      ++page.total;
      if (key.id <= after.value()) continue;
      if (static_cast<int>(page.jobs.size()) < page_size) {
        page.jobs.push_back(chunk->entries[i].get());
      } else {
        page.more = true;
      }
    }
  }
  return page;
}

JobSnapshotBuilder::JobSnapshotBuilder(pod::Fleet fleet)
    : fleet_(std::make_shared<const pod::Fleet>(std::move(fleet))) {}

size_t JobSnapshotBuilder::ChunkFor(JobId id) const { return FindChunk(chunks_, id); }

JobSnapshotBuilder::Chunk& JobSnapshotBuilder::Own(size_t i) {
  if (!owned_[i]) {
    chunks_[i] = std::make_shared<Chunk>(*chunks_[i]);
    owned_[i] = true;
  }
  return *chunks_[i];
}

void JobSnapshotBuilder::RemoveChunkIfEmpty(size_t i) {
  if (!chunks_[i]->keys.empty()) return;
  chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(i));
  owned_.erase(owned_.begin() + static_cast<std::ptrdiff_t>(i));
}

void JobSnapshotBuilder::Upsert(const core::JobRecord& job,
                                std::optional<pod::AcceleratorType> type) {
  changed_ = true;
  auto entry = std::make_shared<const JobSnapshot::Entry>(job, std::move(type));
  if (chunks_.empty()) {  // the one chunk that is empty, until the insertion below
    chunks_.push_back(std::make_shared<Chunk>());
    owned_.push_back(true);
  }
  const size_t ci = chunks_.front()->keys.empty() ? 0 : ChunkFor(job.id);
  Chunk& chunk = Own(ci);
  auto it = LowerBound(chunk.keys, job.id);
  const auto at = it - chunk.keys.begin();
  if (it != chunk.keys.end() && it->id == job.id.value()) {
    *it = JobSnapshot::KeyOf(job);
    chunk.entries[static_cast<size_t>(at)] = std::move(entry);
    return;
  }
  chunk.keys.insert(it, JobSnapshot::KeyOf(job));
  chunk.entries.insert(chunk.entries.begin() + at, std::move(entry));
  ++size_;
  if (chunk.keys.size() <= kMaxChunk) return;
  // Split in halves; new ids mostly arrive at the end, so the upper half keeps filling.
  auto upper = std::make_shared<Chunk>();
  const auto half = static_cast<std::ptrdiff_t>(chunk.keys.size() / 2);
  upper->keys.assign(chunk.keys.begin() + half, chunk.keys.end());
  upper->entries.assign(chunk.entries.begin() + half, chunk.entries.end());
  chunk.keys.resize(static_cast<size_t>(half));
  chunk.entries.resize(static_cast<size_t>(half));
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(ci) + 1, std::move(upper));
  owned_.insert(owned_.begin() + static_cast<std::ptrdiff_t>(ci) + 1, true);
}

std::optional<std::pair<size_t, size_t>> JobSnapshotBuilder::Locate(JobId id) const {
  if (chunks_.empty()) return std::nullopt;
  const size_t ci = ChunkFor(id);
  const Chunk& chunk = *chunks_[ci];
  auto found = LowerBound(chunk.keys, id);
  if (found == chunk.keys.end() || found->id != id.value()) return std::nullopt;
  return std::make_pair(ci, static_cast<size_t>(found - chunk.keys.begin()));
}

void JobSnapshotBuilder::SetReason(JobId id, SharedText reason) {
  const auto at = Locate(id);
  if (!at) return;
  // Entries are immutable (a published snapshot may hold this one, its JSON rendered): the row
  // again, with the new reason.
  const JobSnapshot::Entry& old = *chunks_[at->first]->entries[at->second];
  core::JobRecord job = old.job;
  job.reason = std::move(reason);
  Upsert(job, old.type);
}

void JobSnapshotBuilder::Erase(JobId id) {
  const auto found = Locate(id);
  if (!found) return;
  const auto [ci, i] = *found;
  const auto at = static_cast<std::ptrdiff_t>(i);
  Chunk& chunk = Own(ci);
  chunk.keys.erase(chunk.keys.begin() + at);
  chunk.entries.erase(chunk.entries.begin() + at);
  --size_;
  changed_ = true;
  RemoveChunkIfEmpty(ci);
}

void JobSnapshotBuilder::EraseUnless(const std::function<bool(JobId)>& keep) {
  for (size_t ci = chunks_.size(); ci-- > 0;) {
    const Chunk& shared = *chunks_[ci];
    if (std::all_of(shared.keys.begin(), shared.keys.end(),
                    [&](const JobSnapshot::Key& k) { return keep(JobId(k.id)); })) {
      continue;
    }
    Chunk& chunk = Own(ci);
    size_t out = 0;
    for (size_t i = 0; i < chunk.keys.size(); ++i) {
      if (!keep(JobId(chunk.keys[i].id))) continue;
      chunk.keys[out] = chunk.keys[i];
      chunk.entries[out] = std::move(chunk.entries[i]);
      ++out;
    }
    size_ -= chunk.keys.size() - out;
    chunk.keys.resize(out);
    chunk.entries.resize(out);
    changed_ = true;
    RemoveChunkIfEmpty(ci);
  }
}

std::shared_ptr<const JobSnapshot> JobSnapshotBuilder::Publish() {
  if (!changed_ && published_) return published_;
  auto snapshot = std::make_shared<JobSnapshot>();
  snapshot->chunks_.assign(chunks_.begin(), chunks_.end());
  snapshot->fleet_ = fleet_;
  snapshot->size_ = size_;
  snapshot->version_ = (published_ ? published_->version_ : 0) + 1;
  std::fill(owned_.begin(), owned_.end(), false);
  changed_ = false;
  published_ = std::move(snapshot);
  return published_;
}

}  // namespace podsched::daemon
