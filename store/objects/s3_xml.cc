#include "store/objects/s3_xml.h"

#include <fmt/format.h>

#include <charconv>

namespace podsched::store {
namespace {

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Finds the element <tag> or <tag attr...> starting at `from`; returns the [begin, end) of its
// text, or nullopt.
std::optional<std::pair<size_t, size_t>> FindElement(std::string_view xml, std::string_view tag,
                                                     size_t from) {
  std::string open = fmt::format("<{}", tag);
  std::string close = fmt::format("</{}>", tag);
  for (size_t pos = xml.find(open, from); pos != std::string_view::npos;
       pos = xml.find(open, pos + 1)) {
    size_t after = pos + open.size();
    if (after >= xml.size()) return std::nullopt;
    char c = xml[after];
    if (c != '>' && c != ' ' && c != '/') continue;  // <KeyCount> is not <Key>
    size_t gt = xml.find('>', after);
    if (gt == std::string_view::npos) return std::nullopt;
    if (xml[gt - 1] == '/') return std::pair{gt + 1, gt + 1};  // <tag/>
    size_t end = xml.find(close, gt + 1);
    if (end == std::string_view::npos) return std::nullopt;
    return std::pair{gt + 1, end};
  }
  return std::nullopt;
}

}  // namespace

Result<std::string> XmlUnescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) return InvalidArgument("unterminated XML entity");
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp")
      out += '&';
    else if (ent == "lt")
      out += '<';
    else if (ent == "gt")
      out += '>';
    else if (ent == "quot")
      out += '"';
    else if (ent == "apos")
      out += '\'';
    else if (ent.size() > 1 && ent[0] == '#') {
      bool hex = ent[1] == 'x' || ent[1] == 'X';
      std::string_view digits = ent.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      auto [end, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() ||
          cp > 0x10FFFF) {
        return InvalidArgument(fmt::format("bad XML character reference &{};", ent));
      }
      AppendUtf8(cp, out);
    } else {
      return InvalidArgument(fmt::format("unknown XML entity &{};", ent));
    }
    i = semi;
  }
  return out;
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::optional<std::string> XmlFirst(std::string_view xml, std::string_view tag) {
  auto el = FindElement(xml, tag, 0);
  if (!el) return std::nullopt;
  auto text = XmlUnescape(xml.substr(el->first, el->second - el->first));
  if (!text) return std::nullopt;
  return *text;
}

Result<ListPage> ParseListObjectsV2(std::string_view xml) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) {
    return Internal(
        fmt::format("S3 list response is not a ListBucketResult: {}", xml.substr(0, 200)));
  }
  ListPage page;
  for (size_t pos = 0;;) {
    auto contents = FindElement(xml, "Contents", pos);
    if (!contents) break;
    std::string_view block = xml.substr(contents->first, contents->second - contents->first);
    pos = contents->second;
    auto key_el = FindElement(block, "Key", 0);
    auto size_el = FindElement(block, "Size", 0);
    if (!key_el || !size_el) return Internal("S3 list entry without <Key> or <Size>");
    auto key = XmlUnescape(block.substr(key_el->first, key_el->second - key_el->first));
    if (!key) return Internal("S3 list entry key: " + key.error().message());
    std::string_view size_text = block.substr(size_el->first, size_el->second - size_el->first);
    uint64_t size = 0;
    auto [end, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
    if (ec != std::errc() || end != size_text.data() + size_text.size()) {
      return Internal(fmt::format("S3 list entry has a bad <Size> '{}'", size_text));
    }
    page.objects.push_back({std::move(*key), size});
  }
  page.truncated = XmlFirst(xml, "IsTruncated").value_or("false") == "true";
  if (page.truncated) {
    auto token = XmlFirst(xml, "NextContinuationToken");
    if (!token || token->empty()) {
      return Internal("S3 list response is truncated but has no NextContinuationToken");
    }
    page.next_token = std::move(*token);
  }
  return page;
}

S3ErrorBody ParseS3Error(std::string_view xml) {
  S3ErrorBody e;
  if (xml.find("<Error") == std::string_view::npos) return e;
  e.code = XmlFirst(xml, "Code").value_or("");
  e.message = XmlFirst(xml, "Message").value_or("");
  return e;
}

}  // namespace podsched::store
