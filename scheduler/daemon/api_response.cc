#include "scheduler/daemon/api_response.h"

#include <charconv>

#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = ErrorJson(code, message);
  if (status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

HttpResponse StatusError(const Status& s) {
  return ErrorResponse(HttpStatusOf(s.code()), StatusCodeName(s.code()), s.message());
}

bool IsStoreFailure(const Status& s) {
  return s.code() == StatusCode::kInternal || s.code() == StatusCode::kUnavailable ||
         s.code() == StatusCode::kDataLoss;
}

HttpResponse CoreError(const Status& s) {
  if (IsStoreFailure(s)) {
    return ErrorResponse(503, "unavailable", "the job store failed; podsched is restarting");
  }
  return StatusError(s);
}

HttpResponse JsonResponse(const google::protobuf::Message& m, int status) {
  HttpResponse r;
  r.status = status;
  r.body = ToJson(m);
  return r;
}

HttpResponse MessageResponse(const HttpRequest& request, const google::protobuf::Message& m,
                             int status) {
  if (!HeaderNames(request.accept, kProtobufMediaType)) return JsonResponse(m, status);
  HttpResponse r;
  r.status = status;
  r.content_type = std::string(kProtobufMediaType);
  r.body = m.SerializeAsString();
  return r;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace podsched::daemon
