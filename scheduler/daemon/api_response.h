// Building the API's responses: JSON bodies, `{"code", "message"}` errors and the mapping of a
// Status to an HTTP status (docs/api.md, "Conventions").
//
// Pure; thread-safe.
#pragma once

#include <google/protobuf/message.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "scheduler/daemon/http_types.h"

namespace podsched::daemon {

// HTTP status for a Status code (invalid_argument -> 400, not_found -> 404, ...).
int HttpStatusOf(StatusCode code);
// An error reply; a 401 carries `WWW-Authenticate: Bearer`.
HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message);
// The error reply of a Status (its code and message).
HttpResponse StatusError(const Status& status);
// The error reply of a failed core call. Inside the core only the store fails with internal,
// unavailable or data loss: those are a 503 saying that podsched restarts (the engine marks
// itself fatal); any other error is StatusError.
HttpResponse CoreError(const Status& status);
bool IsStoreFailure(const Status& status);
// 200 (or `status`) with the message as JSON (docs/api.md: proto field names, every field).
HttpResponse JsonResponse(const google::protobuf::Message& message, int status = 200);
// The same, or the message in protobuf's binary encoding when the request's Accept header asks
// for it (kProtobufMediaType, json_util.h).
HttpResponse MessageResponse(const HttpRequest& request, const google::protobuf::Message& message,
                             int status = 200);

// A decimal integer, the whole string; nullopt otherwise.
std::optional<int64_t> ParseInt(std::string_view s);

}  // namespace podsched::daemon
