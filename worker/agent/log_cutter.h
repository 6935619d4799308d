// The launcher's output as the agent streams it (docs/bus.md, "Progress and logs"): mpirun's
// (or `podworker launch`'s) stdout and stderr cut into whole lines, each rank's lines made whole
// again (RankLineJoiner, common/rank_tag.h), passed through a filter (progress reports,
// mpirun's noise), and sent as Log chunks of at most kMaxLogMessage bytes at contiguous offsets;
// the last kLogTail bytes stay in memory for the agent's own log.
//
// Thread safety: a value owned by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/rank_tag.h"

namespace podsched::agent {

inline constexpr size_t kMaxLogMessage = 64 * 1024;
inline constexpr size_t kLogTail = 1 << 20;

class LogCutter {
 public:
  enum Stream { kStdout = 0, kStderr = 1 };
  struct Chunk {
    int64_t offset = 0;  // of the chunk's first byte in the job's output
    std::string data;    // whole lines, unless one line alone exceeds kMaxLogMessage
  };

  // Sees each whole line (without "\n") before it is kept; false leaves it out of the output.
  using LineFilter = std::function<bool(std::string_view line)>;
  void set_filter(LineFilter filter) { filter_ = std::move(filter); }

  // Bytes read from a stream: its whole lines become pending. An unfinished line of
  // kMaxLogMessage bytes or more is cut (and ended with "\n").
  void Append(Stream stream, std::string_view bytes);
  // The end of a stream: its unfinished last line becomes pending, ended with "\n"; after both,
  // so do the ranks' unfinished lines.
  void EndStream(Stream stream);
  // A line of the agent's own ("podworker: cannot start mpirun: ..."), ending with "\n".
  void AddLine(std::string_view line);

  // The pending output as chunks, in order; it is then forgotten except for the tail.
  std::vector<Chunk> Take();
  // The last kLogTail bytes taken.
  const std::string& tail() const { return tail_; }

 private:
  void AddWhole(std::string_view lines);  // whole lines, each ending with "\n"
  void Keep(const std::string& line);

  std::string partial_[2];
  bool ended_[2] = {false, false};
  RankLineJoiner joiner_;
  LineFilter filter_;
  std::string pending_;
  std::string tail_;
  int64_t offset_ = 0;
};

}  // namespace podsched::agent
