// HttpConnection: one HTTP/1.1 request to podsched over a fresh connection (Boost.Beast), plain
// or TLS (https://, verified against the system's CAs, for podsched behind a TLS proxy).
//
// podctl runs once per command, so its start-up is most of its cost: this client needs only
// Boost headers and (for https) OpenSSL, where libcurl pulled in some 30 shared libraries whose
// loading and relocation took more time than the request itself (docs/benchmarks.md).
// Beast lives in this one translation unit (compile cost).
//
// Not thread-safe (one call at a time).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace podsched::ctl {

class HttpConnection {
 public:
  struct Request {
    std::string method = "GET";
    std::string target = "/";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
  };
  struct Reply {
    long status = 0;
    std::string body;  // empty when the body went to `on_body`
  };
  // Receives the body as it arrives; returns false to stop reading (the call then succeeds).
  using OnBody = std::function<bool(std::string_view)>;

  // Sends `request` to `server` ("http://HOST[:PORT]" or "https://HOST[:PORT]") and reads the
  // reply: all of it into Reply::body, or piece by piece into `on_body`. Connecting may take 5 s;
  // the whole call at most `timeout` (none: a stream). kUnavailable when the server cannot be
  // reached, kInvalidArgument for a malformed URL, kInternal for a broken reply.
  static Result<Reply> Send(const std::string& server, const Request& request,
                            std::optional<std::chrono::seconds> timeout, const OnBody& on_body);
};

}  // namespace podsched::ctl
