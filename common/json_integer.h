// Integers read from outside JSON documents (nlohmann::json), checked against the C++ type.
//
// nlohmann's get<int>() converts any number with a cast: a float beyond the type's range is
// undefined behaviour, a negative integer read as unsigned wraps, and 2.5 becomes 2. Parsers of
// bytes from elsewhere (manifests, data-set metadata, progress reports) use this instead.
//
// Header-only (its users link nlohmann_json); pure, thread-safe.
#pragma once

#include <concepts>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace podsched {

// The value of `v` when it is a JSON integer that fits in T; nullopt otherwise (floats,
// strings, out of range).
template <std::integral T>
std::optional<T> JsonInteger(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (!std::in_range<T>(u)) return std::nullopt;
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (!std::in_range<T>(i)) return std::nullopt;
    return static_cast<T>(i);
  }
  return std::nullopt;
}

// object[key] as a T, for parsers that report errors by exception: throws nlohmann's
// out_of_range when `key` is missing, std::invalid_argument naming `key` when it is not an
// integer that fits in T.
template <std::integral T>
T JsonIntegerAt(const nlohmann::json& object, const char* key) {
  auto v = JsonInteger<T>(object.at(key));
  if (!v) throw std::invalid_argument(std::string(key) + " is not an integer in range");
  return *v;
}

}  // namespace podsched
