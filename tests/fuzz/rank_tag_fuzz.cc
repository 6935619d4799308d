// mpirun's --tag-output lines joined per rank (RankLineJoiner): the input is many lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/rank_tag.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  podsched::RankLineJoiner joiner;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    (void)podsched::ParseRankTag(line);
    (void)joiner.Line(line);
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  (void)joiner.Flush();
  return 0;
}
