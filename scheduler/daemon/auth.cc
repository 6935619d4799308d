#include "scheduler/daemon/auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>

#include "common/check.h"

namespace podsched::daemon {
namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

std::string Unhex(std::string_view hex) {
  std::string out(hex.size() / 2, '\0');
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>(v(hex[2 * i]) * 16 + v(hex[2 * i + 1]));
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof digest);
}

std::string NewToken() {
  unsigned char bytes[24];
  PODSCHED_CHECK(RAND_bytes(bytes, sizeof bytes) == 1);
  return Hex(bytes, sizeof bytes);
}

Authenticator::Authenticator(std::vector<UserConfig> users) : users_(std::move(users)) {
  for (const auto& u : users_) raw_hashes_.push_back(Unhex(u.token_sha256));
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
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  // Compare with every user, without stopping at a match.
  int match = -1;
  for (size_t i = 0; i < raw_hashes_.size(); ++i) {
    bool equal = raw_hashes_[i].size() == sizeof digest &&
                 CRYPTO_memcmp(raw_hashes_[i].data(), digest, sizeof digest) == 0;
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
