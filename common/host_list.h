// How host ids are written as text, everywhere in podsched and podworker. Pure.
//
// Two forms:
//   a sequence, in the given order ("4,5,12,13"): POD_HOSTS, where the order is the rank order;
//   ranges, sorted and merged ("0-3,12"): host sets shown to people and written by them
//   (podctl, podworker's --hosts and logs, `podsched agent enroll --hosts`).
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

// Largest host index accepted in ranges (a v3 pod has 256 hosts; room for bigger simulated pods).
inline constexpr int32_t kMaxHostIndex = 4095;
// Largest fleet-wide host id (a Launch names hosts so, bus.proto): a fleet holds at most 65,536
// hosts (pod::Fleet::Create refuses more).
inline constexpr int32_t kMaxFleetHostId = 65535;
// Inverse of FormatHostRanges: "0-7,12" -> {0..7, 12}, sorted, without duplicates.
// kInvalidArgument names the bad part ("'7-3' in host list '7-3' is not ... LOW <= HIGH").
Result<std::vector<int32_t>> ParseHostRanges(std::string_view text);

}  // namespace podsched
