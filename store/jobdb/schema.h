// The job database's schema and its migrations.
//
// The schema version lives in `PRAGMA user_version`. kMigrations is an ordered list of steps;
// step N brings a database from version N-1 to N. Migrate() applies every missing step, each in
// its own BEGIN IMMEDIATE transaction that also sets user_version, so a crash leaves the
// database at a whole version. A database whose version is newer than the newest step is
// refused (an older podsched must not write to a schema it does not know).
//
// Rules for new steps: append, never edit a released step; a step must work on every database
// of the previous version (data included); describe it in docs/jobdb.md.
#pragma once

#include <span>
#include <string_view>

#include "common/status.h"
#include "store/jobdb/sqlite.h"

namespace podsched::jobdb {

struct Migration {
  int version;  // the version this step produces
  std::string_view description;
  std::string_view sql;
};

// Every step, oldest first; Migrations()[i].version == i + 1.
std::span<const Migration> Migrations();
int LatestSchemaVersion();

// Brings `db` to `target` (default: the latest version). Errors: the database is newer than
// `target` (kFailedPrecondition, naming both versions), it is not a podsched database (version
// 0 with foreign tables), or a step failed (the step is rolled back; earlier steps stay).
Status Migrate(Connection& db, int target = LatestSchemaVersion());

}  // namespace podsched::jobdb
