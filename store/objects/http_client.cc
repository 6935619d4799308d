#include "store/objects/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "common/big_buffer.h"

namespace podsched::store {
namespace {

struct Upload {
  std::string_view rest;
};

size_t ReadBody(char* buf, size_t size, size_t n, void* userdata) {
  auto* up = static_cast<Upload*>(userdata);
  size_t len = std::min(size * n, up->rest.size());
  std::memcpy(buf, up->rest.data(), len);
  up->rest.remove_prefix(len);
  return len;
}

size_t WriteBody(char* data, size_t size, size_t n, void* userdata) {
  static_cast<std::string*>(userdata)->append(data, size * n);
  return size * n;
}

size_t WriteHeader(char* data, size_t size, size_t n, void* userdata) {
  auto* resp = static_cast<HttpResponse*>(userdata);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) resp->headers.clear();  // a new response (e.g. after 100)
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    while (!value.empty() &&
           (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
      value.remove_suffix(1);
    }
    resp->headers[name] = std::string(value);
    if (name == "content-length") {
      // Reserve the body once instead of growing it through many reallocations.
      size_t len = std::strtoull(resp->headers[name].c_str(), nullptr, 10);
      if (len <= (size_t{4} << 30)) ReserveBig(resp->body, len);
    }
  }
  return size * n;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

HttpClient::HttpClient(HttpOptions options) : options_(options) { GlobalInit(); }

HttpClient::~HttpClient() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpClient::Acquire() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpClient::Release(void* handle) {
  curl_easy_reset(static_cast<CURL*>(handle));  // keeps the connection cache
  std::lock_guard lock(mu_);
  idle_.push_back(handle);
}

Result<HttpResponse> HttpClient::Perform(const HttpRequest& req) {
  CURL* curl = static_cast<CURL*>(Acquire());
  if (curl == nullptr) return Internal("curl_easy_init failed");
  HttpResponse resp;
  Upload up{req.body};
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : req.headers) {
    headers = curl_slist_append(headers, fmt::format("{}: {}", name, value).c_str());
  }
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, options_.min_bytes_per_s);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options_.stall_timeout_s);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &resp.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &resp);
  if (req.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (req.method == "PUT" || req.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, &up);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    const long body_seconds =
        static_cast<long>(req.body.size()) / std::max(1L, options_.send_min_bytes_per_s);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, options_.send_timeout_base_s + body_seconds);
    if (req.method == "POST") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "POST");
  } else if (req.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_slist_free_all(headers);
  Release(curl);
  if (rc == CURLE_PARTIAL_FILE) {
    return DataLoss(fmt::format("{} {}: response body ended early ({})", req.method, req.url,
                                error[0] ? error : curl_easy_strerror(rc)));
  }
  if (rc != CURLE_OK) {
    return Unavailable(
        fmt::format("{} {}: {}", req.method, req.url, error[0] ? error : curl_easy_strerror(rc)));
  }
  return resp;
}

}  // namespace podsched::store
