#include "worker/agent/log_cutter.h"

#include <gtest/gtest.h>

namespace podsched::agent {
namespace {

std::string Joined(const std::vector<LogCutter::Chunk>& chunks, int64_t& offset) {
  std::string all;
  for (const auto& c : chunks) {
    EXPECT_EQ(c.offset, offset) << "contiguous offsets";
    EXPECT_LE(c.data.size(), kMaxLogMessage);
    offset += static_cast<int64_t>(c.data.size());
    all += c.data;
  }
  return all;
}

TEST(LogCutterTest, WholeLinesPerStream) {
  LogCutter cut;
  int64_t offset = 0;
  cut.Append(LogCutter::kStdout, "out one\nout tw");
  cut.Append(LogCutter::kStderr, "err one\n");
  EXPECT_EQ(Joined(cut.Take(), offset), "out one\nerr one\n");
  EXPECT_TRUE(cut.Take().empty());
  cut.Append(LogCutter::kStdout, "o\n");
  cut.Append(LogCutter::kStderr, "no newline");
  cut.EndStream(LogCutter::kStderr);
  cut.AddLine("podworker: note");
  EXPECT_EQ(Joined(cut.Take(), offset), "out two\nno newline\npodworker: note\n");
  EXPECT_EQ(cut.tail(), "out one\nerr one\nout two\nno newline\npodworker: note\n");
}

TEST(LogCutterTest, ChunksEndAtALineBoundaryAndLongLinesAreCut) {
  LogCutter cut;
  int64_t offset = 0;
  const std::string line(1000, 'x');
  std::string many;
  for (int i = 0; i < 200; ++i) many += line + "\n";  // ~200 KB of 1001-byte lines
  cut.Append(LogCutter::kStdout, many);
  const auto chunks = cut.Take();
  ASSERT_GT(chunks.size(), 3u);
  for (const auto& c : chunks) EXPECT_EQ(c.data.back(), '\n');
  EXPECT_EQ(Joined(chunks, offset), many);

  const std::string huge(kMaxLogMessage + 10, 'y');  // no newline at all
  cut.Append(LogCutter::kStdout, huge);
  const std::string got = Joined(cut.Take(), offset);
  EXPECT_EQ(got, huge + "\n");
}

TEST(LogCutterTest, TailKeepsTheLastMebibyte) {
  LogCutter cut;
  const std::string line(1023, 'z');
  for (int i = 0; i < 1100; ++i) {
    cut.Append(LogCutter::kStdout, line + "\n");
    cut.Take();
  }
  cut.AddLine("last");
  cut.Take();
  EXPECT_EQ(cut.tail().size(), kLogTail);
  EXPECT_TRUE(cut.tail().ends_with("zzz\nlast\n"));
}

// mpirun glued rank 1's tag to an unfinished line of rank 0: the stored output has whole lines.
TEST(LogCutterTest, EveryLineIsOneWholeLineOfOneRank) {
  LogCutter cut;
  int64_t offset = 0;
  cut.Append(LogCutter::kStdout, "[1,0]<stdout>:preempted, checkpoi[1,1]<stdout>:step 7\n");
  cut.Append(LogCutter::kStdout, "[1,0]<stdout>:nted\n[1,1]<stdout>:unfinished");
  EXPECT_EQ(Joined(cut.Take(), offset),
            "[1,1]<stdout>:step 7\n[1,0]<stdout>:preempted, checkpointed\n");
  cut.EndStream(LogCutter::kStdout);
  EXPECT_EQ(Joined(cut.Take(), offset), "[1,1]<stdout>:unfinished\n");
}

TEST(LogCutterTest, FilterLeavesLinesOut) {
  LogCutter cut;
  int64_t offset = 0;
  std::vector<std::string> seen;
  cut.set_filter([&](std::string_view line) {
    seen.emplace_back(line);
    return !line.starts_with("noise");
  });
  cut.Append(LogCutter::kStderr, "noise 1\nkeep\nnoise 2\n");
  EXPECT_EQ(Joined(cut.Take(), offset), "keep\n");
  EXPECT_EQ(seen, (std::vector<std::string>{"noise 1", "keep", "noise 2"}));
}

}  // namespace
}  // namespace podsched::agent
