#include "scheduler/ctl/client.h"

#include <curl/curl.h>

#include <nlohmann/json.hpp>

namespace podsched::ctl {
namespace {

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct StreamState {
  std::string buffer;
  std::string data;
  bool opened = false;
  const std::function<bool(const std::string&)>* on_event;
  bool stopped = false;
};

// Splits the SSE byte stream into frames (blank-line separated) and hands their data on.
size_t OnStreamBytes(char* bytes, size_t size, size_t n, void* p) {
  auto* s = static_cast<StreamState*>(p);
  s->buffer.append(bytes, size * n);
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
        return 0;  // aborts the transfer
      }
    } else if (line.starts_with("data: ")) {
      s->data += line.substr(6);
    }
  }
  return size * n;
}

}  // namespace

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
  curl_global_init(CURL_GLOBAL_DEFAULT);
  curl_ = curl_easy_init();
}

ApiClient::~ApiClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

Result<ApiReply> ApiClient::Call(const std::string& method, const std::string& path,
                                 const std::string& body) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  std::string url = server_ + path;
  ApiReply reply;
  curl_slist* headers = nullptr;
  std::string auth = "Authorization: Bearer " + token_;
  if (!token_.empty()) headers = curl_slist_append(headers, auth.c_str());
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (method != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    return Unavailable("cannot reach podsched at " + server_ + ": " + curl_easy_strerror(rc));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

std::expected<std::string, CallError> ApiClient::CallOk(const std::string& method,
                                                        const std::string& path,
                                                        const std::string& body) {
  auto reply = Call(method, path, body);
  if (!reply) return std::unexpected(CallError{kExitUnreachable, reply.error().message()});
  if (reply->status >= 200 && reply->status < 300) return std::move(reply->body);
  std::string message = "HTTP " + std::to_string(reply->status);
  auto j = nlohmann::json::parse(reply->body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    message = j["message"].get<std::string>();
  }
  if (reply->status == 401 && message.find("podctl") == std::string::npos) {
    message += " (podctl login, or set --token or POD_TOKEN)";
  }
  return std::unexpected(CallError{ExitCodeForStatus(reply->status), message});
}

std::expected<void, CallError> ApiClient::Stream(
    const std::string& path, const std::function<bool(const std::string&)>& on_event) {
  CURL* c = curl_easy_init();
  std::string url = server_ + path;
  curl_slist* headers = nullptr;
  std::string auth = "Authorization: Bearer " + token_;
  headers = curl_slist_append(headers, auth.c_str());
  headers = curl_slist_append(headers, "Accept: text/event-stream");
  StreamState state;
  state.on_event = &on_event;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnStreamBytes);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
  CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (state.stopped) return {};
  if (status >= 400) {
    return std::unexpected(CallError{ExitCodeForStatus(status),
                                     "event stream refused: HTTP " + std::to_string(status)});
  }
  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) {
    return std::unexpected(CallError{kExitUnreachable, "cannot reach podsched at " + server_});
  }
  return std::unexpected(
      CallError{kExitUnreachable, std::string("event stream ended: ") + curl_easy_strerror(rc)});
}

}  // namespace podsched::ctl
