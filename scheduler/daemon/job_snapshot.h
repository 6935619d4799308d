// JobSnapshot: the jobs in the scheduler's memory as of the last commit, for reads served off the
// scheduler thread (issue 29, stage 2).
//
// The scheduler thread keeps a JobSnapshotBuilder up to date with every job row the store
// committed (BufferingRepository::TakeCommittedJobs) and publishes a snapshot after each commit,
// before the replies that commit releases: so a reader never sees less than any reply its client
// got, and never sees a change that is not durable. A snapshot is immutable and shared
// (std::shared_ptr<const JobSnapshot>); readers on any thread list and find jobs in it while the
// scheduler thread goes on.
//
// Publishing costs the rows that changed, not the jobs stored: jobs live in chunks of at most
// kMaxChunk, by id; a snapshot shares every chunk with the previous one except those a change
// touched (copy on write), and copies one pointer per chunk.
//
// Lists are filtered on compact keys (id, state, class, array, a hash of the owner) laid out
// side by side in each chunk, so counting the matches of 10,000 jobs reads 320 KB in order
// rather than 10,000 records. Each entry can keep its rendered JSON (Entry::Json), made once by
// the first reader that needs it.
//
// Pure: no I/O, no clock. The builder is single-owner; a published snapshot is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "pod/accelerator.h"
#include "pod/fleet.h"
#include "scheduler/core/job.h"

namespace podsched::daemon {

class JobSnapshot {
 public:
  // One job as committed. Immutable once published.
  class Entry {
   public:
    Entry(core::JobRecord job, std::optional<pod::AcceleratorType> type)
        : job(std::move(job)), type(std::move(type)) {}
    const core::JobRecord job;
    const std::optional<pod::AcceleratorType> type;  // nullopt: no pod of the fleet holds it
    // `type` as JobToProto and CostUsd take it (null: none).
    const pod::AcceleratorType* accelerator() const { return type ? &*type : nullptr; }

    // The text `render(*this)` returns, rendered by the first caller only (thread-safe). Only
    // for what depends on the entry alone: not, e.g., the cost of a job that holds hosts now.
    const std::string& Json(const std::function<std::string(const Entry&)>& render) const {
      std::call_once(json_once_, [&] { json_ = render(*this); });
      return json_;
    }

   private:
    mutable std::once_flag json_once_;
    mutable std::string json_;
  };

  // Which jobs a list wants; every set field must match.
  struct Filter {
    std::optional<core::JobState> state;
    std::optional<bool> preemptible;
    std::optional<std::string> user;
    std::optional<JobId> array;  // the tasks of this array
    // Whether `job` matches, read from the record (List reads its keys instead).
    bool Matches(const core::JobRecord& job) const {
      return (!state || job.state == *state) &&
             (!preemptible || job.spec.preemptible == *preemptible) &&
             (!user || job.spec.user.value() == *user) &&
             (!array || (job.spec.array && job.spec.array->array_id == *array));
    }
  };
  struct Page {
    std::vector<const Entry*> jobs;  // valid while the snapshot lives
    int total = 0;                   // jobs matching the filter, on every page
    bool more = false;               // a matching job follows the page
  };

  // The job, or nullptr.
  const Entry* Find(JobId id) const;
  // The matching jobs with ids above `after`, by id, at most `page_size` of them.
  Page List(const Filter& filter, JobId after, int page_size) const;
  size_t size() const { return size_; }
  const pod::Fleet& fleet() const { return *fleet_; }
  // Counts published snapshots that changed something (the first is 1).
  int64_t version() const { return version_; }

 private:
  friend class JobSnapshotBuilder;
  struct Key {
    int64_t id = 0;
    int64_t array = 0;  // the array's id; 0: not an array task
    uint64_t user = 0;  // UserHash of the owner
    core::JobState state = core::JobState::kQueued;
    bool preemptible = false;
  };
  struct Chunk {
    std::vector<Key> keys;                              // by id
    std::vector<std::shared_ptr<const Entry>> entries;  // entries[i] is keys[i]'s job
  };
  static uint64_t UserHash(std::string_view user);
  static Key KeyOf(const core::JobRecord& job);

  std::vector<std::shared_ptr<const Chunk>> chunks_;  // by id, none empty
  std::shared_ptr<const pod::Fleet> fleet_;
  size_t size_ = 0;
  int64_t version_ = 0;
};

class JobSnapshotBuilder {
 public:
  // The most jobs one chunk holds; a change copies at most one chunk.
  static constexpr size_t kMaxChunk = 256;

  // `fleet`: the pods' names and grids, for rendering placements (read only).
  explicit JobSnapshotBuilder(pod::Fleet fleet);

  // Adds the job, or replaces the row of the same id.
  void Upsert(const core::JobRecord& job, std::optional<pod::AcceleratorType> type);
  // Gives the job (if present) a new reason, the rest of its row as it was
  // (core::ReasonUpdate).
  void SetReason(JobId id, SharedText reason);
  // Removes the job if present.
  void Erase(JobId id);
  // Removes every job for which `keep` is false (O(jobs)).
  void EraseUnless(const std::function<bool(JobId)>& keep);
  size_t size() const { return size_; }

  // The jobs as they are now. Nothing changed since the last call: the same snapshot.
  std::shared_ptr<const JobSnapshot> Publish();

 private:
  using Chunk = JobSnapshot::Chunk;
  // The index of the chunk where `id` is or belongs (chunks_ not empty).
  size_t ChunkFor(JobId id) const;
  // Where `id` is: its chunk's index and its place in the chunk; nullopt when it is not here.
  std::optional<std::pair<size_t, size_t>> Locate(JobId id) const;
  // Chunk `i`, copied first when a published snapshot shares it.
  Chunk& Own(size_t i);
  void RemoveChunkIfEmpty(size_t i);

  std::shared_ptr<const pod::Fleet> fleet_;
  std::vector<std::shared_ptr<Chunk>> chunks_;
  std::vector<bool> owned_;  // owned_[i]: chunk i is not in any published snapshot
  size_t size_ = 0;
  bool changed_ = true;
  std::shared_ptr<const JobSnapshot> published_;
};

}  // namespace podsched::daemon
