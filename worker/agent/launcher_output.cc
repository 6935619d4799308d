#include "worker/agent/launcher_output.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace podsched::agent {

LauncherOutput::LauncherOutput(JobEpoch je, int64_t live_bytes_per_second)
    : je_(je),
      live_rate_(live_bytes_per_second),
      live_(static_cast<double>(live_bytes_per_second),
            4 * static_cast<double>(live_bytes_per_second)) {}

LauncherOutput::LauncherOutput(LauncherOutput&& other) noexcept { *this = std::move(other); }

LauncherOutput& LauncherOutput::operator=(LauncherOutput&& other) noexcept {
  if (this == &other) return *this;
  Close(LogCutter::kStdout);
  Close(LogCutter::kStderr);
  je_ = other.je_;
  live_rate_ = other.live_rate_;
  fds_[0] = std::exchange(other.fds_[0], -1);
  fds_[1] = std::exchange(other.fds_[1], -1);
  cutter_ = std::move(other.cutter_);
  live_ = other.live_;
  live_skipped_ = other.live_skipped_;
  return *this;
}

LauncherOutput::~LauncherOutput() {
  Close(LogCutter::kStdout);
  Close(LogCutter::kStderr);
}

void LauncherOutput::Attach(int stdout_fd, int stderr_fd) {
  Close(LogCutter::kStdout);
  Close(LogCutter::kStderr);
  fds_[LogCutter::kStdout] = stdout_fd;
  fds_[LogCutter::kStderr] = stderr_fd;
}

void LauncherOutput::Close(LogCutter::Stream stream) {
  if (fds_[stream] >= 0) close(fds_[stream]);
  fds_[stream] = -1;
}

bool LauncherOutput::Read(LogCutter::Stream stream) {
  if (fds_[stream] < 0) return false;
  char buf[65536];
  const ssize_t n = read(fds_[stream], buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  if (n <= 0) {
    cutter_.EndStream(stream);
    Close(stream);
    return false;
  }
  cutter_.Append(stream, std::string_view(buf, static_cast<size_t>(n)));
  return true;
}

void LauncherOutput::EndStreams() {
  cutter_.EndStream(LogCutter::kStdout);
  cutter_.EndStream(LogCutter::kStderr);
}

void LauncherOutput::Flush(MonotonicTime now, const Store& store, const Send& send) {
  for (LogCutter::Chunk& chunk : cutter_.Take()) {
    store(chunk.offset, chunk.data);
    if (live_rate_ > 0 && !live_.Take(static_cast<double>(chunk.data.size()), now)) {
      if (live_skipped_ == 0) {
        spdlog::warn("job {} epoch {}: output beyond {} bytes/s; the live log skips some, the "
                     "stored log has all", je_.job.value(), je_.epoch, live_rate_);
      }
      live_skipped_ += static_cast<int64_t>(chunk.data.size());
      continue;
    }
    bus::Envelope env;
    auto* log = env.mutable_log();
    log->mutable_job()->set_job_id(je_.job.value());
    log->mutable_job()->set_epoch(je_.epoch);
    log->set_offset(chunk.offset);
    log->set_data(std::move(chunk.data));
    send(env);
  }
}

}  // namespace podsched::agent
