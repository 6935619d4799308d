// Who an API caller is (Principal), why a credential was refused (Denied), fresh tokens, and
// per-user rate limiting. Checking tokens is AccountRegistry's (account_registry.h).
//
// Pure apart from randomness (NewToken). RateLimiter takes `now` and is not thread-safe (the
// API's owner thread calls it).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/hash.h"  // Sha256Hex, used with tokens
#include "common/status.h"
#include "common/token_bucket.h"
#include "scheduler/core/accounts.h"

namespace podsched::daemon {

// A fresh random token: 48 hex characters (24 bytes) from OpenSSL's RAND_bytes.
std::string NewToken();

struct Principal {
  Principal() = default;
  Principal(std::string user_name, bool is_admin, core::TokenId token_id = {})
      : user(std::move(user_name)), admin(is_admin), token(token_id) {}

  std::string user;
  bool admin = false;
  // The stored token the caller presented (a dashboard session or a stream keeps it, so that a
  // revocation ends them); 0: a configured token (podsched.yaml users, var/admin.token).
  core::TokenId token;
};

// Why a credential was refused; the name is the `reason` label of
// podsched_auth_failures_total.
enum class AuthFailure {
  kMissing,    // no Authorization header (and no session cookie)
  kMalformed,  // not "Bearer <token>"
  kUnknown,    // no such token
  kRevoked,
  kExpired,
  kDisabled,   // the token's user is disabled
  kSession,    // the session cookie names no live session
  kCsrf,       // a cookie request without X-Requested-With, or from another origin
};
std::string_view AuthFailureName(AuthFailure reason);
inline constexpr AuthFailure kAuthFailures[] = {
    AuthFailure::kMissing, AuthFailure::kMalformed, AuthFailure::kUnknown, AuthFailure::kRevoked,
    AuthFailure::kExpired, AuthFailure::kDisabled,  AuthFailure::kSession, AuthFailure::kCsrf};

struct Denied {
  AuthFailure reason;
  Status status;  // kUnauthenticated, or kPermissionDenied for kCsrf; the message says why
};

// Token bucket per key: `rate` tokens per second up to `burst`. Memory is bounded by the number
// of distinct keys, which are authenticated users (unauthenticated requests are not keyed).
class RateLimiter {
 public:
  RateLimiter(double rate_per_second, double burst) : rate_(rate_per_second), burst_(burst) {}
  // Takes one token from `key`'s bucket; false when it is empty.
  bool Allow(const std::string& key, TimePoint now);

 private:
  double rate_;
  double burst_;
  std::unordered_map<std::string, TokenBucket<TimePoint>> buckets_;
};

}  // namespace podsched::daemon
