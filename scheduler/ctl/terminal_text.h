// Text from the server as podctl prints it: a job's log lines, names, reasons and commands are
// the user's (or their program's) bytes, and must not drive the terminal. Control characters
// (C0 but tab, DEL, and C1 as UTF-8 U+0080..U+009F) are shown as \xHH; everything else,
// UTF-8 included, is kept. Pure.
#pragma once

#include <string>
#include <string_view>

namespace podsched::ctl {

inline std::string TerminalSafe(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      escape(c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      escape(c);
      escape(static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace podsched::ctl
