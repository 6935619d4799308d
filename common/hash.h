// Hex encoding, SHA-256, HMAC-SHA256 and random bytes (OpenSSL), shared by the API's token hashes, the S3 signer and
// podtrain's checkpoint checksums.
//
// Thread safety: free functions are thread-safe; a Sha256 object is used by one thread.
#pragma once

#include <string>
#include <string_view>

namespace podsched {

// Lower-case hex of raw bytes.
std::string HexEncode(std::string_view bytes);
// Raw bytes of lower- or upper-case hex; an empty string when `hex` is not valid hex of even
// length (callers validate hex they accept from users before relying on it).
std::string HexDecode(std::string_view hex);

// Raw 32-byte digest, and its lower-case hex.
std::string Sha256(std::string_view bytes);
std::string Sha256Hex(std::string_view bytes);

// Raw 32-byte HMAC-SHA256 of `data` under `key`.
std::string HmacSha256(std::string_view key, std::string_view data);
// `n` bytes from OpenSSL's CSPRNG (aborts if it fails: no key may come from a weak source).
std::string RandomBytes(size_t n);
// a == b, in time that depends only on the sizes (for secrets and MACs).
bool ConstantTimeEqual(std::string_view a, std::string_view b);

// Incremental SHA-256, for data that arrives in pieces (streamed shards).
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;
  void Update(std::string_view bytes);
  // Lower-case hex of everything passed to Update; call once.
  std::string HexDigest();

 private:
  void* ctx_;  // EVP_MD_CTX, kept opaque so OpenSSL headers stay out of this header
};

}  // namespace podsched
