#include "scheduler/daemon/auth.h"

#include <openssl/rand.h>

#include <algorithm>

#include "common/check.h"
#include "common/hash.h"

namespace podsched::daemon {

std::string NewToken() {
  unsigned char bytes[24];
  PODSCHED_CHECK(RAND_bytes(bytes, sizeof bytes) == 1);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

std::string_view AuthFailureName(AuthFailure reason) {
  switch (reason) {
    case AuthFailure::kMissing: return "missing";
    case AuthFailure::kMalformed: return "malformed";
    case AuthFailure::kUnknown: return "unknown";
    case AuthFailure::kRevoked: return "revoked";
    case AuthFailure::kExpired: return "expired";
    case AuthFailure::kDisabled: return "disabled";
    case AuthFailure::kSession: return "session";
    case AuthFailure::kCsrf: return "csrf";
  }
  return "unknown";
}

bool RateLimiter::Allow(const std::string& key, TimePoint now) {
  return buckets_.try_emplace(key, rate_, burst_).first->second.Take(1, now);
}

}  // namespace podsched::daemon
