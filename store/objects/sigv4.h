// AWS Signature Version 4 for S3 requests (header-based authentication). Pure: the caller
// supplies the time, so the signer is tested against AWS's documented example.
//
// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/hash.h"  // Sha256Hex: payload hashes

namespace podsched::store {

struct SigV4Key {
  std::string access_key;
  std::string secret_key;
  std::string region;
  std::string service = "s3";
};

struct SigV4Request {
  std::string method{};         // "GET", "PUT", ...
  std::string canonical_uri{};  // the path exactly as sent, already URI-encoded ("/b/my%20key")
  std::vector<std::pair<std::string, std::string>> query{};    // decoded names and values
  std::vector<std::pair<std::string, std::string>> headers{};  // must include host,
                                                               // x-amz-date, x-amz-content-sha256
  std::string payload_sha256;                                  // hex, or "UNSIGNED-PAYLOAD"
};

// RFC 3986 encoding as S3 wants it: unreserved bytes (A-Z a-z 0-9 - _ . ~) stay, every other
// byte becomes %XX (upper-case hex); '/' stays unless `encode_slash`.
std::string UriEncode(std::string_view s, bool encode_slash);

// "20130524T000000Z".
std::string AmzDate(TimePoint t);

// The canonical query string: sorted, encoded "a=1&b=2" (also what goes on the wire).
std::string CanonicalQuery(const std::vector<std::pair<std::string, std::string>>& query);

std::string CanonicalRequest(const SigV4Request& req);
std::string StringToSign(const SigV4Request& req, const SigV4Key& key, TimePoint now);

// The value of the Authorization header for `req` signed at `now` (which must equal the
// request's x-amz-date header).
std::string SigV4Authorization(const SigV4Request& req, const SigV4Key& key, TimePoint now);

}  // namespace podsched::store
