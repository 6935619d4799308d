#include "scheduler/ctl/client.h"

#include <nlohmann/json.hpp>

#include "common/json_reader.h"

#include "scheduler/ctl/http_connection.h"

namespace podsched::ctl {
namespace {

struct StreamState {
  std::string buffer;
  std::string data;
  bool opened = false;
  const std::function<bool(const std::string&)>* on_event;
  bool stopped = false;
};

// Splits the SSE byte stream into frames (blank-line separated) and hands their data on; false
// stops reading.
bool OnStreamBytes(StreamState& state, std::string_view bytes) {
  StreamState* s = &state;
  s->buffer.append(bytes);
  size_t pos;
  while ((pos = s->buffer.find('\n')) != std::string::npos) {
    std::string line = s->buffer.substr(0, pos);
    s->buffer.erase(0, pos + 1);
    if (line.empty()) {
      bool go_on = true;
      if (!s->opened) {
        s->opened = true;
        go_on = (*s->on_event)("");
      }
      if (go_on && !s->data.empty()) go_on = (*s->on_event)(s->data);
      s->data.clear();
      if (!go_on) {
        s->stopped = true;
        return false;
      }
    } else if (line.starts_with("data: ")) {
      s->data += line.substr(6);
    }
  }
  return true;
}

}  // namespace

std::string ReplyErrorMessage(const ApiReply& reply) {
  auto j = ParseJsonDocument(reply.body, "reply");
  if (j) {
    JsonReader r(*j, "reply");
    std::string message = r.StringOr("message", "");
    if (r.ok() && !message.empty()) return message;
  }
  return "HTTP " + std::to_string(reply.status);
}

int ExitCodeForStatus(long status) {
  if (status >= 200 && status < 300) return kExitOk;
  if (status == 401 || status == 403) return kExitAuth;
  if (status == 404) return kExitNotFound;
  if (status == 400 || status == 409 || status == 413 || status == 422) return kExitInvalid;
  return kExitOther;
}

ApiClient::ApiClient(std::string server, std::string token)
    : server_(std::move(server)), token_(std::move(token)) {
  while (!server_.empty() && server_.back() == '/') server_.pop_back();
}

ApiClient::~ApiClient() = default;

Result<ApiReply> ApiClient::Call(const std::string& method, const std::string& path,
                                 const std::string& body, Encoding encoding) {
  HttpConnection::Request req;
  req.method = method;
  req.target = path;
  req.body = body;
  if (!token_.empty()) req.headers.emplace_back("Authorization", "Bearer " + token_);
  if (encoding == Encoding::kProtobuf) {
    req.headers.emplace_back("Content-Type", "application/x-protobuf");
    req.headers.emplace_back("Accept", "application/x-protobuf");  // errors still come as JSON
  } else {
    req.headers.emplace_back("Content-Type", "application/json");
  }
  auto reply = HttpConnection::Send(server_, req, std::chrono::seconds(60), nullptr);
  if (!reply) {
    return Unavailable("cannot reach podsched at " + server_ + ": " + reply.error().message());
  }
  return ApiReply{reply->status, std::move(reply->body)};
}

std::expected<std::string, CallError> ApiClient::CallOk(const std::string& method,
                                                        const std::string& path,
                                                        const std::string& body,
                                                        Encoding encoding) {
  auto reply = Call(method, path, body, encoding);
  if (!reply) return std::unexpected(CallError{kExitUnreachable, reply.error().message()});
  if (reply->status >= 200 && reply->status < 300) return std::move(reply->body);
  std::string message = ReplyErrorMessage(*reply);
  if (reply->status == 401 && message.find("podctl") == std::string::npos) {
    message += " (podctl login, or set --token or POD_TOKEN)";
  }
  return std::unexpected(CallError{ExitCodeForStatus(reply->status), message});
}

std::expected<void, CallError> ApiClient::Stream(
    const std::string& path, const std::function<bool(const std::string&)>& on_event) {
  HttpConnection::Request req;
  req.method = "GET";
  req.target = path;
  req.headers.emplace_back("Authorization", "Bearer " + token_);
  req.headers.emplace_back("Accept", "text/event-stream");
  StreamState state;
  state.on_event = &on_event;
  auto reply = HttpConnection::Send(server_, req, std::nullopt, [&](std::string_view bytes) {
    return OnStreamBytes(state, bytes);
  });
  if (state.stopped) return {};
  if (!reply) {
    return std::unexpected(CallError{kExitUnreachable, reply.error().code() ==
                                                               StatusCode::kUnavailable
                                                           ? "cannot reach podsched at " + server_ +
                                                                 ": " + reply.error().message()
                                                           : "event stream ended: " +
                                                                 reply.error().message()});
  }
  if (reply->status >= 400) {
    return std::unexpected(CallError{ExitCodeForStatus(reply->status),
                                     "event stream refused: HTTP " +
                                         std::to_string(reply->status)});
  }
  return std::unexpected(CallError{kExitUnreachable, "event stream ended: the server closed it"});
}

}  // namespace podsched::ctl
