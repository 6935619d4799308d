#include "scheduler/daemon/checkpoint_prefix.h"

#include <algorithm>
#include <vector>

namespace podsched::daemon {
namespace {

struct SplitUrl {
  std::string_view base;   // scheme://authority/path, without trailing '/'
  std::string_view query;  // after '?', may be empty
};

SplitUrl Split(std::string_view url) {
  SplitUrl out;
  const size_t q = url.find('?');
  out.base = url.substr(0, q);
  out.query = q == std::string_view::npos ? std::string_view() : url.substr(q + 1);
  while (out.base.size() > 1 && out.base.back() == '/' && !out.base.ends_with("://")) {
    out.base.remove_suffix(1);
  }
  return out;
}

// The query's options other than the user's own credentials, sorted: they must be the store's
// (another endpoint would receive the credentials the agents give jobs).
std::vector<std::string_view> StoreOptions(std::string_view query) {
  std::vector<std::string_view> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view kv = query.substr(0, amp);
    const std::string_view key = kv.substr(0, kv.find('='));
    if (!kv.empty() && key != "access_key" && key != "secret_key") out.push_back(kv);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string UserCheckpointPrefix(std::string_view store_url, std::string_view user) {
  const SplitUrl s = Split(store_url);
  std::string out(s.base);
  out += "/users/";
  out += user;
  if (!s.query.empty()) {
    out += '?';
    out += s.query;
  }
  return out;
}

Status CheckUnderPrefix(std::string_view url, std::string_view prefix) {
  const std::string where = " (your checkpoints go to " + std::string(prefix) + " or below it)";
  const SplitUrl u = Split(url);
  const SplitUrl p = Split(prefix);
  const size_t scheme = u.base.find("://");
  if (scheme == std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument,
                  "checkpoint URL '" + std::string(url) + "' has no scheme" + where);
  }
  const std::string_view path = u.base.substr(scheme + 3);
  if (path.find('%') != std::string_view::npos || path.find('\\') != std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument,
                  "checkpoint URL '" + std::string(url) +
                      "' must not contain '%' or '\\' (no encoded path tricks)" + where);
  }
  // Segments after the authority (file:// has an empty authority: the path starts at '/').
  size_t start = path.find('/');
  while (start != std::string_view::npos) {
    const size_t end = path.find('/', start + 1);
    const std::string_view seg = path.substr(start + 1, end == std::string_view::npos
                                                            ? std::string_view::npos
                                                            : end - start - 1);
    if (seg == "." || seg == ".." || (seg.empty() && end != std::string_view::npos)) {
      return Status(StatusCode::kInvalidArgument,
                    "checkpoint URL '" + std::string(url) +
                        "' has an empty, '.' or '..' path segment" + where);
    }
    start = end;
  }
  const bool under = u.base == p.base ||
                     (u.base.starts_with(p.base) && u.base.size() > p.base.size() &&
                      u.base[p.base.size()] == '/');
  if (!under) {
    return Status(StatusCode::kPermissionDenied,
                  "checkpoint URL '" + std::string(url) + "' is outside your prefix" + where);
  }
  if (StoreOptions(u.query) != StoreOptions(p.query)) {
    return Status(StatusCode::kPermissionDenied,
                  "checkpoint URL '" + std::string(url) +
                      "' must keep the store's options (after '?'; only access_key and "
                      "secret_key may be added)" + where);
  }
  return Status::Ok();
}

std::string FileUrlDirectory(std::string_view url) {
  if (!url.starts_with("file://")) return "";
  return std::string(Split(url).base.substr(7));
}

}  // namespace podsched::daemon
