#include "worker/agent/log_cutter.h"

namespace podsched::agent {

void LogCutter::Append(Stream stream, std::string_view bytes) {
  std::string& partial = partial_[stream];
  partial.append(bytes);
  const size_t last_nl = partial.rfind('\n');
  if (last_nl != std::string::npos) {
    AddWhole(std::string_view(partial).substr(0, last_nl + 1));
    partial.erase(0, last_nl + 1);
  }
  if (partial.size() >= kMaxLogMessage) {  // a line longer than a Log message: cut it
    partial += "\n";
    AddWhole(partial);
    partial.clear();
  }
}

void LogCutter::AddWhole(std::string_view lines) {
  size_t pos = 0;
  while (pos < lines.size()) {
    const size_t nl = lines.find('\n', pos);
    for (std::string& line : joiner_.Line(lines.substr(pos, nl - pos))) Keep(line);
    pos = nl + 1;
  }
}

void LogCutter::Keep(const std::string& line) {
  if (filter_ && !filter_(line)) return;
  pending_.append(line);
  pending_ += '\n';
}

void LogCutter::EndStream(Stream stream) {
  std::string& partial = partial_[stream];
  if (!partial.empty()) {
    partial += "\n";
    AddWhole(partial);
  }
  partial.clear();
  ended_[stream] = true;
  if (ended_[kStdout] && ended_[kStderr]) {
    for (std::string& line : joiner_.Flush()) Keep(line);
  }
}

void LogCutter::AddLine(std::string_view line) {
  pending_.append(line);
  pending_ += '\n';
}

std::vector<LogCutter::Chunk> LogCutter::Take() {
  std::vector<Chunk> out;
  size_t pos = 0;
  while (pos < pending_.size()) {
    size_t n = pending_.size() - pos;
    if (n > kMaxLogMessage) {
      const size_t nl = pending_.rfind('\n', pos + kMaxLogMessage - 1);
      n = nl == std::string::npos || nl < pos ? kMaxLogMessage : nl + 1 - pos;
    }
    out.push_back({offset_, pending_.substr(pos, n)});
    tail_.append(pending_, pos, n);
    if (tail_.size() > kLogTail) tail_.erase(0, tail_.size() - kLogTail);
    offset_ += static_cast<int64_t>(n);
    pos += n;
  }
  pending_.clear();
  return out;
}

}  // namespace podsched::agent
