#include "worker/agent/log_cutter.h"

namespace podsched::agent {

void LogCutter::Append(Stream stream, std::string_view bytes) {
  std::string& partial = partial_[stream];
  partial.append(bytes);
  const size_t last_nl = partial.rfind('\n');
  if (last_nl != std::string::npos) {
    pending_.append(partial, 0, last_nl + 1);
    partial.erase(0, last_nl + 1);
  }
  if (partial.size() >= kMaxLogMessage) {  // a line longer than a Log message: cut it
    pending_ += partial + "\n";
    partial.clear();
  }
}

void LogCutter::EndStream(Stream stream) {
  std::string& partial = partial_[stream];
  if (!partial.empty()) pending_ += partial + "\n";
  partial.clear();
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
