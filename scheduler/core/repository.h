// JobRepository: where the scheduler core persists its state (store/jobdb implements it with
// SQLite; InMemoryJobRepository below serves the simulator and tests).
//
// Contract:
// - Commit(batch) is atomic: every job row, event and user row of the batch becomes durable
//   together or not at all. The scheduler calls it once per public call (submit, tick, report,
//   ...) with everything that call changed, so a transition (job row + its event) is always in
//   one transaction. When Commit returns an error the scheduler's memory is ahead of the store;
//   the caller (the daemon) must treat that as fatal and restart, reloading with Load().
// - Load() returns the latest row of every job and user and the next ids; Scheduler::Create
//   rebuilds the scheduler's state from it exactly (with retention, only active and recently
//   ended jobs: LoadEndedSince, LoadDependencyTargets).
// - Job rows are upserts keyed by JobRecord::id; events are appended and never change.
// - A reason update changes the reason of a job row the store already has (an earlier batch's,
//   or an earlier commit's) and nothing else: a queued job's pending reason changes with other
//   jobs (a victim's minimum runtime passing, a head starting), often for thousands of jobs at
//   once, and rewriting each whole row for it was most of such a pass (docs/scheduler.md,
//   "Pending reasons"). No job has both a row and a reason update in one batch.
//
// Thread safety: implementations need not be thread-safe; one owner calls them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "scheduler/core/job.h"

namespace podsched::core {

// A stored job's new reason (JobRecord::reason), the only change to its row.
struct ReasonUpdate {
  JobId job;
  SharedText reason;  // shared with the job's record (many jobs are told one text at once)
  friend bool operator==(const ReasonUpdate&, const ReasonUpdate&) = default;
};

// Everything one scheduler call changed.
struct StoreBatch {
  std::vector<JobRecord> jobs;   // latest row of each changed job (upsert)
  std::vector<JobEvent> events;  // appended, in seq order
  std::vector<UserRecord> users; // latest row of each changed user (upsert)
  std::vector<ReasonUpdate> reasons;  // jobs whose reason alone changed, each once, by id
  bool empty() const { return jobs.empty() && events.empty() && users.empty() && reasons.empty(); }
};

// What Load() returns.
// A stored job left out at load, and why (audit M11: one unreadable row of an ended job, or an
// ended job the configured pod can no longer place, kept podsched from starting at all). Its
// rows stay in the store untouched.
struct QuarantinedJob {
  JobId id;
  std::string reason;
  friend bool operator==(const QuarantinedJob&, const QuarantinedJob&) = default;
};

struct StoredState {
  std::vector<JobRecord> jobs;    // every job, by id, but the quarantined
  std::vector<QuarantinedJob> quarantined;  // ended jobs that could not be read
  std::vector<UserRecord> users;  // every user, by name
  int64_t next_job_id = 1;        // greater than every stored job id
  int64_t next_event_seq = 1;     // greater than every stored event seq
};

// Ended jobs in the store, for the history the scheduler no longer keeps (GET /jobs?history).
struct EndedJobQuery {
  JobId after{0};                   // ids above this
  std::optional<JobId> before;      // and below this (an array's tasks: [id, id + 10,000))
  std::optional<UserName> user;
  std::optional<JobState> state;    // one of SUCCEEDED, FAILED, CANCELLED
  std::optional<bool> preemptible;
  int limit = 100;                  // rows read at most
};
struct EndedJobPage {
  std::vector<JobRecord> jobs;  // by id; rows that cannot be read are left out
  JobId last_read{0};           // the highest id read: the next query's `after`
  bool more = false;            // `limit` rows were read: there may be more
};

class JobRepository {
 public:
  virtual ~JobRepository() = default;

  // Loads everything (on open).
  virtual Result<StoredState> Load() = 0;
  // Load(), but without the jobs that ended before `ended_since` (the scheduler keeps ended jobs
  // in memory only for its retention, SchedulerConfig::ended_job_retention); next_job_id still
  // counts every stored job. The default filters Load(); a store with an index does better.
  virtual Result<StoredState> LoadEndedSince(TimePoint ended_since);
  // The stored jobs with ids in [first, first + count), by id: how the scheduler and the API read
  // back an ended job the scheduler no longer keeps. The default filters Load().
  virtual Result<std::vector<JobRecord>> JobsInRange(JobId first, int64_t count);
  // Stored jobs in an ended state matching `query`, by id. The default filters Load().
  virtual Result<EndedJobPage> EndedJobs(const EndedJobQuery& query);
  // Persists one batch atomically (see the contract above).
  virtual Status Commit(const StoreBatch& batch) = 0;
  // The events of one job, oldest first (history for the API; the core never reads it).
  virtual Result<std::vector<JobEvent>> EventsOf(JobId job) = 0;

  // One transition: a job row and its event in one transaction.
  Status PersistTransition(const JobRecord& job, const JobEvent& event) {
    return Commit(StoreBatch{{job}, {event}, {}, {}});
  }
  // A user row alone (quota change by an admin, new user).
  Status PutUser(const UserRecord& user) { return Commit(StoreBatch{{}, {}, {user}, {}}); }
};

// Keeps everything in memory. Optionally keeps no events (the simulator replays millions of
// transitions and only counts them).
class InMemoryJobRepository final : public JobRepository {
 public:
  explicit InMemoryJobRepository(bool keep_events = true) : keep_events_(keep_events) {}

  Result<StoredState> Load() override;
  Result<std::vector<JobRecord>> JobsInRange(JobId first, int64_t count) override;
  Status Commit(const StoreBatch& batch) override;
  Result<std::vector<JobEvent>> EventsOf(JobId job) override;

  int64_t commits() const { return commits_; }
  int64_t events_committed() const { return events_committed_; }

 private:
  bool keep_events_;
  // By id in a hash table: a commit finds each of its rows (a pass that retells thousands of
  // jobs their reason) without a walk down a tree. Load and JobsInRange sort what they return.
  std::unordered_map<JobId, JobRecord> jobs_;  // std::hash<JobId>: common/ids.h
  std::map<UserName, UserRecord> users_;
  std::map<JobId, std::vector<JobEvent>> events_;
  int64_t max_event_seq_ = 0;
  int64_t commits_ = 0;
  int64_t events_committed_ = 0;
};

}  // namespace podsched::core
