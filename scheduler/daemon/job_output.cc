#include "scheduler/daemon/job_output.h"

#include <algorithm>

#include "common/rank_tag.h"

namespace podsched::daemon {
namespace {

// The rank of a line tagged as common/rank_tag.h describes, with the tag stripped; -1 when it
// has none.
int StripRankTag(std::string& text) {
  const RankTag tag = ParseRankTag(text);
  if (tag.length == 0) return -1;
  text.erase(0, tag.length);
  return tag.rank;
}

// A std::map node: the value plus the red-black tree's links and colour.
constexpr size_t kMapNodeOverhead = 32;

}  // namespace

size_t MemoryOf(const OutputLine& line) { return sizeof(OutputLine) + line.text.capacity(); }

size_t MemoryOf(const ProgressSample& sample) {
  size_t n = sizeof(ProgressSample);
  for (const auto& [name, value] : sample.scalars) {
    n += kMapNodeOverhead + sizeof(std::pair<const std::string, double>) + name.capacity();
  }
  return n;
}

void ProgressSeries::Add(const ProgressSample& p) {
  points_.push_back(p);
  bytes_ += MemoryOf(points_.back());
  while (points_.size() > 1 && (points_.size() > kMaxPoints || bytes_ > kMaxBytes)) {
    bytes_ -= MemoryOf(points_.front());
    points_.pop_front();
  }
}

void LogTail::Append(int64_t epoch, int64_t epoch_offset, std::string_view data, TimePoint now) {
  if (epoch != epoch_) {
    epoch_ = epoch;
    epoch_received_ = 0;
  }
  if (epoch_offset < 0) return;
  if (epoch_offset < epoch_received_) {  // a resend: skip what we have
    int64_t skip = epoch_received_ - epoch_offset;
    if (skip >= static_cast<int64_t>(data.size())) return;
    data.remove_prefix(static_cast<size_t>(skip));
    epoch_offset = epoch_received_;
  }
  if (epoch_offset > epoch_received_) {
    const std::string note = "[podsched: " + std::to_string(epoch_offset - epoch_received_) +
                             " bytes of output not streamed live here; the stored log has them]";
    AddLine(epoch, static_cast<int64_t>(note.size()) + 1, note, now);
  }
  epoch_received_ = epoch_offset + static_cast<int64_t>(data.size());
  while (!data.empty()) {
    size_t nl = data.find('\n');
    size_t len = nl == std::string_view::npos ? data.size() : nl + 1;
    AddLine(epoch, static_cast<int64_t>(len),
            std::string(data.substr(0, nl == std::string_view::npos ? len : nl)), now);
    data.remove_prefix(len);
  }
}

void LogTail::AddLine(int64_t epoch, int64_t length, std::string text, TimePoint now) {
  OutputLine line;
  line.offset = end_;
  line.length = length;
  line.time = now;
  line.epoch = epoch;
  line.text = std::move(text);
  line.rank = StripRankTag(line.text);
  end_ += length;
  lines_.push_back(std::move(line));
  bytes_ += MemoryOf(lines_.back());
  // Within the bound after every line: a burst of empty lines never holds more than it.
  while (bytes_ > kMaxBytes && lines_.size() > 1) {
    bytes_ -= MemoryOf(lines_.front());
    lines_.pop_front();
  }
}

LogTail::Page LogTail::Read(int64_t since, size_t limit) const {
  Page page;
  page.next_offset = std::clamp<int64_t>(since, 0, end_);
  page.truncated = !lines_.empty() && since < lines_.front().offset;
  size_t used = 0;
  for (const OutputLine& line : lines_) {
    if (line.offset < since) continue;
    if (page.lines.size() >= kMaxLinesPerRead) break;
    if (!page.lines.empty() && used + static_cast<size_t>(line.length) > limit) break;
    used += static_cast<size_t>(line.length);
    page.lines.push_back(&line);
    page.next_offset = line.offset + line.length;
  }
  return page;
}

void JobOutput::AppendLog(JobId job, int64_t epoch, int64_t epoch_offset, std::string_view data,
                          TimePoint now) {
  LogTail& tail = logs_[job];
  bytes_ -= tail.bytes();
  tail.Append(epoch, epoch_offset, data, now);
  bytes_ += tail.bytes();
  Touch(job);
}

void JobOutput::AddProgress(JobId job, const ProgressSample& p) {
  ProgressSeries& series = progress_[job];
  bytes_ -= series.bytes();
  series.Add(p);
  bytes_ += series.bytes();
  streamed_[job].pending = p;
  Touch(job);
}

void JobOutput::Touch(JobId job) {
  if (auto it = touched_.find(job); it != touched_.end()) by_age_.erase(it->second);
  touched_[job] = ++seq_;
  by_age_[seq_] = job;
  Evict();
}

void JobOutput::Evict() {
  while (by_age_.size() > 1 && (touched_.size() > max_jobs_ || bytes_ > max_bytes_)) {
    const JobId oldest = by_age_.begin()->second;
    by_age_.erase(by_age_.begin());
    touched_.erase(oldest);
    if (auto it = logs_.find(oldest); it != logs_.end()) {
      bytes_ -= it->second.bytes();
      logs_.erase(it);
    }
    if (auto it = progress_.find(oldest); it != progress_.end()) {
      bytes_ -= it->second.bytes();
      progress_.erase(it);
    }
    streamed_.erase(oldest);
  }
}

std::vector<std::pair<JobId, ProgressSample>> JobOutput::TakeDueProgress(TimePoint now) {
  std::vector<std::pair<JobId, ProgressSample>> out;
  for (auto& [job, st] : streamed_) {
    if (!st.pending || now - st.last_sent < kStreamInterval) continue;
    out.emplace_back(job, *st.pending);
    st.pending.reset();
    st.last_sent = now;
  }
  return out;
}

const LogTail* JobOutput::LogsOf(JobId job) const {
  auto it = logs_.find(job);
  return it == logs_.end() ? nullptr : &it->second;
}

const ProgressSeries* JobOutput::ProgressOf(JobId job) const {
  auto it = progress_.find(job);
  return it == progress_.end() ? nullptr : &it->second;
}

}  // namespace podsched::daemon
