#include "scheduler/daemon/job_output.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include "scheduler/core/test_util.h"

namespace podsched::daemon {
namespace {

using core::testing::At;

// A progress sample of `epoch` at `step`, taken at time `t`.
ProgressSample SampleAt(double t, int64_t epoch, int64_t step) {
  ProgressSample sample;
  sample.time = At(t);
  sample.epoch = epoch;
  sample.step = step;
  return sample;
}

TEST(LogTailTest, KeepsOffsetsSkipsResendsAndParsesRanks) {
  LogTail tail;
  TimePoint t = At(1);
  tail.Append(1, 0, "[1,0]<stdout>:hello\n[1,3]<stderr>:oops\n", t);
  tail.Append(1, 0, "[1,0]<stdout>:hello\n", t);  // resend: ignored
  tail.Append(1, 38, "plain\n", t);
  auto page = tail.Read(0, 1 << 20);
  ASSERT_EQ(page.lines.size(), 3u);
  EXPECT_EQ(page.lines[0]->text, "hello");
  EXPECT_EQ(page.lines[0]->rank, 0);
  EXPECT_EQ(page.lines[1]->rank, 3);
  EXPECT_EQ(page.lines[1]->text, "oops");
  EXPECT_EQ(page.lines[2]->rank, -1);
  EXPECT_EQ(page.next_offset, 44);
  EXPECT_FALSE(page.truncated);
  EXPECT_TRUE(tail.Read(44, 100).lines.empty());
  EXPECT_EQ(tail.Read(44, 100).next_offset, 44);
  auto second = tail.Read(20, 1 << 20);
  ASSERT_EQ(second.lines.size(), 2u);
  // A new epoch starts its own offsets; the job-wide offsets go on.
  tail.Append(2, 0, "again\n", t);
  EXPECT_EQ(tail.Read(44, 100).lines.size(), 1u);
  EXPECT_EQ(tail.end_offset(), 50);
}

// The agent's live-log limit skips chunks (the stored log has them): the tail says so, once
// per gap, in order, and the resend rule still holds after it.
TEST(LogTailTest, AGapInTheOffsetsBecomesALineSayingWhatIsMissing) {
  LogTail tail;
  TimePoint t = At(1);
  tail.Append(1, 0, "a\n", t);
  tail.Append(1, 1002, "b\n", t);  // 1,000 bytes skipped by the agent
  tail.Append(1, 1002, "b\n", t);  // a resend of what came after the gap: ignored
  tail.Append(1, 1004, "c\n", t);
  auto page = tail.Read(0, 1 << 20);
  ASSERT_EQ(page.lines.size(), 4u);
  EXPECT_EQ(page.lines[0]->text, "a");
  EXPECT_EQ(page.lines[1]->text,
            "[podsched: 1000 bytes of output not streamed live here; the stored log has them]");
  EXPECT_EQ(page.lines[2]->text, "b");
  EXPECT_EQ(page.lines[3]->text, "c");
  EXPECT_EQ(page.next_offset, tail.end_offset());
}

TEST(LogTailTest, DropsTheOldestBeyondOneMebibyteOfMemory) {
  LogTail tail;
  std::string line(1023, 'x');
  line += '\n';
  for (int i = 0; i < 1100; ++i) tail.Append(1, int64_t{i} * 1024, line, At(1));
  EXPECT_LE(tail.bytes(), LogTail::kMaxBytes);
  EXPECT_GT(tail.bytes() + tail.bytes() / tail.lines(), LogTail::kMaxBytes);  // as many as fit
  auto page = tail.Read(0, 4096);
  EXPECT_TRUE(page.truncated);
  ASSERT_EQ(page.lines.size(), 4u);
  EXPECT_EQ(page.lines[0]->offset, static_cast<int64_t>(1100 - tail.lines()) * 1024);
}

// Audit H3: the bounds are on memory. A job printing 8 MiB of empty lines and sending 2,000
// progress points of 16 scalars with 32-byte names: before, the tail counted 1 byte per line
// (~72 MiB held) and the series nothing (~4.6 MB). The heap growth is measured (mallinfo2;
// sanitizer builds replace malloc and report nothing, so there only the estimates are checked).
TEST(OutputMemoryTest, AFloodOfEmptyLinesAndFatProgressStaysWithinTheBounds) {
  const size_t heap_before = mallinfo2().uordblks;
  {
    JobOutput output;
    const std::string newlines(64 << 10, '\n');
    for (int64_t off = 0; off < (int64_t{8} << 20); off += int64_t(newlines.size())) {
      output.AppendLog(JobId(1), 1, off, newlines, At(1));
    }
    ProgressSample fat = SampleAt(1, 1, 0);
    for (size_t k = 0; k < kMaxProgressScalars; ++k) {
      fat.scalars[std::string(30, 'a') + std::to_string(10 + k)] = 1.0;
    }
    for (int step = 0; step < 2000; ++step) {
      fat.step = step;
      output.AddProgress(JobId(1), fat);
    }
    const LogTail* tail = output.LogsOf(JobId(1));
    EXPECT_LE(tail->bytes(), LogTail::kMaxBytes);
    EXPECT_LE(tail->lines(), LogTail::kMaxBytes / sizeof(OutputLine));
    EXPECT_EQ(tail->end_offset(), int64_t{8} << 20);  // offsets still count every byte
    const ProgressSeries* series = output.ProgressOf(JobId(1));
    EXPECT_LE(series->bytes(), ProgressSeries::kMaxBytes);
    EXPECT_LT(series->points().size(), ProgressSeries::kMaxPoints);
    EXPECT_EQ(series->points().back().step, 1999);  // the newest are kept
    EXPECT_EQ(output.bytes(), tail->bytes() + series->bytes());
    const size_t heap_after = mallinfo2().uordblks;
    if (heap_after > heap_before) {
      EXPECT_LT(heap_after - heap_before, size_t{4} << 20)
          << "the estimates undercount: measured " << (heap_after - heap_before) << " bytes";
    }
  }
}

TEST(LogTailTest, AReadReturnsAtMostTheLineCapWhateverItsByteLimit) {
  LogTail tail;
  tail.Append(1, 0, std::string(50'000, '\n'), At(1));
  ASSERT_GT(tail.lines(), LogTail::kMaxLinesPerRead);
  auto page = tail.Read(0, 1 << 20);
  EXPECT_EQ(page.lines.size(), LogTail::kMaxLinesPerRead);
  auto next = tail.Read(page.next_offset, 1 << 20);  // the rest follows from next_offset
  EXPECT_EQ(next.lines.front()->offset, page.next_offset);
}

TEST(JobOutputTest, KeepsOutputPerJob) {
  JobOutput output;
  EXPECT_EQ(output.LogsOf(JobId(1)), nullptr);
  EXPECT_EQ(output.ProgressOf(JobId(1)), nullptr);
  output.AppendLog(JobId(1), 1, 0, "one\n", At(1));
  output.AppendLog(JobId(2), 1, 0, "two\nlines\n", At(1));
  ASSERT_NE(output.LogsOf(JobId(1)), nullptr);
  EXPECT_EQ(output.LogsOf(JobId(1))->end_offset(), 4);
  EXPECT_EQ(output.LogsOf(JobId(2))->end_offset(), 10);
  output.AddProgress(JobId(2), SampleAt(1, 1, 5));
  EXPECT_EQ(output.ProgressOf(JobId(1)), nullptr);
  ASSERT_EQ(output.ProgressOf(JobId(2))->points().size(), 1u);
}

TEST(JobOutputTest, StreamsTheNewestSampleAtMostOncePerIntervalPerJob) {
  JobOutput output;
  for (int step = 1; step <= 3; ++step) {
    output.AddProgress(JobId(1), SampleAt(10, 1, step));
  }
  output.AddProgress(JobId(2), SampleAt(10, 1, 7));
  auto due = output.TakeDueProgress(At(10));
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].first, JobId(1));
  EXPECT_EQ(due[0].second.step, 3);  // the newest
  EXPECT_EQ(due[1].second.step, 7);
  EXPECT_TRUE(output.TakeDueProgress(At(10)).empty());  // nothing new
  output.AddProgress(JobId(1), SampleAt(10.5, 1, 4));
  EXPECT_TRUE(output.TakeDueProgress(At(10.5)).empty());  // too soon after the last one
  due = output.TakeDueProgress(At(11));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].second.step, 4);
}

// A podsched that runs for months keeps the output of the jobs active most recently only: a
// bounded number of jobs and of bytes in all, the least recently active job forgotten first.
TEST(JobOutputTest, BoundedInJobsAndBytes) {
  JobOutput out(/*max_jobs=*/3, /*max_bytes=*/3000);
  const TimePoint t{};
  for (int j = 1; j <= 3; ++j) out.AppendLog(JobId(j), 1, 0, std::string(500, 'a') + "\n", t);
  out.AddProgress(JobId(1), ProgressSample{});  // job 1 active again: job 2 is the oldest now
  out.AppendLog(JobId(4), 1, 0, "x\n", t);
  EXPECT_EQ(out.LogsOf(JobId(2)), nullptr);
  EXPECT_NE(out.LogsOf(JobId(1)), nullptr);
  EXPECT_NE(out.ProgressOf(JobId(1)), nullptr);
  EXPECT_NE(out.LogsOf(JobId(3)), nullptr);
  // Bytes: a tail of 2,600 bytes (and its bookkeeping) pushes out the older ones until all fit.
  out.AppendLog(JobId(5), 1, 0, std::string(2600, 'b') + "\n", t);
  EXPECT_NE(out.LogsOf(JobId(5)), nullptr);
  EXPECT_EQ(out.LogsOf(JobId(1)), nullptr);
  EXPECT_EQ(out.LogsOf(JobId(3)), nullptr);
  EXPECT_NE(out.LogsOf(JobId(4)), nullptr);  // 2 bytes: still fits
  EXPECT_TRUE(out.TakeDueProgress(t + std::chrono::hours(1)).empty());  // job 1's went too
}

}  // namespace
}  // namespace podsched::daemon
