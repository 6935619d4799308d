#include "store/objects/sigv4.h"

#include "common/hash.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>

namespace podsched::store {
namespace {

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Header values are trimmed and inner runs of spaces collapse to one.
std::string TrimValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> SortedHeaders(const SigV4Request& req) {
  std::vector<std::pair<std::string, std::string>> h;
  for (const auto& [name, value] : req.headers) h.emplace_back(Lower(name), TrimValue(value));
  std::sort(h.begin(), h.end());
  return h;
}

std::string SignedHeaders(const std::vector<std::pair<std::string, std::string>>& sorted) {
  std::string out;
  for (const auto& [name, value] : sorted) out += (out.empty() ? "" : ";") + name;
  return out;
}

std::string Scope(const SigV4Key& key, TimePoint now) {
  return fmt::format("{}/{}/{}/aws4_request", AmzDate(now).substr(0, 8), key.region, key.service);
}

}  // namespace

std::string UriEncode(std::string_view s, bool encode_slash) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (c == '/' && !encode_slash)) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string AmzDate(TimePoint t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string CanonicalQuery(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> enc;
  for (const auto& [k, v] : query) enc.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) out += fmt::format("{}{}={}", out.empty() ? "" : "&", k, v);
  return out;
}

std::string CanonicalRequest(const SigV4Request& req) {
  auto headers = SortedHeaders(req);
  std::string canonical_headers;
  for (const auto& [name, value] : headers) canonical_headers += name + ":" + value + "\n";
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", req.method, req.canonical_uri,
                     CanonicalQuery(req.query), canonical_headers, SignedHeaders(headers),
                     req.payload_sha256);
}

std::string StringToSign(const SigV4Request& req, const SigV4Key& key, TimePoint now) {
  return fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", AmzDate(now), Scope(key, now),
                     Sha256Hex(CanonicalRequest(req)));
}

std::string SigV4Authorization(const SigV4Request& req, const SigV4Key& key, TimePoint now) {
  std::string k = Hmac("AWS4" + key.secret_key, AmzDate(now).substr(0, 8));
  k = Hmac(k, key.region);
  k = Hmac(k, key.service);
  k = Hmac(k, "aws4_request");
  std::string sig = Hmac(k, StringToSign(req, key, now));
  return fmt::format("AWS4-HMAC-SHA256 Credential={}/{},SignedHeaders={},Signature={}",
                     key.access_key, Scope(key, now), SignedHeaders(SortedHeaders(req)),
                     HexEncode(sig));
}

}  // namespace podsched::store
