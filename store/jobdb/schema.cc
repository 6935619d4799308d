#include "store/jobdb/schema.h"

#include <array>
#include <string>

namespace podsched::jobdb {
namespace {

// Version 1: jobs (queryable columns + the spec as CBOR), the event log, users with quotas.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  user TEXT NOT NULL,
  preemptible INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  submit_time_us INTEGER NOT NULL,
  state INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  restarts INTEGER NOT NULL,
  preemptions INTEGER NOT NULL,
  reason TEXT NOT NULL,
  placement_row INTEGER,
  placement_col INTEGER,
  placement_rows INTEGER,
  placement_cols INTEGER,
  step INTEGER NOT NULL,
  last_checkpoint_step INTEGER NOT NULL,
  start_time_us INTEGER NOT NULL,
  last_checkpoint_time_us INTEGER NOT NULL,
  end_time_us INTEGER NOT NULL,
  not_before_us INTEGER NOT NULL,
  preempt_deadline_us INTEGER NOT NULL,
  reserved_for INTEGER,
  cancel_requested INTEGER NOT NULL,
  usage_core_hours REAL NOT NULL,
  run_time_us INTEGER NOT NULL,
  spec BLOB NOT NULL
);
CREATE INDEX jobs_by_state ON jobs(state, priority, submit_time_us);
CREATE INDEX jobs_by_user ON jobs(user, state);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL,
  time_us INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  from_state INTEGER,
  to_state INTEGER NOT NULL,
  reason TEXT NOT NULL,
  hosts TEXT NOT NULL
);
CREATE INDEX events_by_job ON events(job_id, seq);
CREATE TABLE users (
  name TEXT PRIMARY KEY,
  admin INTEGER NOT NULL,
  on_demand_cores INTEGER NOT NULL,
  preemptible_cores INTEGER NOT NULL,
  decayed_core_hours REAL NOT NULL,
  usage_as_of_us INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Version 2: quotas move to their own table (admins change them independently of usage);
// epochs and allocations (hosts per job epoch) become queryable, backfilled from v1's jobs and
// events.
constexpr std::string_view kV2 = R"sql(
CREATE TABLE quotas (
  user TEXT PRIMARY KEY,
  on_demand_cores INTEGER NOT NULL,
  preemptible_cores INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO quotas (user, on_demand_cores, preemptible_cores)
  SELECT name, on_demand_cores, preemptible_cores FROM users;
ALTER TABLE users DROP COLUMN on_demand_cores;
ALTER TABLE users DROP COLUMN preemptible_cores;
CREATE TABLE epochs (
  job_id INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  start_time_us INTEGER NOT NULL,
  origin_row INTEGER NOT NULL,
  origin_col INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  cols INTEGER NOT NULL,
  PRIMARY KEY (job_id, epoch)
) WITHOUT ROWID;
INSERT INTO epochs
  SELECT id, epoch, start_time_us, placement_row, placement_col, placement_rows, placement_cols
  FROM jobs WHERE placement_row IS NOT NULL;
CREATE TABLE allocations (
  job_id INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  host INTEGER NOT NULL,
  PRIMARY KEY (job_id, epoch, host)
) WITHOUT ROWID;
CREATE INDEX allocations_by_host ON allocations(host, job_id, epoch);
INSERT OR IGNORE INTO allocations
  SELECT e.job_id, e.epoch, h.value FROM events e, json_each(e.hosts) h;
)sql";

// Version 3: the spec (up to 1 MiB, never changed after submit) in a table of its own, written
// once; the jobs row that every progress report and transition rewrites holds only the small
// columns.
constexpr std::string_view kV3 = R"sql(
CREATE TABLE job_specs (
  id INTEGER PRIMARY KEY,
  spec BLOB NOT NULL
);
INSERT INTO job_specs (id, spec) SELECT id, spec FROM jobs;
ALTER TABLE jobs DROP COLUMN spec;
)sql";

// Version 4: API accounts (users created through the API) and bearer tokens, stored as their
// SHA-256 only (scheduler/core/accounts.h). `users` stays the scheduler's fair-share table.
constexpr std::string_view kV4 = R"sql(
CREATE TABLE accounts (
  name TEXT PRIMARY KEY,
  admin INTEGER NOT NULL,
  disabled INTEGER NOT NULL,
  unix_user TEXT NOT NULL,
  created_us INTEGER NOT NULL,
  created_by TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY,
  user TEXT NOT NULL,
  label TEXT NOT NULL,
  sha256 TEXT NOT NULL UNIQUE,
  created_us INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  expires_us INTEGER,
  revoked_us INTEGER
);
CREATE INDEX api_tokens_by_user ON api_tokens(user, id);
)sql";

// Version 5: the token a token was created with (audit M5: revoking a token revokes the tokens
// made with it). 0: made with a configured token, by an admin command, or before version 5.
constexpr std::string_view kV5 = R"sql(
ALTER TABLE api_tokens ADD COLUMN parent_id INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 6: the pod of a placement, by name (a fleet of pods, issue 28). NULL: the one pod of a
// database written before version 6 (or by a caller that names no pods).
constexpr std::string_view kV6 = R"sql(
ALTER TABLE jobs ADD COLUMN placement_pod TEXT;
ALTER TABLE epochs ADD COLUMN pod TEXT;
)sql";

// Version 7: an event's pod, by name; its hosts (and allocations') are that pod's own ids. NULL:
// an event of a database of one pod, whose ids are the pod's.
constexpr std::string_view kV7 = R"sql(
ALTER TABLE events ADD COLUMN pod TEXT;
)sql";

// Version 8: a multislice job's slices after the first while it holds hosts (issue 28), as JSON
// text [{"pod": NAME, "row", "col", "rows", "cols"}] (codec.h). NULL: one slice.
constexpr std::string_view kV8 = R"sql(
ALTER TABLE jobs ADD COLUMN more_slices TEXT;
)sql";

// Version 9: an event's other slices (a multislice job), as JSON text [{"pod": NAME, "hosts":
// [...]}] (codec.h). NULL: one slice.
constexpr std::string_view kV9 = R"sql(
ALTER TABLE events ADD COLUMN more_slices TEXT;
)sql";

// Version 10: where a job's checkpoints are and what crossing zones cost it (issue 28, stage 3):
// the store its first launch chose and that store's zone ('' unknown), the size of its last
// checkpoint, and the bytes and dollars of egress across zones so far.
constexpr std::string_view kV10 = R"sql(
ALTER TABLE jobs ADD COLUMN checkpoint_store TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN checkpoint_zone TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN checkpoint_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN egress_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN egress_usd REAL NOT NULL DEFAULT 0;
)sql";

// Version 11: each user's egress so far (UserRecord::egress_usd).
constexpr std::string_view kV11 = R"sql(
ALTER TABLE users ADD COLUMN egress_usd REAL NOT NULL DEFAULT 0;
)sql";

constexpr std::array<Migration, 11> kMigrations = {{
    {1, "jobs, events, users", kV1},
    {2, "quotas table; epochs and allocations (hosts per job epoch)", kV2},
    {3, "job specs in their own table (written once)", kV3},
    {4, "accounts and api_tokens (API users and hashed bearer tokens)", kV4},
    {5, "api_tokens.parent_id (the token each token was created with)", kV5},
    {6, "jobs.placement_pod and epochs.pod (the pod of a placement in a fleet)", kV6},
    {7, "events.pod (an event's hosts are its pod's own ids)", kV7},
    {8, "jobs.more_slices (a multislice job's other slices)", kV8},
    {9, "events.more_slices (the hosts of a multislice job's other slices)", kV9},
    {10, "jobs.checkpoint_store, checkpoint_zone, checkpoint_bytes, egress_bytes, egress_usd", kV10},
    {11, "users.egress_usd (each user's egress so far)", kV11},
}};

Status ApplyStep(Connection& db, const Migration& step) {
  Status begun = db.Exec("BEGIN IMMEDIATE");
  if (!begun.ok()) return begun.WithContext("migrating " + db.path());
  // Re-read inside the write lock: another process may have migrated meanwhile.
  auto version = db.QueryInt("PRAGMA user_version");
  Status status = version ? Status::Ok() : version.error();
  if (status.ok() && *version == step.version - 1) {
    status = db.Exec(step.sql);
    // PRAGMA takes no bound parameters; the value is a compile-time integer, not user input.
    if (status.ok()) status = db.Exec("PRAGMA user_version = " + std::to_string(step.version));
  }
  if (status.ok()) status = db.Exec("COMMIT");
  if (!status.ok()) {
    (void)db.Exec("ROLLBACK");
    return status.WithContext("migrating " + db.path() + " to schema version " +
                              std::to_string(step.version) + " (" + std::string(step.description) +
                              ")");
  }
  return Status::Ok();
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }
int LatestSchemaVersion() { return kMigrations.back().version; }

Status Migrate(Connection& db, int target) {
  auto version = db.QueryInt("PRAGMA user_version");
  if (!version) return version.error().WithContext("reading the schema version of " + db.path());
  if (*version > target) {
    return ToStatus(FailedPrecondition(
        "job database " + db.path() + " has schema version " + std::to_string(*version) +
        ", newer than this podsched supports (" + std::to_string(target) +
        "); run a newer podsched or restore a backup made by this version"));
  }
  if (*version == 0) {
    auto tables = db.QueryInt("SELECT count(*) FROM sqlite_schema");
    if (!tables) return tables.error().WithContext("reading " + db.path());
    if (*tables > 0) {
      return ToStatus(FailedPrecondition(db.path() +
                                         " is an SQLite database but not a podsched job database "
                                         "(it has tables and no schema version)"));
    }
  }
  for (const Migration& step : kMigrations) {
    if (step.version <= *version || step.version > target) continue;
    Status applied = ApplyStep(db, step);
    if (!applied.ok()) return applied;
  }
  return Status::Ok();
}

}  // namespace podsched::jobdb
