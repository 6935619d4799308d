// S3Client: signs, sends and retries one S3 request, and maps failed responses to Status. The
// building block of the s3:// store and its writers (internal to store/objects).
//
// Thread safety: Send may be called from several threads at once.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/objects/http_client.h"
#include "store/objects/object_url.h"

namespace podsched::store {

struct S3Call {
  std::string method{};
  std::string object{};  // full object name in the bucket; "" for a bucket request
  std::vector<std::pair<std::string, std::string>> query{};    // decoded
  std::vector<std::pair<std::string, std::string>> headers{};  // extra headers, signed
  std::string_view body{};
};

class S3Client {
 public:
  explicit S3Client(S3Url url);

  const S3Url& config() const { return url_; }

  // The object name of `key` under the store's prefix.
  std::string ObjectName(std::string_view key) const;
  // "s3://bucket/object", for messages.
  std::string Display(std::string_view object) const;

  // Sends `call`, retrying 5xx, 429 and transport failures with backoff. Returns the final
  // response whatever its status; kUnavailable when the server never answered.
  Result<HttpResponse> Send(const S3Call& call);

  // Like Send, but any status outside 2xx becomes an error (see ErrorFor).
  Result<HttpResponse> SendOk(const S3Call& call);

  // The Status for a non-2xx response: 403 kPermissionDenied, 404 kNotFound, 416 and other
  // 4xx kInvalidArgument, 5xx and 429 kUnavailable; with the server's code and message.
  Status ErrorFor(const HttpResponse& resp, const S3Call& call) const;

 private:
  HttpRequest Build(const S3Call& call, TimePoint now) const;

  S3Url url_;
  std::string host_header_;  // host[:port] as sent (with the bucket for virtual-host style)
  HttpClient http_;
  RealClock clock_;
};

}  // namespace podsched::store
