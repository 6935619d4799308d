// What running jobs send back besides their state: the tail of their output and their progress
// series, and JobOutput, which keeps both for every job and throttles the progress stream. Both
// are bounded in memory per job (docs/bus.md): the newest 1 MiB of output, the newest 2,000
// progress points; and in jobs: the output of the kMaxJobs jobs active most recently, at most
// kMaxLogBytes of tails in all (the least recently active job's is forgotten first; whole logs
// stay in the object store).
//
// Pure; not thread-safe (the scheduler thread owns them).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"

namespace podsched::daemon {

// One line of output. `offset` is the byte offset of the line in the job's output over all
// epochs (what `?since=` takes); `rank` is parsed from mpirun's `[1,3]<stdout>:` tag (-1: none).
struct OutputLine {
  int64_t offset = 0;
  int64_t length = 0;  // bytes in the output, tag and newline included
  TimePoint time{};
  int64_t epoch = 0;
  int rank = -1;
  std::string text;  // without the tag and the newline
};

class LogTail {
 public:
  static constexpr size_t kMaxBytes = 1 << 20;

  // Appends the bytes an agent sent for `epoch` at `epoch_offset` (its offset within that
  // epoch's output). Bytes already received (a resend) are skipped; a missing stretch is not
  // filled. A trailing partial line is kept as a line of its own.
  void Append(int64_t epoch, int64_t epoch_offset, std::string_view data, TimePoint now);

  struct Page {
    std::vector<const OutputLine*> lines;
    int64_t next_offset = 0;
    bool truncated = false;  // lines before `since` were dropped from the tail
  };
  // Whole lines starting at or after `since`, at most `limit` bytes (at least one line).
  Page Read(int64_t since, size_t limit) const;
  int64_t end_offset() const { return end_; }
  bool empty() const { return lines_.empty(); }
  size_t bytes() const { return bytes_; }

 private:
  std::deque<OutputLine> lines_;
  size_t bytes_ = 0;
  int64_t end_ = 0;               // job-wide offset after the last byte
  int64_t epoch_ = -1;            // epoch of the bytes received last
  int64_t epoch_received_ = 0;    // bytes of that epoch received so far
};

inline constexpr size_t kMaxProgressScalars = 16;

struct ProgressSample {
  TimePoint time{};
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t total_steps = 0;
  double loss = 0;
  double accuracy = 0;
  double examples_per_second = 0;
  int64_t last_checkpoint_step = 0;
  std::map<std::string, double> scalars;  // named figures (bus Progress.scalars, bounded)
};

class ProgressSeries {
 public:
  static constexpr size_t kMaxPoints = 2000;
  void Add(const ProgressSample& p) {
    points_.push_back(p);
    if (points_.size() > kMaxPoints) points_.pop_front();
  }
  const std::deque<ProgressSample>& points() const { return points_; }

 private:
  std::deque<ProgressSample> points_;
};

// The output and progress of every job that sent any (validated by the caller: job, epoch and
// sender are the job's current ones).
class JobOutput {
 public:
  // At most one progress sample per job per this interval goes to the stream (the newest).
  static constexpr Duration kStreamInterval = std::chrono::seconds(1);
  static constexpr size_t kMaxJobs = 4096;
  static constexpr size_t kMaxLogBytes = size_t{256} << 20;

  explicit JobOutput(size_t max_jobs = kMaxJobs, size_t max_log_bytes = kMaxLogBytes)
      : max_jobs_(max_jobs), max_log_bytes_(max_log_bytes) {}

  void AppendLog(JobId job, int64_t epoch, int64_t epoch_offset, std::string_view data,
                 TimePoint now);
  // Adds to the job's series and makes it the job's next sample to stream.
  void AddProgress(JobId job, const ProgressSample& p);
  // The newest sample of each job whose last streamed one is kStreamInterval old, once.
  std::vector<std::pair<JobId, ProgressSample>> TakeDueProgress(TimePoint now);

  // nullptr: the job sent nothing (since this process started).
  const LogTail* LogsOf(JobId job) const;
  const ProgressSeries* ProgressOf(JobId job) const;

 private:
  struct StreamState {
    TimePoint last_sent{};
    std::optional<ProgressSample> pending;
  };
  // The job was active now; then the least recently active jobs go until within the limits.
  void Touch(JobId job);
  void Evict();

  size_t max_jobs_, max_log_bytes_;
  std::map<JobId, LogTail> logs_;
  std::map<JobId, ProgressSeries> progress_;
  std::map<JobId, StreamState> streamed_;
  std::map<JobId, uint64_t> touched_;  // job -> sequence number of its last activity
  std::map<uint64_t, JobId> by_age_;   // the same, oldest first
  uint64_t seq_ = 0;
  size_t log_bytes_ = 0;               // of every tail together
};

}  // namespace podsched::daemon
