#include "worker/agent/proc_text.h"

#include <charconv>
#include <vector>

#include "common/strings.h"

namespace podsched::agent {
namespace {

// The whole of `text` as a number of type T (decimal, or hex when base 16), else nullopt.
template <typename T>
std::optional<T> Number(std::string_view text, int base = 10) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ProcInfo> ParseProcStat(std::string_view stat, pid_t pid) {
  const size_t open = stat.find('(');
  const size_t close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcInfo info;
  info.pid = pid;
  info.comm = std::string(stat.substr(open + 1, close - open - 1));
  // Fields after COMM, split on spaces: fields[0] is field 3 (state), ppid field 4, starttime
  // field 22.
  std::vector<std::string_view> fields;
  for (std::string_view f : SplitOn(stat.substr(close + 1), ' ')) {
    while (!f.empty() && (f.back() == '\n' || f.back() == '\t')) f.remove_suffix(1);
    if (!f.empty()) fields.push_back(f);
    if (fields.size() == 20) break;
  }
  if (fields.size() < 20) return std::nullopt;
  auto ppid = Number<pid_t>(fields[1]);
  auto start = Number<uint64_t>(fields[19]);
  if (!ppid || !start) return std::nullopt;
  info.zombie = fields[0] == "Z" || fields[0] == "X";
  info.ppid = *ppid;
  info.start_time = *start;
  return info;
}

std::optional<uint32_t> StatusRealUid(std::string_view status) {
  for (std::string_view line : SplitOn(status, '\n')) {
    if (!line.starts_with("Uid:")) continue;
    std::string_view rest = line.substr(4);
    while (!rest.empty() && (rest.front() == '\t' || rest.front() == ' ')) rest.remove_prefix(1);
    const size_t end = rest.find_first_of("\t ");
    return Number<uint32_t>(rest.substr(0, end), 10);
  }
  return std::nullopt;
}

bool StatusHandlesSignal(std::string_view status, int sig) {
  if (sig < 1 || sig > 64) return false;
  const uint64_t bit = uint64_t{1} << (sig - 1);
  for (std::string_view line : SplitOn(status, '\n')) {
    if (!line.starts_with("SigCgt:") && !line.starts_with("SigIgn:")) continue;
    std::string_view mask = line.substr(7);
    while (!mask.empty() && (mask.front() == '\t' || mask.front() == ' ')) mask.remove_prefix(1);
    if (auto m = Number<uint64_t>(mask, 16); m && (*m & bit)) return true;
  }
  return false;
}

std::optional<std::string> FindEnvVar(std::string_view environ, std::string_view name) {
  for (std::string_view entry : SplitOn(environ, '\0')) {
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
      return std::string(entry.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

std::string TagValue(const JobEpoch& je, int32_t host) {
  return std::to_string(je.job.value()) + ":" + std::to_string(je.epoch) + ":" +
         std::to_string(host);
}

bool ParseTag(std::string_view tag, JobEpoch& je, int32_t& host, int* rank) {
  const std::vector<std::string_view> parts = SplitOn(tag, ':');
  if (parts.size() != 3 && parts.size() != 4) return false;
  auto j = Number<int64_t>(parts[0]);
  auto e = Number<int64_t>(parts[1]);
  auto h = Number<int32_t>(parts[2]);
  std::optional<int> r = parts.size() == 4 ? Number<int>(parts[3]) : std::optional<int>(-1);
  if (!j || !e || !h || !r || (parts.size() == 4 && *r < 0)) return false;
  je = {JobId(*j), *e};
  host = *h;
  if (rank != nullptr) *rank = *r;
  return true;
}

}  // namespace podsched::agent
