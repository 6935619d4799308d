#include "worker/agent/process_tree.h"

#include <sys/stat.h>

#include <filesystem>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <fstream>
#include <iterator>
#include <sstream>

namespace podsched::agent {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void ChildrenOf(pid_t pid, std::vector<pid_t>& out) {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(task_dir.c_str());
  if (dir == nullptr) return;
  std::vector<pid_t> children;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::istringstream in(ReadAll(task_dir + "/" + e->d_name + "/children"));
    pid_t child = 0;
    while (in >> child) children.push_back(child);
  }
  closedir(dir);
  for (pid_t c : children) {
    out.push_back(c);
    ChildrenOf(c, out);
  }
}

}  // namespace

std::vector<pid_t> Descendants(pid_t root) {
  std::vector<pid_t> out;
  ChildrenOf(root, out);
  return out;
}

std::optional<ProcInfo> ReadProc(pid_t pid) {
  return ParseProcStat(ReadAll("/proc/" + std::to_string(pid) + "/stat"), pid);
}

bool HandlesSignal(pid_t pid, int sig) {
  return StatusHandlesSignal(ReadAll("/proc/" + std::to_string(pid) + "/status"), sig);
}

std::optional<std::string> ReadEnvVar(pid_t pid, const std::string& name) {
  return FindEnvVar(ReadAll("/proc/" + std::to_string(pid) + "/environ"), name);
}

void ProcessTable::Scan() {
  std::map<pid_t, Process> found;
  for (pid_t pid : Descendants(getpid())) {
    auto info = ReadProc(pid);
    if (!info) continue;
    Process& p = found[pid];
    p.info = *info;
    if (info->zombie) continue;
    auto known = processes_.find(pid);
    // An exec (`podworker rank` becoming the user's program) keeps the pid and start time but
    // changes the name and the environment: read the tag again then.
    if (known != processes_.end() && !known->second.info.zombie &&
        known->second.info.start_time == info->start_time &&
        known->second.info.comm == info->comm) {
      p.tag = known->second.tag;
      p.rank = known->second.rank;
    } else {
      p.tag = ReadEnvVar(pid, kTagVariable).value_or("");
      JobEpoch je;
      int32_t host = 0;
      if (!ParseTag(p.tag, je, host, &p.rank)) p.rank = -1;
    }
  }
  processes_ = std::move(found);
}

bool ProcessTable::IsRank(pid_t pid) const {
  auto self = processes_.find(pid);
  if (self == processes_.end() || self->second.rank < 0 || self->second.info.zombie) return false;
  auto parent = processes_.find(self->second.info.ppid);
  return parent == processes_.end() || parent->second.tag != self->second.tag;
}

std::vector<std::pair<pid_t, uint64_t>> ProcessTable::Live() const {
  std::vector<std::pair<pid_t, uint64_t>> out;
  for (const auto& [pid, p] : processes_) {
    if (!p.info.zombie) out.emplace_back(pid, p.info.start_time);
  }
  return out;
}

std::vector<pid_t> ProcessesOfUid(uid_t uid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (name.empty() || ec != std::errc() || end != name.data() + name.size()) continue;
    struct stat st {};
    if (stat(entry.path().c_str(), &st) == 0 && st.st_uid == uid) out.push_back(pid);
  }
  return out;
}

}  // namespace podsched::agent
