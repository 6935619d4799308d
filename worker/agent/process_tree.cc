#include "worker/agent/process_tree.h"

#include <sys/stat.h>

#include <filesystem>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
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
  const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  // "PID (COMM) STATE PPID ..." where COMM may contain spaces and parentheses.
  const size_t open = stat.find('(');
  const size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcInfo info;
  info.pid = pid;
  info.comm = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  std::vector<std::string> fields;
  while (rest >> field) fields.push_back(field);
  // fields[0] is field 3 (state); ppid is field 4, starttime field 22.
  if (fields.size() < 20) return std::nullopt;
  info.zombie = fields[0] == "Z" || fields[0] == "X";
  info.ppid = static_cast<pid_t>(std::stol(fields[1]));
  info.start_time = std::stoull(fields[19]);
  return info;
}

bool HandlesSignal(pid_t pid, int sig) {
  std::istringstream in(ReadAll("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  const uint64_t bit = uint64_t{1} << (sig - 1);
  while (std::getline(in, line)) {
    if (line.starts_with("SigCgt:") || line.starts_with("SigIgn:")) {
      if (std::stoull(line.substr(7), nullptr, 16) & bit) return true;
    }
  }
  return false;
}

std::optional<std::string> ReadEnvVar(pid_t pid, const std::string& name) {
  const std::string env = ReadAll("/proc/" + std::to_string(pid) + "/environ");
  const std::string prefix = name + "=";
  size_t pos = 0;
  while (pos < env.size()) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (env.compare(pos, prefix.size(), prefix) == 0) {
      return env.substr(pos + prefix.size(), end - pos - prefix.size());
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::string TagValue(const JobEpoch& je, int32_t host) {
  return std::to_string(je.job.value()) + ":" + std::to_string(je.epoch) + ":" +
         std::to_string(host);
}

bool ParseTag(const std::string& tag, JobEpoch& je, int32_t& host, int* rank) {
  long long j = 0, e = 0;
  int h = 0, r = -1;
  char extra = 0;
  const auto colons = std::count(tag.begin(), tag.end(), ':');
  if (colons == 2) {
    if (std::sscanf(tag.c_str(), "%lld:%lld:%d%c", &j, &e, &h, &extra) != 3) return false;
  } else if (colons == 3) {
    if (std::sscanf(tag.c_str(), "%lld:%lld:%d:%d%c", &j, &e, &h, &r, &extra) != 4 || r < 0) {
      return false;
    }
  } else {
    return false;
  }
  je = {JobId(j), e};
  host = h;
  if (rank != nullptr) *rank = r;
  return true;
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
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st {};
    if (stat(entry.path().c_str(), &st) == 0 && st.st_uid == uid) {
      out.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return out;
}

}  // namespace podsched::agent
