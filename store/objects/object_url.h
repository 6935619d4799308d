// Parsing of object store URLs (see object_store.h for the URL forms). Pure: no I/O; the
// environment is passed in as a lookup function so that tests control it.
//
// s3:// query parameters:
//   endpoint=http(s)://HOST[:PORT]   default AWS_ENDPOINT_URL, else https://s3.REGION.amazonaws.com
//   region=NAME                      default AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1
//   access_key=, secret_key=         default AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
//   addressing=path|virtual          default path
//   max_attempts=N                   tries per request (1..20, default 5) on 5xx, 429, timeouts
//                                    and connection errors, with exponential backoff
//   connect_timeout_ms=N             default 5000
//   part_size_mb=N                   multipart part size of writers (5..1024, default 8)
// Values are percent-decoded ('+' stays '+').
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace podsched::store {

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

struct FileUrl {
  std::string root;  // absolute directory, no trailing '/' (except "/" itself)
};

struct S3Url {
  std::string bucket;
  std::string prefix;           // "" or a valid key without trailing '/'
  std::string endpoint_scheme;  // "http" or "https"
  std::string endpoint_host;    // host name or address, no port
  std::optional<int> endpoint_port;
  std::string region;
  std::string access_key;
  std::string secret_key;
  bool virtual_host = false;
  int max_attempts = 5;
  int64_t connect_timeout_ms = 5000;
  uint64_t part_size = 8ull << 20;
  std::string redacted_url;  // the URL with access_key and secret_key removed
};

struct ObjectUrl {
  std::optional<FileUrl> file;
  std::optional<S3Url> s3;
};

// Parses `url`; errors (kInvalidArgument) say what is wrong and what is valid.
Result<ObjectUrl> ParseObjectUrl(std::string_view url, const EnvLookup& env);

// EnvLookup over the process environment.
EnvLookup ProcessEnv();

// OK for an S3 bucket name: 3-63 characters of [a-z0-9.-], starting and ending alphanumeric.
Status ValidateBucket(std::string_view bucket);

// Decodes %XX escapes; kInvalidArgument on a malformed escape.
Result<std::string> PercentDecode(std::string_view s);

}  // namespace podsched::store
