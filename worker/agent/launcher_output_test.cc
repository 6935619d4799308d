// LauncherOutput with real pipes: whole lines to the store and the bus, the end of a pipe, and
// the live-log budget that never starves the stored log.
#include "worker/agent/launcher_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace podsched::agent {
namespace {

struct Pipe {
  Pipe() {
    EXPECT_EQ(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  }
  ~Pipe() {
    if (fds[1] >= 0) close(fds[1]);
  }
  void Write(const std::string& s) {
    EXPECT_EQ(write(fds[1], s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void CloseWriter() {
    close(fds[1]);
    fds[1] = -1;
  }
  int fds[2] = {-1, -1};
};

struct Recorder {
  std::string stored;
  std::vector<int64_t> stored_offsets;
  std::vector<bus::Log> sent;
  LauncherOutput::Store store() {
    return [this](int64_t offset, const std::string& data) {
      stored_offsets.push_back(offset);
      stored += data;
    };
  }
  LauncherOutput::Send send() {
    return [this](const bus::Envelope& e) {
      sent.push_back(e.log());
      return true;
    };
  }
  int64_t SentBytes() const {
    int64_t n = 0;
    for (const bus::Log& l : sent) n += static_cast<int64_t>(l.data().size());
    return n;
  }
};

const MonotonicTime t0 = MonotonicTime{} + std::chrono::hours(1);

TEST(LauncherOutputTest, WholeLinesGoToTheStoreAndTheBusUntilBothPipesEnd) {
  Pipe out, err;
  LauncherOutput output(JobEpoch{JobId(4), 2}, 0);
  output.Attach(out.fds[0], err.fds[0]);
  EXPECT_TRUE(output.open());
  Recorder r;
  out.Write("step 1\nstep 2\npart");
  EXPECT_TRUE(output.Read(LogCutter::kStdout));
  EXPECT_TRUE(output.Read(LogCutter::kStderr)) << "nothing to read is not the end";
  output.Flush(t0, r.store(), r.send());
  EXPECT_EQ(r.stored, "step 1\nstep 2\n") << "the unfinished line waits";
  ASSERT_EQ(r.sent.size(), 1u);
  EXPECT_EQ(r.sent[0].job().job_id(), 4);
  EXPECT_EQ(r.sent[0].job().epoch(), 2);
  EXPECT_EQ(r.sent[0].offset(), 0);
  EXPECT_EQ(r.sent[0].data(), "step 1\nstep 2\n");

  out.CloseWriter();
  EXPECT_FALSE(output.Read(LogCutter::kStdout));
  EXPECT_EQ(output.fd(LogCutter::kStdout), -1);
  EXPECT_TRUE(output.open()) << "stderr is still open";
  err.CloseWriter();
  EXPECT_FALSE(output.Read(LogCutter::kStderr));
  EXPECT_FALSE(output.open());
  output.Flush(t0, r.store(), r.send());
  EXPECT_EQ(r.stored, "step 1\nstep 2\npart\n") << "the last line, ended";
  EXPECT_EQ(r.sent.back().offset(), 14);
}

TEST(LauncherOutputTest, ALiveLogFloodIsCutButTheStoredLogIsWhole) {
  Pipe out, err;
  LauncherOutput output(JobEpoch{JobId(5), 1}, 100);  // 100 B/s, 400 B saved up
  output.Attach(out.fds[0], err.fds[0]);
  Recorder r;
  const std::string line(99, 'x');
  for (int i = 0; i < 10; ++i) {
    out.Write(line + "\n");
    ASSERT_TRUE(output.Read(LogCutter::kStdout));
    output.Flush(t0, r.store(), r.send());  // ten 100-byte chunks within one instant
  }
  EXPECT_EQ(r.stored.size(), 1000u);
  EXPECT_EQ(r.SentBytes(), 400);
  EXPECT_EQ(output.live_skipped(), 600);
  // The gap is in the offsets: what was sent says where it belongs.
  EXPECT_EQ(r.sent.back().offset(), 300);
  // Ten seconds later the budget has refilled.
  out.Write(line + "\n");
  ASSERT_TRUE(output.Read(LogCutter::kStdout));
  output.Flush(t0 + std::chrono::seconds(10), r.store(), r.send());
  EXPECT_EQ(r.sent.back().offset(), 1000);
  EXPECT_EQ(r.stored.size(), 1100u);
}

TEST(LauncherOutputTest, MovingItKeepsThePipesAndDestroyingItClosesThem) {
  Pipe out, err;
  LauncherOutput a(JobEpoch{JobId(6), 1}, 0);
  a.Attach(out.fds[0], err.fds[0]);
  LauncherOutput b = std::move(a);
  EXPECT_FALSE(a.open());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(b.fd(LogCutter::kStdout), out.fds[0]);
  const int fd = out.fds[0];
  { LauncherOutput gone = std::move(b); }
  EXPECT_EQ(fcntl(fd, F_GETFD), -1) << "closed with its owner";
}

}  // namespace
}  // namespace podsched::agent
