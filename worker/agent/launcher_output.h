// LauncherOutput: the launcher's stdout and stderr of one job epoch, from its pipes to the
// stored log and the live log (a JobRunner owner, issue 27).
//
// Every chunk goes to the store (the output spool: the stored log is whole); the bus gets what
// the epoch's live-log budget allows (the audit's H2: one job's flood filled the agent's send
// queue ahead of its heartbeats, and podsched's thread with lines). A skipped chunk leaves a gap
// in the offsets, which podsched shows in the live log.
//
// Thread safety: a value owned by the agent's poll thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/ids.h"
#include "common/token_bucket.h"
#include "proto/bus.pb.h"
#include "worker/agent/log_cutter.h"

namespace podsched::agent {

class LauncherOutput {
 public:
  using Store = std::function<void(int64_t offset, const std::string& data)>;
  using Send = std::function<bool(const bus::Envelope&)>;

  LauncherOutput() = default;
  // `live_bytes_per_second`: the live log's budget, 4 s of it saved up; 0: no limit.
  LauncherOutput(JobEpoch je, int64_t live_bytes_per_second);
  LauncherOutput(LauncherOutput&& other) noexcept;
  LauncherOutput& operator=(LauncherOutput&& other) noexcept;
  ~LauncherOutput();  // closes the pipes still open

  // The read ends of the launcher's pipes (non-blocking); the object owns them.
  void Attach(int stdout_fd, int stderr_fd);
  int fd(LogCutter::Stream stream) const { return fds_[stream]; }
  bool open() const { return fds_[0] >= 0 || fds_[1] >= 0; }

  // Reads what the stream's pipe has. Returns false when the pipe ended (it is closed now).
  bool Read(LogCutter::Stream stream);
  // Hands everything pending to `store`, and to `send` as Log messages within the budget.
  void Flush(MonotonicTime now, const Store& store, const Send& send);

  void set_filter(LogCutter::LineFilter filter) { cutter_.set_filter(std::move(filter)); }
  void AddLine(std::string_view line) { cutter_.AddLine(line); }
  void EndStreams();  // the unfinished last lines become pending
  const std::string& tail() const { return cutter_.tail(); }
  int64_t live_skipped() const { return live_skipped_; }

 private:
  void Close(LogCutter::Stream stream);

  JobEpoch je_{};
  int64_t live_rate_ = 0;
  int fds_[2] = {-1, -1};
  LogCutter cutter_;
  TokenBucket<MonotonicTime> live_{0, 0};
  int64_t live_skipped_ = 0;
};

}  // namespace podsched::agent
