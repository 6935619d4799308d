// Host lists as written on podworker's command line: "0-7,12" (ranges and single hosts).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace podsched::agent {

// Largest host index accepted (a v3 pod has 256 hosts; some room for bigger simulated pods).
inline constexpr int32_t kMaxHostIndex = 4095;

// "0-7,12" -> {0..7, 12}, sorted, without duplicates. kInvalidArgument names the bad part
// ("'7-3' is not a range LOW-HIGH with LOW <= HIGH").
Result<std::vector<int32_t>> ParseHostList(std::string_view text);
// Inverse: {0,1,2,3,12} -> "0-3,12" (common/host_list.h FormatHostRanges, the one formatter).
std::string FormatHostList(const std::vector<int32_t>& sorted_hosts);

}  // namespace podsched::agent
