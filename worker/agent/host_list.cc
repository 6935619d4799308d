#include "worker/agent/host_list.h"

#include <algorithm>
#include <charconv>

#include "common/host_list.h"
#include "common/strings.h"

namespace podsched::agent {
namespace {

bool ParseIndex(std::string_view s, int32_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0 && out <= kMaxHostIndex;
}

}  // namespace

Result<std::vector<int32_t>> ParseHostList(std::string_view text) {
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

std::string FormatHostList(const std::vector<int32_t>& sorted_hosts) {
  return FormatHostRanges(sorted_hosts);
}

}  // namespace podsched::agent
