#include "worker/agent/output_spool.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace podsched::agent {

OutputSpool::OutputSpool(std::string dir, Stored stored, int64_t max_bytes,
                         StoreOpener open_store)
    : dir_(std::move(dir)),
      stored_(std::move(stored)),
      max_bytes_(max_bytes),
      open_store_(std::move(open_store)) {}

OutputSpool::~OutputSpool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  for (auto& [je, fd] : files_) close(fd);
  if (event_fd_ >= 0) close(event_fd_);
}

Status OutputSpool::Start() {
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) {
    return Status(StatusCode::kInternal, std::string("eventfd: ") + std::strerror(errno));
  }
  worker_ = std::thread([this] { Work(); });
  return Status::Ok();
}

std::string OutputSpool::LogKey(const JobEpoch& je) {
  return std::to_string(je.job.value()) + "/logs/epoch-" + std::to_string(je.epoch) + ".log";
}

std::string OutputSpool::PathOf(const JobEpoch& je) const {
  return dir_ + "/job-" + std::to_string(je.job.value()) + "-epoch-" + std::to_string(je.epoch) +
         ".log";
}

void OutputSpool::Open(const JobEpoch& je) {
  const std::string path = PathOf(je);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    spdlog::warn("job {}: spool {}: {}; its log will not be stored", je.job.value(), path,
                 std::strerror(errno));
    return;
  }
  if (auto old = files_.find(je); old != files_.end()) close(old->second);
  files_[je] = fd;
}

void OutputSpool::Append(const JobEpoch& je, int64_t offset, std::string_view chunk) {
  auto it = files_.find(je);
  if (it == files_.end()) return;
  if (offset + static_cast<int64_t>(chunk.size()) <= max_bytes_) {
    (void)!write(it->second, chunk.data(), chunk.size());
  } else if (offset <= max_bytes_) {
    const std::string note = "podworker: output beyond " + std::to_string(max_bytes_ >> 20) +
                             " MiB is not stored (it was streamed as Log messages)\n";
    (void)!write(it->second, note.data(), note.size());  // once: the crossing chunk
  }
}

void OutputSpool::Finish(const JobEpoch& je, const std::string& log_url) {
  if (auto it = files_.find(je); it != files_.end()) {
    close(it->second);
    files_.erase(it);
  }
  {
    std::lock_guard lock(mu_);
    queue_.push_back({je, PathOf(je), log_url});
  }
  wake_.notify_one();
}

void OutputSpool::OnReadable() {
  uint64_t n = 0;
  (void)!read(event_fd_, &n, sizeof n);
  std::deque<Done> done;
  {
    std::lock_guard lock(mu_);
    done.swap(done_);
  }
  for (const Done& d : done) {
    if (!d.status.ok()) {
      spdlog::warn("job {}: storing its log in {}: {}", d.je.job.value(), d.url,
                   d.status.ToString());
    }
    stored_(d.je);
  }
}

void OutputSpool::Work() {
  while (true) {
    Copy copy;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      copy = std::move(queue_.front());
      queue_.pop_front();
    }
    Status status = copy.url.empty() ? Status::Ok() : Upload(copy);
    std::error_code ec;
    std::filesystem::remove(copy.path, ec);
    {
      std::lock_guard lock(mu_);
      done_.push_back({copy.je, copy.url, std::move(status)});
    }
    const uint64_t one = 1;
    (void)!write(event_fd_, &one, sizeof one);
  }
}

Status OutputSpool::Upload(const Copy& copy) const {
  auto store = open_store_(copy.url);
  if (!store) return store.error();
  auto writer = (*store)->NewWriter(LogKey(copy.je));
  if (!writer) return writer.error().WithContext(LogKey(copy.je));
  // A missing file (it could not be opened) stores an empty log, as an empty one would.
  const int fd = open(copy.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    std::string buf(1 << 20, '\0');
    while (true) {
      const ssize_t n = read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const Status s(StatusCode::kInternal, "reading " + copy.path + ": " + std::strerror(errno));
        close(fd);
        return s;
      }
      if (n == 0) break;
      if (Status s = (*writer)->Append(std::string_view(buf.data(), static_cast<size_t>(n)));
          !s.ok()) {
        close(fd);
        return s.WithContext(LogKey(copy.je));
      }
    }
    close(fd);
  }
  if (Status s = (*writer)->Commit(); !s.ok()) return s.WithContext(LogKey(copy.je));
  return Status::Ok();
}

}  // namespace podsched::agent
