// ApiClient: podctl's HTTP client for the podsched API (HttpConnection: one connection per call).
//
// Not thread-safe (one per thread).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"

namespace podsched::ctl {

struct ApiReply {
  long status = 0;
  std::string body;
};

// Exit codes of podctl (docs/podctl.md).
enum ExitCode {
  kExitOk = 0,
  kExitOther = 1,
  kExitUsage = 2,
  kExitAuth = 3,
  kExitNotFound = 4,
  kExitInvalid = 5,
  kExitUnreachable = 6,
  kExitJobFailed = 10,     // wait: the job ended FAILED
  kExitJobCancelled = 11,  // wait: the job ended CANCELLED
};

// A failed call: the message to print and the exit code.
struct CallError {
  int exit_code;
  std::string message;
};

// How a call's body is encoded, and the reply asked for: JSON, or protobuf's binary encoding of
// the same message (docs/api.md; podsched's POST /api/v1/jobs takes it), which spares a
// one-process-per-command CLI protobuf's JSON mapping: 2 of podctl's 10 ms of CPU per submit.
enum class Encoding { kJson, kProtobuf };

class ApiClient {
 public:
  ApiClient(std::string server, std::string token);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // One request; any HTTP status is a reply. Errors only when the server cannot be reached.
  Result<ApiReply> Call(const std::string& method, const std::string& path,
                        const std::string& body = "", Encoding encoding = Encoding::kJson);
  // Call, then maps a non-2xx status to a CallError carrying the server's message.
  std::expected<std::string, CallError> CallOk(const std::string& method, const std::string& path,
                                               const std::string& body = "",
                                               Encoding encoding = Encoding::kJson);
  // Reads an SSE stream; `on_event(data)` gets each frame's data (on_event("") once for the
  // opening comment) and returns false to stop. Returns an error when the stream could not be
  // opened or broke.
  std::expected<void, CallError> Stream(const std::string& path,
                                        const std::function<bool(const std::string&)>& on_event);

  const std::string& server() const { return server_; }

 private:
  std::string server_;
  std::string token_;
};

// Maps an HTTP status to podctl's exit code.
int ExitCodeForStatus(long status);

// The server's explanation of a failed call: the "message" of its JSON error body, or
// "HTTP <status>" when the body has none (a proxy's page, an empty reply).
std::string ReplyErrorMessage(const ApiReply& reply);

}  // namespace podsched::ctl
