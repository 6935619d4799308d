#include "store/objects/object_url.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/objects/object_store.h"

namespace podsched::store {
namespace {

constexpr size_t kMaxKeyBytes = 1024;

std::string Quote(std::string_view s) { return fmt::format("'{}'", s); }

Result<int64_t> ParseInt(std::string_view name, std::string_view value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi) {
    return InvalidArgument(
        fmt::format("URL parameter {}={} must be an integer in [{}, {}]", name, value, lo, hi));
  }
  return v;
}

// Splits "scheme://host[:port][/]" of an endpoint.
Status ParseEndpoint(std::string_view endpoint, S3Url& out) {
  auto bad = [&](std::string_view why) {
    return ToStatus(InvalidArgument(
        fmt::format("endpoint {} {}; expected http(s)://HOST[:PORT]", Quote(endpoint), why)));
  };
  size_t sep = endpoint.find("://");
  if (sep == std::string_view::npos) return bad("has no scheme");
  out.endpoint_scheme = std::string(endpoint.substr(0, sep));
  if (out.endpoint_scheme != "http" && out.endpoint_scheme != "https") {
    return bad("has an unsupported scheme");
  }
  std::string_view rest = endpoint.substr(sep + 3);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find_first_of("/?#@") != std::string_view::npos) return bad("has a path or query");
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && rest.find(']') == std::string_view::npos) {
    auto port = ParseInt("endpoint port", rest.substr(colon + 1), 1, 65535);
    if (!port) return bad("has an invalid port");
    out.endpoint_port = static_cast<int>(*port);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad("has no host");
  out.endpoint_host = std::string(rest);
  return Status::Ok();
}

struct QueryParam {
  std::string name;
  std::string value;
};

Result<std::vector<QueryParam>> ParseQuery(std::string_view query) {
  std::vector<QueryParam> params;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    auto name = PercentDecode(item.substr(0, eq));
    auto value = PercentDecode(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    if (!name) return std::unexpected(name.error());
    if (!value) return std::unexpected(value.error());
    params.push_back({std::move(*name), std::move(*value)});
  }
  return params;
}

// Removes the credential parameters from the query so that url() can be logged.
std::string Redact(std::string_view base, std::string_view query) {
  std::string kept;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    std::string_view name = item.substr(0, item.find('='));
    if (item.empty() || name == "access_key" || name == "secret_key") continue;
    kept += kept.empty() ? "?" : "&";
    kept += item;
  }
  return std::string(base) + kept;
}

Status ApplyParam(const QueryParam& p, S3Url& out, std::string& endpoint) {
  const std::string& v = p.value;
  if (p.name == "endpoint") {
    endpoint = v;
  } else if (p.name == "region") {
    out.region = v;
  } else if (p.name == "access_key") {
    out.access_key = v;
  } else if (p.name == "secret_key") {
    out.secret_key = v;
  } else if (p.name == "addressing") {
    if (v != "path" && v != "virtual") {
      return ToStatus(InvalidArgument(
          fmt::format("URL parameter addressing={} is not valid; valid: path, virtual", v)));
    }
    out.virtual_host = v == "virtual";
  } else if (p.name == "max_attempts") {
    auto n = ParseInt(p.name, v, 1, 20);
    if (!n) return n.error();
    out.max_attempts = static_cast<int>(*n);
  } else if (p.name == "connect_timeout_ms") {
    auto n = ParseInt(p.name, v, 1, 600000);
    if (!n) return n.error();
    out.connect_timeout_ms = *n;
  } else if (p.name == "part_size_mb") {
    auto n = ParseInt(p.name, v, 5, 1024);
    if (!n) return n.error();
    out.part_size = static_cast<uint64_t>(*n) << 20;
  } else {
    return ToStatus(InvalidArgument(fmt::format(
        "unknown URL parameter {}; valid: endpoint, region, access_key, secret_key, addressing, "
        "max_attempts, connect_timeout_ms, part_size_mb",
        Quote(p.name))));
  }
  return Status::Ok();
}

Result<S3Url> ParseS3(std::string_view url, std::string_view rest, const EnvLookup& env) {
  S3Url out;
  size_t qpos = rest.find('?');
  std::string_view path = rest.substr(0, qpos);
  std::string_view query = qpos == std::string_view::npos ? "" : rest.substr(qpos + 1);
  size_t slash = path.find('/');
  out.bucket = std::string(path.substr(0, slash));
  if (Status s = ValidateBucket(out.bucket); !s.ok()) return std::unexpected(s);
  std::string_view prefix = slash == std::string_view::npos ? "" : path.substr(slash + 1);
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  if (!prefix.empty()) {
    if (Status s = ValidateKey(prefix); !s.ok()) {
      return std::unexpected(s.WithContext(fmt::format("prefix of {}", Quote(url))));
    }
  }
  out.prefix = std::string(prefix);
  auto params = ParseQuery(query);
  if (!params) return std::unexpected(params.error());
  std::string endpoint;
  for (const QueryParam& p : *params) {
    if (Status s = ApplyParam(p, out, endpoint); !s.ok()) return std::unexpected(s);
  }
  auto from_env = [&](std::string& field, std::initializer_list<std::string_view> names) {
    for (std::string_view n : names) {
      if (!field.empty()) return;
      if (auto v = env(n); v && !v->empty()) field = *v;
    }
  };
  from_env(out.region, {"AWS_REGION", "AWS_DEFAULT_REGION"});
  if (out.region.empty()) out.region = "us-east-1";
  from_env(endpoint, {"AWS_ENDPOINT_URL"});
  if (endpoint.empty()) endpoint = fmt::format("https://s3.{}.amazonaws.com", out.region);
  if (Status s = ParseEndpoint(endpoint, out); !s.ok()) return std::unexpected(s);
  from_env(out.access_key, {"AWS_ACCESS_KEY_ID"});
  from_env(out.secret_key, {"AWS_SECRET_ACCESS_KEY"});
  if (out.access_key.empty() || out.secret_key.empty()) {
    return InvalidArgument(
        fmt::format("no S3 credentials for {}: give access_key= and secret_key= in the URL or set "
                    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                    Redact(url.substr(0, url.find('?')), query)));
  }
  out.redacted_url = Redact(url.substr(0, url.find('?')), query);
  return out;
}

Result<FileUrl> ParseFile(std::string_view url, std::string_view rest) {
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return InvalidArgument(fmt::format("file URL {} must not have a query", Quote(url)));
  }
  if (rest.starts_with("localhost/")) rest.remove_prefix(9);
  if (!rest.starts_with('/')) {
    return InvalidArgument(
        fmt::format("file URL {} must name an absolute directory: file:///abs/dir (three slashes)",
                    Quote(url)));
  }
  FileUrl out;
  out.root = std::string(rest);
  while (out.root.size() > 1 && out.root.back() == '/') out.root.pop_back();
  return out;
}

}  // namespace

Status ValidateKey(std::string_view key) {
  auto bad = [&](std::string_view why) {
    return ToStatus(InvalidArgument(fmt::format("invalid object key {}: {}", Quote(key), why)));
  };
  if (key.empty()) return bad("empty");
  if (key.size() > kMaxKeyBytes) {
    return bad(fmt::format("{} bytes, at most {}", key.size(), kMaxKeyBytes));
  }
  if (key.front() == '/') return bad("must not start with '/' (keys are relative)");
  for (unsigned char c : key) {
    if (c < 0x20 || c == 0x7f) return bad("contains a NUL or control byte");
  }
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view seg = key.substr(start, end - start);
    if (seg.empty()) return bad("has an empty path segment ('//' or a trailing '/')");
    if (seg == "." || seg == "..") return bad("has a '.' or '..' segment");
    start = end + 1;
  }
  return Status::Ok();
}

Status ValidateBucket(std::string_view bucket) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok =
      bucket.size() >= 3 && bucket.size() <= 63 && alnum(bucket.front()) && alnum(bucket.back());
  for (char c : bucket) ok = ok && (alnum(c) || c == '.' || c == '-');
  if (ok) return Status::Ok();
  return ToStatus(InvalidArgument(fmt::format(
      "invalid S3 bucket name {}: 3-63 characters of a-z, 0-9, '.', '-', starting and ending "
      "with a letter or digit",
      Quote(bucket))));
}

Result<std::string> PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned value = 0;
    bool ok = i + 2 < s.size();
    if (ok) {
      auto [end, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, value, 16);
      ok = ec == std::errc() && end == s.data() + i + 3;
    }
    if (!ok) return InvalidArgument(fmt::format("malformed percent escape in {}", Quote(s)));
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

Result<ObjectUrl> ParseObjectUrl(std::string_view url, const EnvLookup& env) {
  ObjectUrl out;
  if (url.starts_with("file://")) {
    auto f = ParseFile(url, url.substr(7));
    if (!f) return std::unexpected(f.error());
    out.file = std::move(*f);
  } else if (url.starts_with("s3://")) {
    auto s = ParseS3(url, url.substr(5), env);
    if (!s) return std::unexpected(s.error());
    out.s3 = std::move(*s);
  } else {
    return InvalidArgument(fmt::format(
        "unsupported object store URL {}; expected file:///abs/dir or s3://BUCKET[/PREFIX]",
        Quote(url)));
  }
  return out;
}

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

}  // namespace podsched::store
