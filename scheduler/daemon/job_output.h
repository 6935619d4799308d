// What running jobs send back besides their state: the tail of their output and their progress
// series, and JobOutput, which keeps both for every job and throttles the progress stream. Both
// are bounded in the memory they take, not in the bytes the job sent (audit H3: a job printing
// empty lines cost ~72 bytes of bookkeeping per byte counted, 18 GiB at the global cap): per job
// the newest lines within 1 MiB of memory, the newest progress points within 2,000 and 256 KiB;
// and in jobs: the output of the kMaxJobs jobs active most recently, at most kMaxBytes of tails
// and series in all (the least recently active job's is forgotten first; whole logs stay in the
// object store). Sizes are estimates of the heap (object plus string capacity plus a node),
// close enough to bound; OutputMemoryTest holds them to a measured ceiling.
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

// Estimated memory of a line in a LogTail (the deque slot and the text's heap buffer).
size_t MemoryOf(const OutputLine& line);

class LogTail {
 public:
  static constexpr size_t kMaxBytes = 1 << 20;  // of memory (MemoryOf), not of output
  // Most lines one Read returns, whatever its byte limit: each becomes a JSON object on the
  // scheduler thread.
  static constexpr size_t kMaxLinesPerRead = 10'000;

  // Appends the bytes an agent sent for `epoch` at `epoch_offset` (its offset within that
  // epoch's output). Bytes already received (a resend) are skipped; a missing stretch (beyond
  // the agent's live-log rate, or sent to a podsched since restarted) becomes one line saying
  // how many bytes the stored log has there. A trailing partial line is kept as a line of its
  // own.
  void Append(int64_t epoch, int64_t epoch_offset, std::string_view data, TimePoint now);

  struct Page {
    std::vector<const OutputLine*> lines;
    int64_t next_offset = 0;
    bool truncated = false;  // lines before `since` were dropped from the tail
  };
  // Whole lines starting at or after `since`, at most `limit` bytes of output (at least one
  // line) and at most kMaxLinesPerRead lines.
  Page Read(int64_t since, size_t limit) const;
  int64_t end_offset() const { return end_; }
  bool empty() const { return lines_.empty(); }
  size_t bytes() const { return bytes_; }  // memory of the lines held (MemoryOf)
  size_t lines() const { return lines_.size(); }

 private:
  void AddLine(int64_t epoch, int64_t length, std::string text, TimePoint now);

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

// Estimated memory of a sample in a ProgressSeries (the object, and a map node and name per
// scalar).
size_t MemoryOf(const ProgressSample& sample);

class ProgressSeries {
 public:
  static constexpr size_t kMaxPoints = 2000;
  static constexpr size_t kMaxBytes = 256 << 10;  // of memory (MemoryOf)
  // The newest points are kept: at most kMaxPoints, within kMaxBytes.
  void Add(const ProgressSample& p);
  const std::deque<ProgressSample>& points() const { return points_; }
  size_t bytes() const { return bytes_; }

 private:
  std::deque<ProgressSample> points_;
  size_t bytes_ = 0;
};

// The output and progress of every job that sent any (validated by the caller: job, epoch and
// sender are the job's current ones).
class JobOutput {
 public:
  // At most one progress sample per job per this interval goes to the stream (the newest).
  static constexpr Duration kStreamInterval = std::chrono::seconds(1);
  static constexpr size_t kMaxJobs = 4096;
  static constexpr size_t kMaxBytes = size_t{256} << 20;  // of tails and series together

  explicit JobOutput(size_t max_jobs = kMaxJobs, size_t max_bytes = kMaxBytes)
      : max_jobs_(max_jobs), max_bytes_(max_bytes) {}

  void AppendLog(JobId job, int64_t epoch, int64_t epoch_offset, std::string_view data,
                 TimePoint now);
  // Adds to the job's series and makes it the job's next sample to stream.
  void AddProgress(JobId job, const ProgressSample& p);
  // The newest sample of each job whose last streamed one is kStreamInterval old, once.
  std::vector<std::pair<JobId, ProgressSample>> TakeDueProgress(TimePoint now);

  // nullptr: the job sent nothing (since this process started).
  const LogTail* LogsOf(JobId job) const;
  const ProgressSeries* ProgressOf(JobId job) const;
  // Estimated memory of every tail and series held.
  size_t bytes() const { return bytes_; }

 private:
  struct StreamState {
    TimePoint last_sent{};
    std::optional<ProgressSample> pending;
  };
  // The job was active now; then the least recently active jobs go until within the limits.
  void Touch(JobId job);
  void Evict();

  size_t max_jobs_, max_bytes_;
  std::map<JobId, LogTail> logs_;
  std::map<JobId, ProgressSeries> progress_;
  std::map<JobId, StreamState> streamed_;
  std::map<JobId, uint64_t> touched_;  // job -> sequence number of its last activity
  std::map<uint64_t, JobId> by_age_;   // the same, oldest first
  uint64_t seq_ = 0;
  size_t bytes_ = 0;                   // of every tail and series together
};

}  // namespace podsched::daemon
