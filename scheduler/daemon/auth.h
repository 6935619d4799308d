// Bearer-token authentication and per-token rate limiting for the HTTP API.
//
// Tokens are never stored: the configuration holds the SHA-256 of each token (hex). A request's
// token is hashed and compared with every user's hash in constant time (CRYPTO_memcmp, no early
// exit), so timing reveals neither which user nor how many bytes matched.
//
// Pure apart from hashing; RateLimiter takes `now`. Authenticator is immutable after
// construction (thread-safe); RateLimiter is not thread-safe (the API's owner thread calls it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/hash.h"  // Sha256Hex, used with tokens
#include "common/status.h"
#include "scheduler/daemon/config.h"

namespace podsched::daemon {

// A fresh random token: 48 hex characters from OpenSSL's RAND_bytes.
std::string NewToken();

struct Principal {
  std::string user;
  bool admin = false;
};

class Authenticator {
 public:
  explicit Authenticator(std::vector<UserConfig> users);
  // `authorization` is the header value ("Bearer <token>"). Errors (kUnauthenticated): missing
  // header, not a bearer token, unknown token.
  Result<Principal> Authenticate(std::string_view authorization) const;
  const std::vector<UserConfig>& users() const { return users_; }

 private:
  std::vector<UserConfig> users_;
  std::vector<std::string> raw_hashes_;  // 32 bytes each, same order as users_
};

// Token bucket per key: `rate` tokens per second up to `burst`. Memory is bounded by the number
// of distinct keys, which are authenticated users (unauthenticated requests are not keyed).
class RateLimiter {
 public:
  RateLimiter(double rate_per_second, double burst) : rate_(rate_per_second), burst_(burst) {}
  // Takes one token from `key`'s bucket; false when it is empty.
  bool Allow(const std::string& key, TimePoint now);

 private:
  struct Bucket {
    double tokens;
    TimePoint last;
  };
  double rate_;
  double burst_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace podsched::daemon
