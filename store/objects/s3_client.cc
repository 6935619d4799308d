#include "store/objects/s3_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "store/objects/s3_xml.h"
#include "store/objects/sigv4.h"

namespace podsched::store {
namespace {

bool Retryable(long status) { return status >= 500 || status == 429; }

std::chrono::milliseconds Backoff(int attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  int64_t base = std::min<int64_t>(100LL << std::min(attempt, 10), 2000);
  return std::chrono::milliseconds(base / 2 + static_cast<int64_t>(rng() % (base / 2 + 1)));
}

}  // namespace

S3Client::S3Client(S3Url url)
    : url_(std::move(url)),
      http_(HttpOptions{.connect_timeout_ms = static_cast<long>(url_.connect_timeout_ms)}) {
  host_header_ = url_.virtual_host ? url_.bucket + "." + url_.endpoint_host : url_.endpoint_host;
  if (url_.endpoint_port) host_header_ += fmt::format(":{}", *url_.endpoint_port);
}

std::string S3Client::ObjectName(std::string_view key) const {
  return url_.prefix.empty() ? std::string(key) : fmt::format("{}/{}", url_.prefix, key);
}

std::string S3Client::Display(std::string_view object) const {
  return fmt::format("s3://{}/{}", url_.bucket, object);
}

HttpRequest S3Client::Build(const S3Call& call, TimePoint now) const {
  std::string path = url_.virtual_host ? "/" : "/" + url_.bucket;
  if (!call.object.empty()) {
    if (!url_.virtual_host) path += "/";
    path += UriEncode(call.object, /*encode_slash=*/false);
  }
  SigV4Request sig{.method = call.method,
                   .canonical_uri = path,
                   .query = call.query,
                   .headers = call.headers,
                   .payload_sha256 = Sha256Hex(call.body)};
  sig.headers.emplace_back("host", host_header_);
  sig.headers.emplace_back("x-amz-date", AmzDate(now));
  sig.headers.emplace_back("x-amz-content-sha256", sig.payload_sha256);
  SigV4Key key{url_.access_key, url_.secret_key, url_.region, "s3"};
  HttpRequest req{.method = call.method,
                  .url = fmt::format("{}://{}{}", url_.endpoint_scheme, host_header_, path),
                  .headers = sig.headers,
                  .body = call.body};
  std::string query = CanonicalQuery(call.query);
  if (!query.empty()) req.url += "?" + query;
  req.headers.emplace_back("Authorization", SigV4Authorization(sig, key, now));
  return req;
}

Result<HttpResponse> S3Client::Send(const S3Call& call) {
  Status last;
  for (int attempt = 0; attempt < url_.max_attempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(Backoff(attempt - 1));
    auto resp = http_.Perform(Build(call, clock_.Now()));
    bool last_attempt = attempt + 1 == url_.max_attempts;
    if (resp) {
      if (!Retryable(resp->status) || last_attempt) return resp;
      last = ErrorFor(*resp, call);
      continue;
    }
    // A body cut short is retried like a failed connection, and stays kDataLoss at the end.
    StatusCode code = resp.error().code();
    bool transient = code == StatusCode::kUnavailable || code == StatusCode::kDataLoss;
    if (!transient || (code == StatusCode::kDataLoss && last_attempt)) return resp;
    last = resp.error();
  }
  return Unavailable(fmt::format("S3 server at {}://{} did not answer after {} attempts: {}",
                                 url_.endpoint_scheme, host_header_, url_.max_attempts,
                                 last.message()));
}

Result<HttpResponse> S3Client::SendOk(const S3Call& call) {
  auto resp = Send(call);
  if (resp && (resp->status < 200 || resp->status > 299)) {
    return std::unexpected(ErrorFor(*resp, call));
  }
  return resp;
}

Status S3Client::ErrorFor(const HttpResponse& resp, const S3Call& call) const {
  S3ErrorBody err = ParseS3Error(resp.body);
  std::string what = fmt::format("S3 {} {}", call.method, Display(call.object));
  std::string detail = err.code.empty()
                           ? fmt::format("HTTP {}", resp.status)
                           : fmt::format("HTTP {} {}: {}", resp.status, err.code, err.message);
  long s = resp.status;
  if (s == 403) {
    return Status(StatusCode::kPermissionDenied,
                  fmt::format("{}: access denied ({}); check the access key, secret key and "
                              "region, and the bucket's permissions",
                              what, detail));
  }
  if (s == 404) {
    return Status(StatusCode::kNotFound, fmt::format("{}: not found ({})", what, detail));
  }
  if (Retryable(s)) {
    return Status(StatusCode::kUnavailable, fmt::format("{}: server error after {} attempts ({})",
                                                        what, url_.max_attempts, detail));
  }
  if (s >= 400 && s < 500) {
    return Status(StatusCode::kInvalidArgument, fmt::format("{}: rejected ({})", what, detail));
  }
  return Status(StatusCode::kInternal, fmt::format("{}: unexpected response ({})", what, detail));
}

}  // namespace podsched::store
