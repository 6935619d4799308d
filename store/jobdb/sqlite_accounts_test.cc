// The accounts half of the SQLite store: users and token hashes round-trip, a revocation is an
// upsert of the same row, a failed commit stores nothing, and a v2 database migrates to the latest version.
#include <gtest/gtest.h>

#include "store/jobdb/schema.h"
#include "store/jobdb/sqlite_job_repository.h"
#include "store/jobdb/test_util.h"

namespace podsched::jobdb {
namespace {

using core::AccountChange;
using core::TokenId;
using core::TokenRecord;
using core::UserAccount;
using testing::TempDir;

TimePoint At(int64_t seconds) { return TimePoint(std::chrono::seconds(seconds)); }

UserAccount Bob() {
  return UserAccount{UserName("bob"), false, false, "bob_unix", At(100), UserName("admin")};
}

TokenRecord TokenOf(int64_t id, const std::string& user) {
  TokenRecord t;
  t.id = TokenId(id);
  t.user = UserName(user);
  t.label = "laptop \xfe";
  t.sha256_hex = std::string(63, 'a') + std::to_string(id % 10);
  t.created = At(100 + id);
  t.created_by = UserName("admin");
  return t;
}

TEST(SqliteAccountsTest, UsersAndTokensRoundTripAcrossReopen) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  TokenRecord forever = TokenOf(1, "bob");
  TokenRecord expiring = TokenOf(2, "bob");
  expiring.expires = At(86'500);
  expiring.parent = forever.id;  // made with token 1 (schema v5)
  UserAccount root{UserName("root"), true, true, "", At(5), UserName("admin")};
  {
    auto repo = SqliteJobRepository::Open(path);
    ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
    ASSERT_TRUE((*repo)->CommitAccounts(AccountChange{{Bob(), root}, {forever, expiring}}).ok());
    // Revocation rewrites the row; the hash stays, the secret was never there.
    forever.revoked = At(300);
    ASSERT_TRUE((*repo)->CommitAccounts(AccountChange{{}, {forever}}).ok());
  }
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_TRUE(repo.has_value());
  auto loaded = (*repo)->LoadAccounts();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(loaded->users, (std::vector<UserAccount>{Bob(), root}));
  EXPECT_EQ(loaded->tokens, (std::vector<TokenRecord>{forever, expiring}));
}

TEST(SqliteAccountsTest, AFailedCommitStoresNothing) {
  TempDir dir;
  auto repo = SqliteJobRepository::Open(dir.File("jobs.db"));
  ASSERT_TRUE(repo.has_value());
  ASSERT_TRUE((*repo)->CommitAccounts(AccountChange{{}, {TokenOf(1, "bob")}}).ok());
  // A second token with the same hash violates UNIQUE(sha256): the user row goes too.
  TokenRecord clash = TokenOf(11, "bob");
  Status failed = (*repo)->CommitAccounts(AccountChange{{Bob()}, {clash}});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("nothing of it was stored"), std::string::npos) << failed.ToString();
  auto loaded = (*repo)->LoadAccounts();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(loaded->users.empty());
  EXPECT_EQ(loaded->tokens.size(), 1u);
}

TEST(SqliteAccountsTest, AVersion2DatabaseMigratesWithNoAccounts) {
  TempDir dir;
  const std::string path = dir.File("v2.db");
  {
    auto db = Connection::Open(path);
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(Migrate(**db, 2).ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO quotas VALUES ('ada', 8, 96)").ok());
  }
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
  EXPECT_EQ((*repo)->SchemaVersion().value_or(-1), LatestSchemaVersion());
  auto loaded = (*repo)->LoadAccounts();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_TRUE(loaded->users.empty());
  EXPECT_TRUE(loaded->tokens.empty());
  EXPECT_TRUE((*repo)->CommitAccounts(AccountChange{{Bob()}, {TokenOf(1, "bob")}}).ok());
}

// A version 4 database (tokens without parents) keeps its tokens, each with parent 0.
TEST(SqliteAccountsTest, AVersion4DatabaseKeepsItsTokensWithoutParents) {
  TempDir dir;
  const std::string path = dir.File("v4.db");
  {
    auto db = Connection::Open(path);
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(Migrate(**db, 4).ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO api_tokens (id, user, label, sha256, created_us, "
                            "created_by, expires_us, revoked_us) VALUES "
                            "(7, 'bob', 'old', 'ab', 1, 'admin', NULL, NULL)")
                    .ok());
  }
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
  EXPECT_EQ((*repo)->SchemaVersion().value_or(-1), LatestSchemaVersion());
  auto loaded = (*repo)->LoadAccounts();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  ASSERT_EQ(loaded->tokens.size(), 1u);
  EXPECT_EQ(loaded->tokens[0].label, "old");
  EXPECT_EQ(loaded->tokens[0].parent, core::TokenId());
}

}  // namespace
}  // namespace podsched::jobdb
