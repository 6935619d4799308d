// SqliteJobRepository: the scheduler core's JobRepository on an SQLite file (docs/jobdb.md).
//
// Open(path) creates or opens the database, switches it to WAL with synchronous=FULL, sets a
// busy timeout and migrates the schema (schema.h); a database of a newer schema version, a file
// that is not SQLite, or an SQLite file that is not ours is refused with an error naming it.
//
// Durability: when Commit returns OK the batch is on disk (WAL + fsync at COMMIT); it survives a
// crash of the process and, as far as the file system honours fsync, of the machine. Commit is
// one BEGIN IMMEDIATE ... COMMIT transaction holding the batch's job rows (upserts), events
// (appends), users and quotas, plus the derived epochs and allocations rows. On any error the
// transaction is rolled back and nothing of the batch is stored.
//
// Load() rebuilds exactly what was committed: JobRecord, UserRecord and every id compare equal.
//
// It is also the AccountRepository (API users and token hashes, schema version 3): CommitAccounts
// is its own transaction, independent of job batches (no job row refers to an account row).
//
// Thread safety: not thread-safe (one owner, as JobRepository says). For concurrent committers
// use GroupCommitter (group_committer.h). Several processes or connections may open the same
// file: writers serialize on SQLite's lock, waiting up to the busy timeout.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "scheduler/core/accounts.h"
#include "scheduler/core/repository.h"
#include "store/jobdb/sqlite.h"

namespace podsched::jobdb {

struct JobDbOptions {
  // How long a writer waits for another connection's lock before Commit fails (kUnavailable).
  Duration busy_timeout = std::chrono::seconds(10);
  // The fleet's pod names in fleet order (FleetPlacement::pod indexes them): a placement's pod
  // is stored by name, so that reordering the configured pods moves no job. Empty: no names
  // (tools, tests): only placements in pod 0 can be written, and stored without a pod.
  // Loading a placement in a pod these names do not have is an error naming it.
  std::vector<std::string> pods;
};

class SqliteJobRepository final : public core::JobRepository, public core::AccountRepository {
 public:
  static Result<std::unique_ptr<SqliteJobRepository>> Open(const std::string& path,
                                                           JobDbOptions options = {});

  Result<core::StoredState> Load() override;
  // Filters in SQL: an ended job that is left out is never decoded.
  Result<core::StoredState> LoadEndedSince(TimePoint ended_since) override;
  Result<std::vector<core::JobRecord>> JobsInRange(JobId first, int64_t count) override;
  Result<core::EndedJobPage> EndedJobs(const core::EndedJobQuery& query) override;
  Status Commit(const core::StoreBatch& batch) override;
  Result<std::vector<core::JobEvent>> EventsOf(JobId job) override;

  Result<core::StoredAccounts> LoadAccounts() override;
  Status CommitAccounts(const core::AccountChange& change) override;

  // Commits several batches in ONE transaction (group commit): all of them or none.
  Status CommitAll(std::span<const core::StoreBatch* const> batches);

  // Result of `PRAGMA integrity_check`: "ok" when the file is sound, else SQLite's findings.
  Result<std::string> IntegrityCheck();
  Result<int> SchemaVersion();
  const std::string& path() const { return db_->path(); }

 private:
  SqliteJobRepository(std::unique_ptr<Connection> db, std::vector<std::string> pods)
      : db_(std::move(db)), pods_(std::move(pods)) {}
  // The stored name of pod `pod` of a placement of `job` (nullopt: pod 0 without names), or why
  // it cannot be.
  Result<std::optional<std::string>> PodName(JobId job, int pod) const;
  // A stored pod name back to its index in pods_ (nullopt: pod 0), or why it cannot be.
  Result<int> PodIndex(int64_t job, const std::optional<std::string>& name) const;
  // A stored job row back (the pod name mapped to its index in pods_).
  Result<core::JobRecord> Read(const Statement& s) const;
  Result<core::StoredState> LoadSnapshot(TimePoint ended_since);
  Status Apply(const core::StoreBatch& batch);
  Status WriteJob(const core::JobRecord& job);
  Status WriteReason(const core::ReasonUpdate& update);
  Status WriteEvent(const core::JobEvent& event);
  Status WriteUser(const core::UserRecord& user);
  Status WriteAccount(const core::UserAccount& account);
  Status WriteToken(const core::TokenRecord& token);

  std::unique_ptr<Connection> db_;
  const std::vector<std::string> pods_;
  // Jobs whose spec row is committed (Load, then each commit): a later row update skips the
  // spec. specs_new_: written in the open transaction.
  std::unordered_set<int64_t> specs_stored_;
  std::vector<int64_t> specs_new_;
};

}  // namespace podsched::jobdb
