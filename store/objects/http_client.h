// A minimal blocking HTTP/1.1 client over libcurl for the S3 backend: one request, whole body
// in memory. Easy handles are pooled so that connections are reused across requests.
//
// Thread safety: Perform may be called from several threads at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace podsched::store {

struct HttpRequest {
  std::string method{};  // GET, PUT, POST, DELETE, HEAD
  std::string url{};
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string_view body{};  // sent for PUT and POST
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
};

struct HttpOptions {
  long connect_timeout_ms = 5000;
  // A transfer slower than min_bytes_per_s on average over stall_timeout_s is abandoned (a hung
  // or trickling server; audit M13).
  long stall_timeout_s = 30;
  long min_bytes_per_s = 1024;
  // A request with a body (PUT, POST: one part of an upload, a manifest) ends within
  // send_timeout_base_s + body bytes / send_min_bytes_per_s (an 8 MiB part: 188 s), whatever the
  // server does: one that answers just fast enough, forever, still ends. A GET has no total bound
  // (its size is the object's); the rate rule above cuts it when it trickles.
  long send_timeout_base_s = 60;
  long send_min_bytes_per_s = 64 << 10;
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // kUnavailable for a transport failure (connection refused, timeout, reset), kDataLoss for a
  // body shorter than its Content-Length; any HTTP status is a successful Perform.
  Result<HttpResponse> Perform(const HttpRequest& req);

 private:
  void* Acquire();
  void Release(void* handle);

  HttpOptions options_;
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* handles, guarded by mu_
};

}  // namespace podsched::store
