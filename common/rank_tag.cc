#include "common/rank_tag.h"

#include <charconv>

namespace podsched {

std::string FormatRankTag(int rank, bool stderr_stream) {
  return "[1," + std::to_string(rank) + (stderr_stream ? "]<stderr>:" : "]<stdout>:");
}

RankTag ParseRankTag(std::string_view text) {
  if (text.empty() || text[0] != '[') return {};
  const size_t comma = text.find(',');
  const size_t close = text.find(']');
  if (comma == std::string_view::npos || close == std::string_view::npos || comma > close ||
      comma == 1 || close > 24) {
    return {};
  }
  int job = -1, rank = -1;
  auto j = std::from_chars(text.data() + 1, text.data() + comma, job);
  auto r = std::from_chars(text.data() + comma + 1, text.data() + close, rank);
  if (j.ec != std::errc() || j.ptr != text.data() + comma || r.ec != std::errc() ||
      r.ptr != text.data() + close || rank < 0) {
    return {};
  }
  std::string_view rest = text.substr(close + 1);
  if (rest.starts_with("<stdout>:")) return {close + 10, rank, false};
  if (rest.starts_with("<stderr>:")) return {close + 10, rank, true};
  return {};
}

std::vector<std::string> RankLineJoiner::Line(std::string_view line) {
  std::vector<std::string> out;
  // Split at every tag; text before the first one is mpirun's own.
  size_t pos = 0;
  std::string tag;  // of the current segment; "" before the first tag
  size_t start = 0;
  auto segment_end = [&](size_t end) {
    std::string_view text = line.substr(start, end - start);
    const bool last = end == line.size();
    if (tag.empty()) {
      if (!text.empty()) out.emplace_back(text);
      return;
    }
    if (text.empty() && !last) return;  // a tag followed at once by another
    std::string& partial = partial_[tag];
    partial.append(text);
    if (last || partial.size() > kMaxPartial) {
      out.push_back(tag + partial);
      partial_.erase(tag);
    }
  };
  while ((pos = line.find('[', pos)) != std::string_view::npos) {
    const RankTag t = ParseRankTag(line.substr(pos));
    if (t.length == 0) {
      ++pos;
      continue;
    }
    segment_end(pos);
    tag = std::string(line.substr(pos, t.length));
    pos += t.length;
    start = pos;
  }
  segment_end(line.size());
  if (tag.empty() && line.empty()) out.emplace_back();
  return out;
}

std::vector<std::string> RankLineJoiner::Flush() {
  std::vector<std::string> out;
  for (auto& [tag, partial] : partial_) {
    if (!partial.empty()) out.push_back(tag + partial);
  }
  partial_.clear();
  return out;
}

}  // namespace podsched
