#include "worker/agent/process_tree.h"

#include <dirent.h>

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

}  // namespace podsched::agent
