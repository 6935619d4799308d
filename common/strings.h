// Small string helpers shared by parsers of command-line and environment lists. Pure.
#pragma once

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

}  // namespace podsched
