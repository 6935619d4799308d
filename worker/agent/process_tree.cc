#include "worker/agent/process_tree.h"

#include <sys/stat.h>

#include <filesystem>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace podsched::agent {
namespace {

// The whole file, or what was read before an error. With POSIX calls, not an ifstream: a /proc
// file of a process that exits meanwhile fails its read() with ESRCH, and libstdc++'s filebuf
// throws that through istreambuf_iterator (a CI run's agent died of it: "basic_filebuf::
// underflow error reading the file: No such process").
std::string ReadAll(const std::string& path) {
  std::string out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// The entries (NUL-terminated) of a /proc environ file that lie in its first `max` bytes: an
// entry cut at the limit is left out whole, never read as a shorter value.
std::string ReadEnvironHead(const std::string& path, size_t max) {
  std::ifstream in(path, std::ios::binary);
  std::string out(max, '\0');
  in.read(out.data(), static_cast<std::streamsize>(max));
  out.resize(static_cast<size_t>(in.gcount()));
  if (out.size() == max) out.resize(out.rfind('\0') + 1);  // npos + 1 == 0: nothing whole
  return out;
}

// The children of every thread of `pid` (a thread's `children` lists what it forked).
std::vector<pid_t> ChildrenOf(pid_t pid) {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(task_dir.c_str());
  if (dir == nullptr) return {};
  std::vector<pid_t> children;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::istringstream in(ReadAll(task_dir + "/" + e->d_name + "/children"));
    pid_t child = 0;
    while (in >> child) children.push_back(child);
  }
  closedir(dir);
  return children;
}

// One walk from `root`, adding to `found` what it did not hold; whether it added any.
bool WalkInto(pid_t root, std::set<pid_t>& found) {
  bool added = false;
  std::set<pid_t> seen{root};  // each pid read once a walk, even if reused mid-walk
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : ChildrenOf(p)) {
      if (!seen.insert(c).second) continue;
      if (found.insert(c).second) added = true;
      todo.push_back(c);
    }
  }
  return added;
}

}  // namespace

// The `children` files are read one process at a time, not atomically: a process reparented
// while the walk runs (its parent dying, as orted does on a Kill, hands it to the subreaper
// above) can be in neither list as read. Any such move is to an ancestor, so another walk
// finds it; walks repeat until one finds nothing new (at most 5: a fork storm cannot hold the
// agent here).
std::vector<pid_t> Descendants(pid_t root) {
  std::set<pid_t> found;
  WalkInto(root, found);
  for (int pass = 0; pass < 4 && WalkInto(root, found); ++pass) {
  }
  found.erase(root);
  return {found.begin(), found.end()};
}

std::optional<ProcInfo> ReadProc(pid_t pid) {
  return ParseProcStat(ReadAll("/proc/" + std::to_string(pid) + "/stat"), pid);
}

bool HandlesSignal(pid_t pid, int sig) {
  return StatusHandlesSignal(ReadAll("/proc/" + std::to_string(pid) + "/status"), sig);
}

void ProcessTable::Scan() { ScanFrom(Descendants(getpid())); }

void ProcessTable::ScanFrom(const std::vector<pid_t>& walked) {
  const std::set<pid_t> walked_set(walked.begin(), walked.end());
  std::set<pid_t> pids = walked_set;
  for (const auto& [pid, p] : processes_) {
    if (!p.info.zombie) pids.insert(pid);
  }
  std::map<pid_t, Process> found;
  for (pid_t pid : pids) {
    auto info = ReadProc(pid);
    if (!info) continue;
    auto known = processes_.find(pid);
    const bool same_process = known != processes_.end() &&
                              known->second.info.start_time == info->start_time;
    // Not walked: only a process we knew (the pid of one that died may have been reused).
    if (!same_process && !walked_set.contains(pid)) {
      continue;
    }
    Process& p = found[pid];
    p.info = *info;
    if (info->zombie) continue;
    // An exec (`podworker rank` becoming the user's program) keeps the pid and start time but
    // changes the name and the environment: read the tag again then.
    if (same_process && !known->second.tag.empty() && !known->second.inherited &&
        known->second.info.comm == info->comm) {
      p.tag = known->second.tag;
      p.rank = known->second.rank;
      continue;
    }
    // Only the head (audit M12: a job's environment may be megabytes, read on the agent's one
    // thread). SpawnChild puts the tag first; a descendant that moved it further down (a shell
    // reorders its environment) is attributed by its parent's tag below.
    p.tag = FindEnvVar(ReadEnvironHead("/proc/" + std::to_string(pid) + "/environ", kMaxEnvironRead),
                       kTagVariable)
                .value_or("");
    if (!p.tag.empty() && trust_) {
      const auto uid = StatusRealUid(ReadAll("/proc/" + std::to_string(pid) + "/status"));
      if (!uid || !trust_(pid, p.tag, *uid)) p.tag.clear();  // its parent's, below
    }
    JobEpoch je;
    int32_t host = 0;
    if (!ParseTag(p.tag, je, host, &p.rank)) p.rank = -1;
  }
  // Untagged: its parent's tag (what it inherited), not as a rank. Parents first: a chain of
  // untagged processes under a tagged one all belong to it.
  for (auto& [pid, p] : found) {
    if (p.info.zombie || !p.tag.empty()) continue;
    std::vector<Process*> chain{&p};
    for (auto up = found.find(p.info.ppid); up != found.end() && chain.size() < found.size();
         up = found.find(up->second.info.ppid)) {
      if (up->second.info.zombie) break;
      if (!up->second.tag.empty()) {
        for (Process* q : chain) {
          q->tag = up->second.tag;
          q->rank = -1;
          q->inherited = true;
        }
        break;
      }
      chain.push_back(&up->second);
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
