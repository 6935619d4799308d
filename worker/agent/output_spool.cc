#include "worker/agent/output_spool.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace podsched::agent {
namespace {

std::atomic<int64_t> g_abandoned_uploads{0};

}  // namespace

int64_t OutputSpool::AbandonedUploads() { return g_abandoned_uploads.load(); }

OutputSpool::Shared::~Shared() {
  if (event_fd >= 0) close(event_fd);
}

OutputSpool::OutputSpool(std::string dir, Stored stored, Options options, StoreOpener open_store)
    : dir_(std::move(dir)),
      stored_(std::move(stored)),
      options_(options),
      shared_(std::make_shared<Shared>(std::move(open_store))) {}

OutputSpool::~OutputSpool() {
  int left = 0;
  {
    std::unique_lock lock(shared_->mu);
    shared_->stop = true;
    shared_->wake.notify_all();
    shared_->idle.wait_for(lock, options_.shutdown_wait, [&] { return shared_->uploading == 0; });
    left = shared_->uploading;
  }
  for (std::thread& t : workers_) {
    // An upload still going after the wait (a store that hangs) must not hold the agent's stop
    // until systemd's SIGKILL: its thread co-owns what it touches, and ends with the process.
    if (left > 0) {
      t.detach();
    } else {
      t.join();
    }
  }
  if (left > 0) {
    g_abandoned_uploads += left;
    spdlog::warn("stopping with {} log upload(s) still in progress after {} ms; their spool "
                 "files stay in {}", left, options_.shutdown_wait.count(), dir_);
  }
  for (auto& [je, fd] : files_) close(fd);
}

Status OutputSpool::Start() {
  shared_->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (shared_->event_fd < 0) {
    return Status(StatusCode::kInternal, std::string("eventfd: ") + std::strerror(errno));
  }
  for (int i = 0; i < std::max(1, options_.upload_threads); ++i) {
    workers_.emplace_back([shared = shared_] { Work(shared); });
  }
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
  if (offset + static_cast<int64_t>(chunk.size()) <= options_.max_bytes) {
    (void)!write(it->second, chunk.data(), chunk.size());
  } else if (offset <= options_.max_bytes) {
    const std::string note = "podworker: output beyond " + std::to_string(options_.max_bytes >> 20) +
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
    std::lock_guard lock(shared_->mu);
    shared_->queue.push_back({je, PathOf(je), log_url});
  }
  shared_->wake.notify_one();
}

void OutputSpool::OnReadable() {
  uint64_t n = 0;
  (void)!read(shared_->event_fd, &n, sizeof n);
  std::deque<Done> done;
  {
    std::lock_guard lock(shared_->mu);
    done.swap(shared_->done);
  }
  for (const Done& d : done) {
    if (!d.status.ok()) {
      spdlog::warn("job {}: storing its log in {}: {}", d.je.job.value(), d.url,
                   d.status.ToString());
    }
    stored_(d.je);
  }
}

namespace {
constexpr size_t kUploadChunk = 1 << 20;
}  // namespace

void OutputSpool::Work(const std::shared_ptr<Shared>& shared) {
  const std::unique_ptr<char[]> buf(new char[kUploadChunk]);
  while (true) {
    Copy copy;
    {
      std::unique_lock lock(shared->mu);
      shared->wake.wait(lock, [&] { return shared->stop || !shared->queue.empty(); });
      if (shared->stop) return;
      copy = std::move(shared->queue.front());
      shared->queue.pop_front();
      ++shared->uploading;
    }
    Status status = copy.url.empty() ? Status::Ok() : Upload(shared->open_store, copy, buf.get());
    std::error_code ec;
    std::filesystem::remove(copy.path, ec);
    {
      std::lock_guard lock(shared->mu);
      shared->done.push_back({copy.je, copy.url, std::move(status)});
      --shared->uploading;
    }
    shared->idle.notify_all();
    const uint64_t one = 1;
    (void)!write(shared->event_fd, &one, sizeof one);
  }
}

Status OutputSpool::Upload(const StoreOpener& open_store, const Copy& copy, char* buf) {
  auto store = open_store(copy.url);
  if (!store) return store.error();
  auto writer = (*store)->NewWriter(LogKey(copy.je));
  if (!writer) return writer.error().WithContext(LogKey(copy.je));
  // A missing file (it could not be opened) stores an empty log, as an empty one would.
  const int fd = open(copy.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    while (true) {
      const ssize_t n = read(fd, buf, kUploadChunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const Status s(StatusCode::kInternal, "reading " + copy.path + ": " + std::strerror(errno));
        close(fd);
        return s;
      }
      if (n == 0) break;
      if (Status s = (*writer)->Append(std::string_view(buf, static_cast<size_t>(n))); !s.ok()) {
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
