#include "scheduler/daemon/auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>

#include "common/check.h"
#include "common/hash.h"

namespace podsched::daemon {
namespace {

}  // namespace

std::string NewToken() {
  unsigned char bytes[24];
  PODSCHED_CHECK(RAND_bytes(bytes, sizeof bytes) == 1);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

Authenticator::Authenticator(std::vector<UserConfig> users) : users_(std::move(users)) {
  for (const auto& u : users_) raw_hashes_.push_back(HexDecode(u.token_sha256));
}

Result<Principal> Authenticator::Authenticate(std::string_view authorization) const {
  if (authorization.empty()) {
    return Error(StatusCode::kUnauthenticated,
                 "missing Authorization header; send 'Authorization: Bearer <token>'");
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer) || authorization.size() == kBearer.size()) {
    return Error(StatusCode::kUnauthenticated, "Authorization must be 'Bearer <token>'");
  }
  std::string_view token = authorization.substr(kBearer.size());
  const std::string digest = Sha256(token);
  // Compare with every user, without stopping at a match.
  int match = -1;
  for (size_t i = 0; i < raw_hashes_.size(); ++i) {
    bool equal = raw_hashes_[i].size() == digest.size() &&
                 CRYPTO_memcmp(raw_hashes_[i].data(), digest.data(), digest.size()) == 0;
    match = equal ? static_cast<int>(i) : match;
  }
  if (match < 0) return Error(StatusCode::kUnauthenticated, "invalid token");
  return Principal{users_[match].name, users_[match].admin};
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
