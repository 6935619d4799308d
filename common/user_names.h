// What a user name may be. An API user's name becomes one path segment of its checkpoint prefix
// (<store>/users/<name>) and of its log and scratch paths; a Unix account name is what the
// agents look up on their machines (POSIX portable names, as useradd takes them).
//
// Pure; thread-safe.
#pragma once

#include <string_view>

namespace podsched {

// 1..64 of [A-Za-z0-9._-], not "." or "..".
constexpr bool IsPathSafeUserName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// 1..32 of [a-z0-9_-], the first a letter or '_'.
constexpr bool IsUnixUserName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  if (!((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace podsched
