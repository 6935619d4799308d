#include "common/host_list.h"

#include <algorithm>
#include <charconv>

#include "common/strings.h"

namespace podsched {
namespace {

bool ParseIndex(std::string_view s, int32_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0 && out <= kMaxHostIndex;
}

}  // namespace

std::string FormatHostSequence(std::span<const HostId> hosts) {
  std::string out;
  for (HostId h : hosts) {
    if (!out.empty()) out += ',';
    out += std::to_string(h.value());
  }
  return out;
}

std::string FormatHostRanges(std::vector<int32_t> hosts) {
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  std::string out;
  for (size_t i = 0; i < hosts.size();) {
    size_t j = i;
    while (j + 1 < hosts.size() && hosts[j + 1] == hosts[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(hosts[i]);
    if (j > i) out += '-' + std::to_string(hosts[j]);
    i = j + 1;
  }
  return out;
}

Result<std::vector<int32_t>> ParseHostSequence(std::string_view text) {
  std::vector<int32_t> hosts;
  if (text.empty()) return hosts;
  for (std::string_view part : SplitOn(text, ',')) {
    int32_t h = -1;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), h);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || h < 0) {
      return InvalidArgument("'" + std::string(part.substr(0, 16)) +
                             "' in a host list is not a host number");
    }
    hosts.push_back(h);
  }
  return hosts;
}

Result<std::vector<int32_t>> ParseHostRanges(std::string_view text) {
  std::vector<int32_t> hosts;
  if (text.empty()) return InvalidArgument("empty host list (expected e.g. 0-7,12)");
  for (const std::string_view part : SplitOn(text, ',')) {
    const size_t dash = part.find('-');
    int32_t lo = 0, hi = 0;
    const bool ok = dash == std::string_view::npos
                        ? ParseIndex(part, lo) && ParseIndex(part, hi)
                        : ParseIndex(part.substr(0, dash), lo) &&
                              ParseIndex(part.substr(dash + 1), hi) && lo <= hi;
    if (!ok) {
      return InvalidArgument("'" + std::string(part) + "' in host list '" + std::string(text) +
                             "' is not a host 0.." + std::to_string(kMaxHostIndex) +
                             " or a range LOW-HIGH with LOW <= HIGH (e.g. 0-7,12)");
    }
    for (int32_t h = lo; h <= hi; ++h) hosts.push_back(h);
  }
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return hosts;
}

}  // namespace podsched
