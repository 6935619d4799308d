#include "worker/agent/state_dir.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "worker/agent/process_tree.h"

namespace podsched::agent {

Status StateDir::Open() {
  std::error_code ec;
  std::filesystem::create_directories(path_, ec);
  if (ec) return Status(StatusCode::kInternal, "state dir " + path_ + ": " + ec.message());
  return Status::Ok();
}

int StateDir::KillLeftovers(Duration wait, const MonotonicClock& clock) {
  std::ifstream in(path_ + "/processes");
  std::vector<std::pair<pid_t, uint64_t>> alive;
  pid_t pid = 0;
  uint64_t start = 0;
  auto same = [](pid_t p, uint64_t s) {
    auto info = ReadProc(p);
    return info && info->start_time == s;
  };
  while (in >> pid >> start) {
    if (pid <= 1 || pid == getpid() || !same(pid, start)) continue;
    if (getpgid(pid) == pid) kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    alive.emplace_back(pid, start);
  }
  const MonotonicTime deadline = clock.Now() + wait;
  while (clock.Now() < deadline &&
         std::any_of(alive.begin(), alive.end(), [&](auto& p) {
           auto info = ReadProc(p.first);
           // A killed orphan is a zombie until init reaps it: gone for our purposes.
           return info && info->start_time == p.second && !info->zombie;
         })) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::error_code ec;
  std::filesystem::remove(path_ + "/processes", ec);
  recorded_.clear();
  return static_cast<int>(alive.size());
}

Status StateDir::Record(std::vector<std::pair<pid_t, uint64_t>> processes) {
  std::sort(processes.begin(), processes.end());
  if (processes == recorded_) return Status::Ok();
  std::string text;
  for (const auto& [p, s] : processes) text += std::to_string(p) + ' ' + std::to_string(s) + '\n';
  Status written = WriteAtomically(path_ + "/processes", text);
  if (!written.ok()) return written;
  recorded_ = std::move(processes);
  return Status::Ok();
}

Status StateDir::WriteAtomically(const std::string& file, const std::string& text) {
  const std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status(StatusCode::kInternal, "cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return Status(StatusCode::kInternal, "rename " + tmp + ": " + ec.message());
  return Status::Ok();
}

namespace {
std::string JobDir(const std::string& root, const JobEpoch& je) {
  return root + "/jobs/" + std::to_string(je.job.value()) + "." + std::to_string(je.epoch);
}
}  // namespace

std::string StateDir::PreemptFile(const JobEpoch& je, int32_t host) const {
  return JobDir(path_, je) + "/h" + std::to_string(host) + "/preempt";
}

Status StateDir::CreateJobDirs(const JobEpoch& je, const std::vector<int32_t>& hosts) {
  for (int32_t h : hosts) {
    std::error_code ec;
    const std::string dir = JobDir(path_, je) + "/h" + std::to_string(h);
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status(StatusCode::kInternal, "cannot create " + dir + ": " + ec.message());
  }
  return Status::Ok();
}

void StateDir::RemoveJobDirs(const JobEpoch& je) {
  std::error_code ec;
  std::filesystem::remove_all(JobDir(path_, je), ec);
}

}  // namespace podsched::agent
