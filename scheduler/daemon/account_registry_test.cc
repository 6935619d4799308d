// The token life cycle as pure logic: authentication by digest with every refusal reason, users
// and tokens added, disabled, revoked and expired under an injected time, the read-only
// configured users, the last-admin rule, nothing changed when the store fails, and a reload.
#include "scheduler/daemon/account_registry.h"

#include <gtest/gtest.h>

namespace podsched::daemon {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

UserConfig Configured(const std::string& name, bool admin) {
  UserConfig u;
  u.name = name;
  u.token_sha256 = Sha256Hex("t-" + name);
  u.admin = admin;
  return u;
}

class AccountRegistryTest : public ::testing::Test {
 protected:
  AccountRegistryTest() : accounts_(Configured(), &store_) { EXPECT_TRUE(accounts_.Load()); }
  static std::vector<UserConfig> Configured() {
    return {daemon::Configured("admin", true), daemon::Configured("alice", false)};
  }
  AuthFailure ReasonOf(const std::string& token) {
    auto r = accounts_.AuthenticateToken(token, now_);
    EXPECT_FALSE(r.has_value()) << token;
    return r ? AuthFailure::kCsrf : r.error().reason;
  }

  core::InMemoryAccountRepository store_;
  AccountRegistry accounts_;
  TimePoint now_{std::chrono::seconds(1'700'000'000)};
};

TEST(AccountNamesTest, UserAndUnixNames) {
  for (const char* ok : {"bob", "b", "a.b-c_d", "0day"}) EXPECT_TRUE(ValidateUserName(ok).ok()) << ok;
  EXPECT_TRUE(ValidateUserName(std::string(64, 'x')).ok());
  for (const char* bad : {"", "Bob", "-bob", ".x", "bob smith", "bob/x", "b\n"}) {
    Status s = ValidateUserName(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("a-z, 0-9"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(ValidateUserName(std::string(65, 'x')).ok());
  for (const char* ok : {"", "bob", "_svc", "build-1"}) EXPECT_TRUE(ValidateUnixUser(ok).ok()) << ok;
  for (const char* bad : {"Bob", "1bob", "a.b", "root;x", "x y"}) {
    EXPECT_FALSE(ValidateUnixUser(bad).ok()) << bad;
  }
  EXPECT_FALSE(ValidateUnixUser(std::string(33, 'x')).ok());
}

TEST_F(AccountRegistryTest, HeaderFormsAndConfiguredTokens) {
  auto admin = accounts_.AuthenticateHeader("Bearer t-admin", now_);
  ASSERT_TRUE(admin.has_value());
  EXPECT_EQ(admin->user, "admin");
  EXPECT_TRUE(admin->admin);
  EXPECT_EQ(admin->token.value(), 0);
  EXPECT_EQ(accounts_.AuthenticateHeader("", now_).error().reason, AuthFailure::kMissing);
  for (const char* bad : {"Bearer ", "Basic dDp0", "t-alice", "bearer t-alice"}) {
    auto r = accounts_.AuthenticateHeader(bad, now_);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().reason, AuthFailure::kMalformed) << bad;
    EXPECT_EQ(r.error().status.code(), StatusCode::kUnauthenticated);
  }
  EXPECT_EQ(ReasonOf("t-bob"), AuthFailure::kUnknown);
  EXPECT_EQ(accounts_.AuthenticateToken("t-bob", now_).error().status.message(), "invalid token");
}

TEST_F(AccountRegistryTest, AddedUserAuthenticatesWithItsFirstTokenOnly) {
  auto bob = accounts_.AddUser("bob", false, "bob_unix", "admin", now_);
  ASSERT_TRUE(bob.has_value()) << bob.error().ToString();
  EXPECT_EQ(bob->secret.size(), 48u);
  EXPECT_EQ(bob->record.sha256_hex, Sha256Hex(bob->secret));
  auto who = accounts_.AuthenticateToken(bob->secret, now_);
  ASSERT_TRUE(who.has_value());
  EXPECT_EQ(who->user, "bob");
  EXPECT_FALSE(who->admin);
  EXPECT_EQ(who->token, bob->record.id);
  const AccountView* view = accounts_.FindUser("bob");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->account.unix_user, "bob_unix");
  EXPECT_FALSE(view->configured);
  // The store has the hash, never the secret.
  auto stored = store_.LoadAccounts();
  ASSERT_EQ(stored->tokens.size(), 1u);
  EXPECT_EQ(stored->tokens[0].sha256_hex, Sha256Hex(bob->secret));
  EXPECT_EQ(stored->users.size(), 1u);

  EXPECT_EQ(accounts_.AddUser("bob", true, "", "admin", now_).error().code(),
            StatusCode::kAlreadyExists);
  auto alice = accounts_.AddUser("alice", false, "", "admin", now_);
  EXPECT_NE(alice.error().message().find("configured in podsched.yaml"), std::string::npos);
  EXPECT_EQ(accounts_.AddUser("Bob", false, "", "admin", now_).error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts_.AddUser("carl", false, "Carl", "admin", now_).error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts_.Users().size(), 3u);  // admin, alice (configured), bob
}

// Audit M5: with a leaked token A (1 h) an attacker made a never-expiring B, and revoking A
// left B working. A token now makes only tokens that expire no later than itself, and revoking
// it revokes every token made with it, transitively, in one commit (and in the store).
TEST_F(AccountRegistryTest, ATokenMakesOnlyShorterLivedTokensAndTakesThemWithItWhenRevoked) {
  auto bob = accounts_.AddUser("bob", false, "", "admin", now_);
  ASSERT_TRUE(bob.has_value());
  auto a = accounts_.CreateToken("bob", "a", hours(1), "bob", now_, bob->record.id);
  ASSERT_TRUE(a.has_value()) << a.error().ToString();  // the first token never expires
  const core::TokenId a_id = a->record.id;
  auto forever = accounts_.CreateToken("bob", "b", std::nullopt, "bob", now_, a_id);
  ASSERT_FALSE(forever.has_value());
  EXPECT_EQ(forever.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(forever.error().message().find("expires_in_seconds at most 3600"), std::string::npos)
      << forever.error().message();
  EXPECT_FALSE(accounts_.CreateToken("bob", "b", hours(2), "bob", now_, a_id).has_value());
  auto b = accounts_.CreateToken("bob", "b", minutes(30), "bob", now_, a_id);
  ASSERT_TRUE(b.has_value()) << b.error().ToString();
  EXPECT_EQ(b->record.parent, a_id);
  auto c = accounts_.CreateToken("bob", "c", minutes(10), "bob", now_, b->record.id);
  ASSERT_TRUE(c.has_value());
  auto sibling = accounts_.CreateToken("bob", "d", hours(5), "bob", now_, bob->record.id);
  ASSERT_TRUE(sibling.has_value());

  ASSERT_TRUE(accounts_.Revoke(a_id, now_).has_value());
  EXPECT_EQ(ReasonOf(a->secret), AuthFailure::kRevoked);
  EXPECT_EQ(ReasonOf(b->secret), AuthFailure::kRevoked);
  EXPECT_EQ(ReasonOf(c->secret), AuthFailure::kRevoked);
  EXPECT_TRUE(accounts_.AuthenticateToken(sibling->secret, now_).has_value());
  EXPECT_TRUE(accounts_.AuthenticateToken(bob->secret, now_).has_value());

  // The same after a restart: the store has the parents and the revocations.
  AccountRegistry reloaded(Configured(), &store_);
  ASSERT_TRUE(reloaded.Load().has_value());
  EXPECT_EQ(reloaded.FindToken(c->record.id)->parent, b->record.id);
  EXPECT_FALSE(reloaded.AuthenticateToken(c->secret, now_).has_value());
  EXPECT_TRUE(reloaded.AuthenticateToken(sibling->secret, now_).has_value());
}

TEST_F(AccountRegistryTest, RevokedExpiredAndDisabledFailAtOnceWithTheirReason) {
  auto bob = accounts_.AddUser("bob", false, "", "admin", now_);
  ASSERT_TRUE(bob.has_value());
  auto laptop = accounts_.CreateToken("bob", "laptop", hours(24), "bob", now_);
  ASSERT_TRUE(laptop.has_value()) << laptop.error().ToString();
  EXPECT_EQ(laptop->record.expires, now_ + hours(24));
  const Principal session = *accounts_.AuthenticateToken(laptop->secret, now_);

  // Expiry: valid until the instant it expires.
  now_ += hours(24) - minutes(1);
  EXPECT_TRUE(accounts_.AuthenticateToken(laptop->secret, now_).has_value());
  EXPECT_TRUE(accounts_.Recheck(session, now_).has_value());
  now_ += minutes(1);
  EXPECT_EQ(ReasonOf(laptop->secret), AuthFailure::kExpired);
  EXPECT_EQ(accounts_.Recheck(session, now_).error().reason, AuthFailure::kExpired);
  EXPECT_EQ(TokenState(laptop->record, now_), "expired");

  // Revocation of the first token: refused at once, with a message naming it.
  auto revoked = accounts_.Revoke(bob->record.id, now_);
  ASSERT_TRUE(revoked.has_value());
  EXPECT_EQ(ReasonOf(bob->secret), AuthFailure::kRevoked);
  EXPECT_NE(accounts_.AuthenticateToken(bob->secret, now_).error().status.message().find(
                "token " + std::to_string(bob->record.id.value()) + " was revoked at "),
            std::string::npos);
  EXPECT_EQ(accounts_.Revoke(bob->record.id, now_).error().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(accounts_.Revoke(core::TokenId(999), now_).error().code(), StatusCode::kNotFound);

  // Disabling: every token of the user fails; enabling brings the unrevoked ones back.
  auto fresh = accounts_.CreateToken("bob", "", std::nullopt, "admin", now_);
  ASSERT_TRUE(fresh.has_value());
  ASSERT_TRUE(accounts_.SetDisabled("bob", true).has_value());
  EXPECT_EQ(ReasonOf(fresh->secret), AuthFailure::kDisabled);
  EXPECT_EQ(accounts_.CreateToken("bob", "", std::nullopt, "admin", now_).error().code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(accounts_.SetDisabled("bob", false).has_value());
  EXPECT_TRUE(accounts_.AuthenticateToken(fresh->secret, now_).has_value());
  EXPECT_EQ(ReasonOf(bob->secret), AuthFailure::kRevoked);

  std::string bob_name = "bob";
  EXPECT_EQ(accounts_.Tokens(&bob_name).size(), 3u);
  EXPECT_EQ(accounts_.Tokens(nullptr).size(), 3u);
}

TEST_F(AccountRegistryTest, BadTokenRequestsAreRefused) {
  EXPECT_EQ(accounts_.CreateToken("nobody", "", std::nullopt, "admin", now_).error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(accounts_.CreateToken("alice", "", std::chrono::seconds(59), "admin", now_)
                .error()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts_.CreateToken("alice", "", hours(24 * 3651), "admin", now_).error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts_.CreateToken("alice", "a\nb", std::nullopt, "admin", now_).error().code(),
            StatusCode::kInvalidArgument);
  // A configured user may get extra tokens; they are revocable, the configured one is not.
  auto extra = accounts_.CreateToken("alice", "ci", std::nullopt, "admin", now_);
  ASSERT_TRUE(extra.has_value());
  ASSERT_TRUE(accounts_.Revoke(extra->record.id, now_).has_value());
  EXPECT_TRUE(accounts_.AuthenticateToken("t-alice", now_).has_value());
  for (size_t i = 0; i < kMaxActiveTokensPerUser; ++i) {
    ASSERT_TRUE(accounts_.CreateToken("alice", "", std::nullopt, "admin", now_).has_value());
  }
  EXPECT_EQ(accounts_.CreateToken("alice", "", std::nullopt, "admin", now_).error().code(),
            StatusCode::kResourceExhausted);
}

TEST_F(AccountRegistryTest, ConfiguredUsersAreReadOnlyAndTheLastAdminStays) {
  auto alice = accounts_.SetDisabled("alice", true);
  ASSERT_FALSE(alice.has_value());
  EXPECT_EQ(alice.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(alice.error().message().find("configured"), std::string::npos);
  EXPECT_EQ(accounts_.SetDisabled("nobody", true).error().code(), StatusCode::kNotFound);

  // Without a configured admin, the last enabled API admin cannot be disabled.
  core::InMemoryAccountRepository store;
  AccountRegistry accounts({daemon::Configured("alice", false)}, &store);
  ASSERT_TRUE(accounts.AddUser("root", true, "", "alice", now_).has_value());
  auto last = accounts.SetDisabled("root", true);
  ASSERT_FALSE(last.has_value());
  EXPECT_NE(last.error().message().find("last enabled admin"), std::string::npos);
  ASSERT_TRUE(accounts.AddUser("root2", true, "", "root", now_).has_value());
  EXPECT_TRUE(accounts.SetDisabled("root", true).has_value());
  EXPECT_FALSE(accounts.SetDisabled("root2", true).has_value());
}

TEST_F(AccountRegistryTest, AFailedCommitChangesNothing) {
  auto bob = accounts_.AddUser("bob", false, "", "admin", now_);
  ASSERT_TRUE(bob.has_value());
  store_.FailCommits(Status(StatusCode::kUnavailable, "disk full"));
  auto carl = accounts_.AddUser("carl", false, "", "admin", now_);
  ASSERT_FALSE(carl.has_value());
  EXPECT_EQ(carl.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(carl.error().message().find("nothing was changed"), std::string::npos);
  EXPECT_EQ(accounts_.FindUser("carl"), nullptr);
  EXPECT_FALSE(accounts_.Revoke(bob->record.id, now_).has_value());
  EXPECT_TRUE(accounts_.AuthenticateToken(bob->secret, now_).has_value());
  EXPECT_FALSE(accounts_.SetDisabled("bob", true).has_value());
  EXPECT_FALSE(accounts_.FindUser("bob")->account.disabled);
  EXPECT_FALSE(accounts_.CreateToken("bob", "", std::nullopt, "admin", now_).has_value());
  EXPECT_EQ(accounts_.Tokens(nullptr).size(), 1u);
}

TEST_F(AccountRegistryTest, AReloadRestoresEverythingAndShadowsConfiguredNames) {
  auto bob = accounts_.AddUser("bob", true, "", "admin", now_);
  auto laptop = accounts_.CreateToken("bob", "laptop", std::nullopt, "bob", now_);
  ASSERT_TRUE(bob && laptop);
  ASSERT_TRUE(accounts_.Revoke(bob->record.id, now_).has_value());
  // A later configuration also names bob (as a plain user): the configured one wins.
  AccountRegistry reloaded({daemon::Configured("bob", false)}, &store_);
  auto shadowed = reloaded.Load();
  ASSERT_TRUE(shadowed.has_value());
  EXPECT_EQ(*shadowed, std::vector<std::string>{"bob"});
  EXPECT_EQ(reloaded.AuthenticateToken(bob->secret, now_).error().reason, AuthFailure::kRevoked);
  auto who = reloaded.AuthenticateToken(laptop->secret, now_);
  ASSERT_TRUE(who.has_value());
  EXPECT_FALSE(who->admin);
  // Ids continue after the stored ones.
  auto next = reloaded.CreateToken("bob", "", std::nullopt, "bob", now_);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->record.id.value(), laptop->record.id.value() + 1);
}

}  // namespace
}  // namespace podsched::daemon
