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
  const std::string tmp = path_ + "/processes.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [p, s] : processes) out << p << ' ' << s << '\n';
    out.flush();
    if (!out) return Status(StatusCode::kInternal, "cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_ + "/processes", ec);
  if (ec) return Status(StatusCode::kInternal, "rename " + tmp + ": " + ec.message());
  recorded_ = std::move(processes);
  return Status::Ok();
}

}  // namespace podsched::agent
