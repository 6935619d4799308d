// Small string helpers shared by parsers of command-line and environment lists. Pure.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace podsched {

// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}. The parts are views into `text`.
inline std::vector<std::string_view> SplitOn(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    const size_t end = text.find(separator, pos);
    parts.push_back(text.substr(pos, end == std::string_view::npos ? std::string_view::npos
                                                                    : end - pos));
    if (end == std::string_view::npos) return parts;
    pos = end + 1;
  }
}

// A decimal integer >= 0 of at most `max_digits` digits and nothing else ("7", "007"); nullopt
// for anything else (empty, a sign, spaces, other characters, too many digits). `max_digits`
// bounds the value before any arithmetic the caller does with it.
inline std::optional<int64_t> ParseNonNegative(std::string_view text, size_t max_digits) {
  int64_t v = 0;
  if (text.empty() || text.size() > max_digits || text.size() > 18) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace podsched
