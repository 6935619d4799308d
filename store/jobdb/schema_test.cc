#include "store/jobdb/schema.h"

#include <gtest/gtest.h>

#include "store/jobdb/codec.h"
#include "store/jobdb/sqlite_job_repository.h"
#include "store/jobdb/test_util.h"

namespace podsched::jobdb {
namespace {

using testing::TempDir;

std::unique_ptr<Connection> RawOpen(const std::string& path) {
  auto db = Connection::Open(path);
  EXPECT_TRUE(db.has_value()) << db.error().ToString();
  return db ? std::move(*db) : nullptr;
}

TEST(SchemaTest, StepsAreNumberedInOrder) {
  auto steps = Migrations();
  ASSERT_FALSE(steps.empty());
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].version, static_cast<int>(i) + 1);
  EXPECT_EQ(LatestSchemaVersion(), steps.back().version);
}

// A database written by schema version 1 (quotas inside users, no epochs/allocations tables)
// opens, migrates to the latest version, and loads with its data intact and backfilled.
TEST(SchemaTest, OpeningAVersion1DatabaseMigratesIt) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  {
    auto db = RawOpen(path);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(Migrate(*db, 1).ok());
    ASSERT_EQ(db->QueryInt("PRAGMA user_version").value_or(-1), 1);
    auto user = db->Prepare(
        "INSERT INTO users (name, admin, on_demand_cores, preemptible_cores, "
        "decayed_core_hours, usage_as_of_us) VALUES (?,?,?,?,?,?)");
    ASSERT_TRUE(user.has_value());
    (*user)->Bind(1, "ada").Bind(2, int64_t{1}).Bind(3, int64_t{8}).Bind(4, int64_t{96});
    (*user)->Bind(5, 1.5).Bind(6, int64_t{42});
    ASSERT_TRUE((*user)->Run().ok());
    // A v1 job on hosts 20 and 28 (placement origin (2,4), shape 2x1), with its PLACED event.
    auto job = db->Prepare(
        "INSERT INTO jobs VALUES (5, 'ada', 0, 2, 100, 3, 3, 0, 0, 'running', 2, 4, 2, 1, 7, 5, "
        "110, 120, 0, 0, 0, NULL, 0, 0.25, 0, ?)");
    ASSERT_TRUE(job.has_value()) << job.error().ToString();
    (*job)->BindBlob(1, EncodeSpec(testing::FullJob(5).spec));
    ASSERT_TRUE((*job)->Run().ok());
    ASSERT_TRUE(
        db->Exec("INSERT INTO events VALUES (1, 5, 110, 3, 0, 1, 'placed', '[20,28]')").ok());
  }
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
  EXPECT_EQ((*repo)->SchemaVersion().value_or(-1), LatestSchemaVersion());
  auto state = (*repo)->Load();
  ASSERT_TRUE(state.has_value()) << state.error().ToString();
  ASSERT_EQ(state->users.size(), 1u);
  EXPECT_EQ(state->users[0].name.value(), "ada");
  EXPECT_EQ(state->users[0].quota, (core::Quota{8, 96}));
  EXPECT_TRUE(state->users[0].admin);
  EXPECT_EQ(state->users[0].decayed_core_hours, 1.5);
  EXPECT_EQ(state->next_event_seq, 2);
  ASSERT_EQ(state->jobs.size(), 1u);
  EXPECT_EQ(state->jobs[0].spec, testing::FullJob(5).spec);
  EXPECT_EQ(state->jobs[0].state, core::JobState::kRunning);
  EXPECT_EQ(state->jobs[0].placement, (pod::FleetPlacement{0, pod::Placement{{2, 4}, {2, 1}}}));
  auto db = RawOpen(path);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(
      db->QueryInt("SELECT count(*) FROM allocations WHERE job_id = 5 AND epoch = 3").value_or(-1),
      2);
  EXPECT_EQ(db->QueryInt("SELECT origin_row * 10 + origin_col FROM epochs WHERE job_id = 5 AND "
                         "epoch = 3")
                .value_or(-1),
            24);
}

TEST(SchemaTest, MigratingTwiceIsANoOp) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  ASSERT_TRUE(SqliteJobRepository::Open(path).has_value());
  auto db = RawOpen(path);
  ASSERT_NE(db, nullptr);
  EXPECT_TRUE(Migrate(*db).ok());
  EXPECT_EQ(db->QueryInt("PRAGMA user_version").value_or(-1), LatestSchemaVersion());
}

TEST(SchemaTest, RefusesADatabaseFromANewerVersion) {
  TempDir dir;
  const std::string path = dir.File("future.db");
  ASSERT_TRUE(SqliteJobRepository::Open(path).has_value());
  {
    auto db = RawOpen(path);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("PRAGMA user_version = 99").ok());
  }
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_FALSE(repo.has_value());
  EXPECT_EQ(repo.error().code(), StatusCode::kFailedPrecondition);
  const std::string& message = repo.error().message();
  EXPECT_NE(message.find("schema version 99"), std::string::npos) << message;
  EXPECT_NE(message.find("(" + std::to_string(LatestSchemaVersion()) + ")"), std::string::npos)
      << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(SchemaTest, RefusesAnSqliteDatabaseThatIsNotOurs) {
  TempDir dir;
  const std::string path = dir.File("other.db");
  {
    auto db = RawOpen(path);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("CREATE TABLE photos (id INTEGER PRIMARY KEY)").ok());
  }
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_FALSE(repo.has_value());
  EXPECT_NE(repo.error().message().find("not a podsched job database"), std::string::npos)
      << repo.error().ToString();
}

}  // namespace
}  // namespace podsched::jobdb
