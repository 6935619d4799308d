// API accounts as the store keeps them: users created through the API and the bearer tokens of
// every user, with the repository interface a store implements (store/jobdb on SQLite; a later
// PostgreSQL store implements the same). The daemon's AccountRegistry
// (scheduler/daemon/account_registry.h) owns the rules; nothing in the scheduling core reads
// these.
//
// Contract of AccountRepository:
// - CommitAccounts(change) is atomic: every user and token row of the change is stored (upsert by
//   name / id) or none is. The registry applies a change to its memory only after it committed,
//   so a failed commit leaves both the store and the registry as they were.
// - LoadAccounts() returns every stored user (by name) and token (by id), revoked ones included.
// - Only the SHA-256 of a token is ever stored, never the token.
//
// Thread safety: implementations need not be thread-safe; one owner calls them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"

namespace podsched::core {

// A stored token's id (1, 2, ...). 0 names no stored token: the credential of a user configured
// in podsched.yaml (or the generated admin token).
using TokenId = StrongId<struct TokenIdTag, int64_t>;

struct UserAccount {
  UserName name;
  bool admin = false;
  // A disabled user's tokens all fail; their jobs are left alone.
  bool disabled = false;
  // The Unix account the user's jobs run as; empty: not set (the API name is used).
  std::string unix_user;
  TimePoint created{};
  UserName created_by;
  friend bool operator==(const UserAccount&, const UserAccount&) = default;
};

struct TokenRecord {
  TokenId id;
  UserName user;
  std::string label;       // free text, e.g. "laptop"; may be empty
  std::string sha256_hex;  // lower-case hex SHA-256 of the token
  TimePoint created{};
  UserName created_by;
  std::optional<TimePoint> expires;  // none: never
  std::optional<TimePoint> revoked;  // set once, never cleared
  // The token it was created with: it expires no later than that one and is revoked with it.
  // 0: created with a configured token (podsched.yaml, var/admin.token), as a user's first
  // token, or before parents were recorded.
  TokenId parent{};
  friend bool operator==(const TokenRecord&, const TokenRecord&) = default;
};

// What one account operation changes (upserts).
struct AccountChange {
  std::vector<UserAccount> users;
  std::vector<TokenRecord> tokens;
};

struct StoredAccounts {
  std::vector<UserAccount> users;   // by name
  std::vector<TokenRecord> tokens;  // by id
};

class AccountRepository {
 public:
  virtual ~AccountRepository() = default;
  virtual Result<StoredAccounts> LoadAccounts() = 0;
  // Atomic (see the contract above). Errors: the store failed (nothing of `change` is stored).
  virtual Status CommitAccounts(const AccountChange& change) = 0;
};

// Keeps everything in memory (tests, builds without store/jobdb). FailCommits makes every later
// commit fail with `status` (tests of the failure path).
class InMemoryAccountRepository final : public AccountRepository {
 public:
  Result<StoredAccounts> LoadAccounts() override;
  Status CommitAccounts(const AccountChange& change) override;
  void FailCommits(Status status) { fail_ = std::move(status); }

 private:
  std::map<UserName, UserAccount> users_;
  std::map<TokenId, TokenRecord> tokens_;
  Status fail_;
};

}  // namespace podsched::core
