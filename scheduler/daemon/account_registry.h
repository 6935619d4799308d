// AccountRegistry: the API's users and bearer tokens, and their life cycle (docs/api.md, "Users
// and tokens").
//
// Two kinds of users:
// - Configured users: podsched.yaml's `users:` (each with the SHA-256 of one token) and the
//   generated `admin` (var/admin.token). They are read-only here: they cannot be disabled and
//   their configured token cannot be revoked (edit the file, restart). They may be given further
//   tokens through the API, which are revocable like any other.
// - API users: created by an admin (AddUser), stored with their tokens in the AccountRepository.
//   A stored user whose name is also configured is shadowed by the configured one (Load reports
//   it).
//
// Authentication hashes the presented token (SHA-256) and looks the hex digest up in a hash map.
// The lookup's timing depends only on the digest, and the digest of a guess says nothing about
// any real token (SHA-256 is preimage resistant), so timing leaks neither a token nor which user
// it belongs to; no secret is compared byte by byte. A revoked or expired token stays in the map,
// so its holder gets a precise error; the message never reveals anything about other tokens.
//
// Every change is committed to the repository first and applied to memory only when that
// succeeded: an error leaves both as they were ("nothing half-written").
//
// Not thread-safe (the engine's thread owns it). Takes `now`; randomness from NewToken.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "scheduler/core/accounts.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/config.h"

namespace podsched::daemon {

// Bounds (kResourceExhausted beyond them).
inline constexpr size_t kMaxApiUsers = 10000;
inline constexpr size_t kMaxActiveTokensPerUser = 100;
// A token's lifetime when it expires: one minute .. ten years.
inline constexpr Duration kMinTokenLifetime = std::chrono::minutes(1);
inline constexpr Duration kMaxTokenLifetime = std::chrono::hours(24 * 3650);

// A user as the API lists it.
struct AccountView {
  core::UserAccount account;
  bool configured = false;  // from podsched.yaml or the generated admin: read-only
};

// A token just made: its record and the secret, which exists only in this reply.
struct IssuedToken {
  core::TokenRecord record;
  std::string secret;
};

// "active", "expired" or "revoked" (a revoked token that also expired is "revoked").
std::string_view TokenState(const core::TokenRecord& token, TimePoint now);

// 1..64 characters of a-z, 0-9, '.', '_', '-', starting with a letter or a digit.
Status ValidateUserName(std::string_view name);
// A POSIX-style account name (IsUnixUserName: 1..32 characters of a-z, 0-9, '_', '-', starting
// with a letter or '_'). Empty is allowed (not set).
Status ValidateUnixUser(std::string_view name);

class AccountRegistry {
 public:
  // `configured`: podsched.yaml's users plus the generated admin. `repo` must outlive this.
  AccountRegistry(std::vector<UserConfig> configured, core::AccountRepository* repo);

  // Reads the stored users and tokens (once, at start). Returns the names of stored users that
  // a configured user shadows. Errors: the store failed.
  Result<std::vector<std::string>> Load();

  // `authorization` is the header value, "Bearer <token>".
  std::expected<Principal, Denied> AuthenticateHeader(std::string_view authorization,
                                                      TimePoint now) const;
  std::expected<Principal, Denied> AuthenticateToken(std::string_view token, TimePoint now) const;
  // Whether the credential a principal was authenticated with still holds (a session or a
  // stream made from it); the principal as it is now.
  std::expected<Principal, Denied> Recheck(const Principal& who, TimePoint now) const;

  // A new API user and its first token. Errors: kInvalidArgument (name, unix_user),
  // kAlreadyExists, kResourceExhausted (kMaxApiUsers), a store failure.
  Result<IssuedToken> AddUser(std::string_view name, bool admin, std::string_view unix_user,
                              const std::string& by, TimePoint now);
  // Disables (every token fails at once) or enables an API user; a no-op when already so.
  // Errors: kNotFound, kFailedPrecondition (a configured user; the last enabled admin), a store
  // failure.
  Result<core::UserAccount> SetDisabled(std::string_view name, bool disabled);
  // A new token for `user` (configured or API), expiring after `lifetime` if given, made with
  // the stored token `parent` (0: a configured token). A token made with a stored token expires
  // no later than it (audit M5: a leaked 1-day token minted a never-expiring one, and revoking
  // the leaked one left it). Errors: kNotFound, kFailedPrecondition (user disabled),
  // kInvalidArgument (label, lifetime, a lifetime past the parent's), kResourceExhausted
  // (kMaxActiveTokensPerUser), a store failure.
  Result<IssuedToken> CreateToken(std::string_view user, std::string_view label,
                                  std::optional<Duration> lifetime, const std::string& by,
                                  TimePoint now, core::TokenId parent = {});
  // Revokes the token and, in the same commit, every token made with it, transitively (those
  // already revoked keep their time). Returns the token `id`. Errors: kNotFound,
  // kFailedPrecondition (already revoked), a store failure.
  Result<core::TokenRecord> Revoke(core::TokenId id, TimePoint now);

  // Configured users first, then API users, each by name.
  std::vector<AccountView> Users() const;
  const AccountView* FindUser(std::string_view name) const;
  // Every stored token (of `user` when given), by id.
  std::vector<core::TokenRecord> Tokens(const std::string* user) const;
  const core::TokenRecord* FindToken(core::TokenId id) const;

 private:
  struct Credential {
    core::TokenId token;  // 0: the configured token of `user`
    std::string user;
  };
  std::expected<Principal, Denied> Check(const Credential& credential, TimePoint now) const;
  Status Commit(const core::AccountChange& change);
  bool IsEnabledAdmin(const AccountView& user) const;

  core::AccountRepository* repo_;
  std::map<std::string, AccountView, std::less<>> users_;
  std::map<core::TokenId, core::TokenRecord> tokens_;
  std::unordered_map<std::string, Credential> by_digest_;  // hex SHA-256 -> credential
  int64_t next_token_id_ = 1;
};

}  // namespace podsched::daemon
