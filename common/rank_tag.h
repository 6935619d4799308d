// The rank tag of a job's output lines: mpirun --tag-output's "[JOBID,RANK]<stdout>:" (or
// <stderr>), which `podworker launch` writes too, so both launchers' output reads the same.
//
// mpirun writes each chunk a rank's orted forwarded as the tag + the chunk, repeating the tag
// after each newline inside it. A chunk that ends inside a line is followed at once by the next
// chunk's tag, often of another rank: "[1,0]<stdout>:saved ckpt[1,1]<stdout>:step 5\n". The
// RankLineJoiner undoes that: every line it returns is one whole line of one rank, tagged once.
//
// Pure; RankLineJoiner is a value owned by one thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace podsched {

// "[1,R]<stdout>:" or "[1,R]<stderr>:".
std::string FormatRankTag(int rank, bool stderr_stream);

// A tag at the start of `text`: its length, and the rank and stream; 0 when there is none.
struct RankTag {
  size_t length = 0;
  int rank = -1;
  bool stderr_stream = false;
};
RankTag ParseRankTag(std::string_view text);

class RankLineJoiner {
 public:
  // One line of mpirun's output, without its "\n": the lines complete now, without "\n".
  // Untagged text (mpirun's own messages) passes through as it is.
  std::vector<std::string> Line(std::string_view line);
  // The end of the output: what is still unfinished, one line per rank and stream.
  std::vector<std::string> Flush();

  // A rank's unfinished line longer than this is returned as it is (bounded memory).
  static constexpr size_t kMaxPartial = 64 * 1024;

 private:
  std::map<std::string, std::string> partial_;  // tag -> its unfinished line
};

}  // namespace podsched
