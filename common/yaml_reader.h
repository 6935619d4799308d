// Checked reads of YAML documents from outside the process (podsched's configuration, podctl's
// job specs and its own config file), the YAML side of common/json_reader.h.
//
// yaml-cpp's `as<T>()` throws on a value of another shape, and a mapping's key may be any node
// (`? [a, b]: x`). These return a Result naming the field instead: "bus.heartbeat_interval_ms
// must be an integer". YAML::Load's parse errors are still exceptions of yaml-cpp: each decoder
// catches them once, where it loads the text.
//
// Header-only (its users link yaml-cpp); pure, thread-safe.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/status.h"

namespace podsched {

// How a type is named in an error: "an integer", "a string", ...
template <typename T>
constexpr std::string_view YamlTypeName() {
  if constexpr (std::is_same_v<T, bool>) {
    return "true or false";
  } else if constexpr (std::is_integral_v<T>) {
    return "an integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "a number";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "a string";
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return "a list of strings";
  } else {
    return "a value of another type";
  }
}

// `node` as a T; an error naming `path` ("bus.address") and `expected` otherwise. A number
// beyond T's range is an error too (yaml-cpp checks the range of integer conversions).
template <typename T>
Result<T> YamlAs(const YAML::Node& node, std::string_view path,
                 std::string_view expected = YamlTypeName<T>()) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    return InvalidArgument(std::string(path) + " must be " + std::string(expected));
  }
}

// The key of a mapping entry in `where` ("pods[0]", "job spec"): only a scalar is a name.
inline Result<std::string> YamlKey(const YAML::Node& key, std::string_view where) {
  if (!key.IsScalar()) {
    return InvalidArgument(std::string(where) + ": every key must be a plain name");
  }
  return key.Scalar();
}

// Rejects keys of `node` outside `allowed`, naming the section (typos must not pass silently);
// an error too when `node` is not a mapping.
inline Status YamlCheckKeys(const YAML::Node& node, std::string_view section,
                            const std::set<std::string>& allowed) {
  if (!node.IsMap()) return ToStatus(InvalidArgument(std::string(section) + ": expected a mapping"));
  for (const auto& kv : node) {
    auto name = YamlKey(kv.first, section);
    if (!name) return name.error();
    if (!allowed.contains(*name)) {
      std::string valid;
      for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
      return ToStatus(InvalidArgument("unknown key '" + *name + "' in " + std::string(section) +
                                      "; valid: " + valid));
    }
  }
  return Status::Ok();
}

// An optional key of a mapping: `out` keeps its default when the key is absent.
template <typename T>
Status YamlRead(const YAML::Node& node, const char* key, std::string_view section, T& out) {
  if (!node[key]) return Status::Ok();
  auto value = YamlAs<T>(node[key], std::string(section) + "." + key);
  if (!value) return value.error();
  out = std::move(*value);
  return Status::Ok();
}

}  // namespace podsched
