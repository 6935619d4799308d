// How host ids are written as text, everywhere in podsched and podworker. Pure.
//
// Two forms:
//   a sequence, in the given order ("4,5,12,13"): POD_HOSTS, where the order is the rank order;
//   ranges, sorted and merged ("0-3,12"): host sets shown to people (podctl, podworker's logs,
//   podworker's --hosts).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/status.h"

namespace podsched {

// {4, 5, 12, 13} -> "4,5,12,13" (order kept, duplicates kept); {} -> "".
std::string FormatHostSequence(std::span<const HostId> hosts);
// Inverse of FormatHostSequence: "4,5,12,13" -> {4, 5, 12, 13}; kInvalidArgument for anything
// but comma-separated non-negative integers.
Result<std::vector<int32_t>> ParseHostSequence(std::string_view text);
// {12, 0, 1, 2, 3, 3} -> "0-3,12" (sorted, duplicates dropped); {} -> "".
std::string FormatHostRanges(std::vector<int32_t> hosts);

}  // namespace podsched
