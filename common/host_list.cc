#include "common/host_list.h"

#include <algorithm>

namespace podsched {

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

}  // namespace podsched
