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
  auto [it, inserted] = buckets_.try_emplace(key, Bucket{burst_, now});
  Bucket& b = it->second;
  if (!inserted && now > b.last) {
    b.tokens = std::min(burst_, b.tokens + rate_ * ToSeconds(now - b.last));
    b.last = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

}  // namespace podsched::daemon
