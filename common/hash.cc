#include "common/hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/check.h"

namespace podsched {

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * bytes.size(), '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kDigits[b >> 4];
    out[2 * i + 1] = kDigits[b & 15];
  }
  return out;
}

std::string HexDecode(std::string_view hex) {
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return {};
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = value(hex[2 * i]);
    const int lo = value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return {};
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  PODSCHED_CHECK(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                      reinterpret_cast<const unsigned char*>(data.data()), data.size(), out,
                      &len) != nullptr);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // Fuzz builds only (CMakeLists.txt): a fixed sequence, so that a fuzz input runs the same code
  // every time (the gate's exploration is deterministic). Never secret.
  static uint64_t state = 0;
  for (char& c : out) {
    uint64_t x = (state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    c = static_cast<char>(x >> 56);
  }
#else
  PODSCHED_CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) == 1);
#endif
  return out;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string Sha256(std::string_view bytes) {
  // The algorithm looked up once: OpenSSL 3's one-shot SHA256() looks it up at every call, most
  // of its cost for inputs of a few dozen bytes (a trace's rows: 6,500 instructions each). An
  // EVP_MD is safe to share between threads.
  static const EVP_MD* const sha256 = [] {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    PODSCHED_CHECK(md != nullptr);
    return md;
  }();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  PODSCHED_CHECK(EVP_Digest(bytes.data(), bytes.size(), digest, &n, sha256, nullptr) == 1);
  return std::string(reinterpret_cast<const char*>(digest), n);
}

std::string Sha256Hex(std::string_view bytes) { return HexEncode(Sha256(bytes)); }

Sha256Hasher::Sha256Hasher() : ctx_(EVP_MD_CTX_new()) {
  PODSCHED_CHECK(ctx_ != nullptr);
  PODSCHED_CHECK(EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) == 1);
}

Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256Hasher::Update(std::string_view bytes) {
  PODSCHED_CHECK(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size()) ==
                 1);
}

std::string Sha256Hasher::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  PODSCHED_CHECK(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest, &n) == 1);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), n));
}

}  // namespace podsched
