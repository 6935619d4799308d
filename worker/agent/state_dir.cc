#include "worker/agent/state_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "worker/agent/owner_removal.h"
#include "worker/agent/process_tree.h"

namespace podsched::agent {

namespace {

bool SwitchesUser(const JobAccount* owner) { return owner != nullptr && geteuid() == 0; }

// mkdir -p whose new directories are root's and traversable (0711) when the agent is root: job
// accounts reach their own directories below, and list nothing.
// Directories that exist already keep their mode (the admin's choice).
Status CreateTraversable(const std::string& dir) {
  std::filesystem::path path;
  for (const auto& part : std::filesystem::path(dir)) {
    path /= part;
    if (mkdir(path.c_str(), 0711) == 0) {
      if (geteuid() == 0) chmod(path.c_str(), 0711);  // whatever the umask
    } else if (errno != EEXIST) {
      return Status(StatusCode::kInternal,
                    "cannot create " + path.string() + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

// `dir` (its parent exists and is not writable by the owner) as a 0700 directory of `owner`:
// made when missing, else it must be a real directory already the owner's. The mode comes from
// mkdir itself, never from a chmod that a swapped-in symlink could redirect.
Status CreateOwned(const std::string& dir, const JobAccount* owner) {
  const bool created = mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    return Status(StatusCode::kInternal, "cannot create " + dir + ": " + std::strerror(errno));
  }
  // Through a descriptor of the directory itself, opened without following a link: between
  // the mkdir and the chown the owner may swap what is there (in its own directory), and a
  // chown by name could then give it another file (a hard link to one of root's).
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno != ELOOP && errno != ENOTDIR) {
    return Status(StatusCode::kInternal, "cannot open " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
    if (fd >= 0) ::close(fd);
    return Status(StatusCode::kPermissionDenied, dir + " is not a directory (a symlink?)");
  }
  if (!SwitchesUser(owner) || !created) {
    ::close(fd);
    if (SwitchesUser(owner) && st.st_uid != owner->uid) {
      return Status(StatusCode::kPermissionDenied,
                    dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to " +
                        owner->name);
    }
    return Status::Ok();
  }
  const int chowned = ::fchown(fd, owner->uid, owner->gid);
  const int err = errno;
  ::close(fd);
  if (chowned != 0) {
    return Status(StatusCode::kInternal,
                  "cannot give " + dir + " to " + owner->name + ": " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace

Status StateDir::Open() {
  if (Status s = CreateTraversable(path_); !s.ok()) {
    return Status(StatusCode::kInternal, "state dir: " + s.message());
  }
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
  // Never through a link or into a FIFO, whoever could write the directory: no following a
  // symlink (O_NOFOLLOW), no blocking open (O_NONBLOCK), a regular file only (fstat).
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status(StatusCode::kInternal, "cannot create " + tmp + ": " + std::strerror(errno));
  }
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  for (std::string_view rest = text; ok && !rest.empty();) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) rest.remove_prefix(static_cast<size_t>(n));
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    ::unlink(tmp.c_str());
    return Status(StatusCode::kInternal, "cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    return Status(StatusCode::kInternal, "rename " + tmp + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

namespace {
std::string JobDir(const std::string& root, const JobEpoch& je) {
  return root + "/jobs/" + std::to_string(je.job.value()) + "." + std::to_string(je.epoch);
}
}  // namespace

std::string StateDir::PreemptFile(const JobEpoch& je, int32_t host) const {
  return JobDir(path_, je) + "/h" + std::to_string(host) + ".preempt";
}

std::string StateDir::HostDir(const JobEpoch& je, int32_t host) const {
  return JobDir(path_, je) + "/h" + std::to_string(host);
}

Status StateDir::CreateJobDirs(const JobEpoch& je, const std::vector<int32_t>& hosts,
                               const JobAccount* owner) {
  if (Status s = CreateTraversable(JobDir(path_, je)); !s.ok()) return s;
  for (int32_t h : hosts) {
    const std::string dir = HostDir(je, h);
    if (Status s = CreateOwned(dir, owner); !s.ok()) return s;
    // The preemption notice is not in here: the agent (root) writes it beside, in the epoch's
    // root-owned directory (PreemptFile), where the job can plant no link and no FIFO.
    if (Status s = CreateOwned(dir + "/ompi", owner); !s.ok()) return s;
  }
  return Status::Ok();
}

void StateDir::RemoveJobDirs(const JobEpoch& je, const JobAccount* owner,
                             const std::vector<std::string>& also) {
  const std::string dir = JobDir(path_, je);
  if (!SwitchesUser(owner)) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    RemoveAsOwner(also, owner);
    return;
  }
  EmptyEpochDir(dir, owner, also);
  RmdirEmptied();
}

void StateDir::EmptyEpochDir(const std::string& dir, const JobAccount* owner,
                             const std::vector<std::string>& also) {
  // The host directories are the account's: their content goes with its rights. The rest is
  // the agent's own files (the preemption notices) in this root-owned directory, where the
  // account cannot plant anything: unlinked directly.
  std::error_code ec;
  std::vector<std::string> owners_dirs = also;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      if (owner != nullptr) {
        owners_dirs.push_back(entry.path().string());
        continue;
      }
      JobAccount found;  // a previous run's: the account that owns the directory
      found.name = "uid " + std::to_string(st.st_uid);
      found.uid = st.st_uid;
      found.gid = st.st_gid;
      found.groups = {st.st_gid};
      RemoveAsOwner({entry.path().string()}, &found);
    } else {
      ::unlink(entry.path().c_str());
    }
  }
  RemoveAsOwner(owners_dirs, owner);
  // The removals run as child processes, and an owner cannot unlink its emptied hH from this
  // root-owned directory: root rmdirs them once empty, at a later RmdirEmptied (audit L1: every
  // job left jobs/J.E/hH behind). Only epochs that ended: a live job's hH may well be empty.
  removing_.insert(dir);
}

int StateDir::RemoveLeftovers() {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_ + "/jobs", ec)) {
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    EmptyEpochDir(entry.path().string(), nullptr);
    ++removed;
  }
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    const std::string name = entry.path().filename().string();
    struct stat st {};
    if (name.starts_with("job-") && name.ends_with(".log") &&
        ::lstat(entry.path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::unlink(entry.path().c_str()) == 0) {
      ++removed;
    }
  }
  RmdirEmptied();
  return removed;
}

void StateDir::RmdirEmptied() {
  std::error_code ec;
  for (auto it = removing_.begin(); it != removing_.end();) {
    for (const auto& entry : std::filesystem::directory_iterator(*it, ec)) {
      ::rmdir(entry.path().c_str());  // only an empty directory goes; never follows a link
    }
    if (::rmdir(it->c_str()) == 0 || errno == ENOENT) {
      it = removing_.erase(it);
    } else {
      ++it;
    }
  }
}

std::string StateDir::ScratchDir(const std::string& scratch_root, const std::string& account,
                                 const JobEpoch& je, int32_t host) {
  return scratch_root + "/" + account + "/job-" + std::to_string(je.job.value()) + "." +
         std::to_string(je.epoch) + "-h" + std::to_string(host);
}

Result<std::string> StateDir::CreateScratch(const std::string& scratch_root,
                                            const JobAccount& owner, const JobEpoch& je,
                                            int32_t host) {
  if (Status s = CreateTraversable(scratch_root); !s.ok()) return std::unexpected(s);
  if (Status s = CreateOwned(scratch_root + "/" + owner.name, &owner); !s.ok()) {
    return std::unexpected(s);
  }
  const std::string dir = ScratchDir(scratch_root, owner.name, je, host);
  if (Status s = CreateOwned(dir, &owner); !s.ok()) return std::unexpected(s);
  return dir;
}

Status StateDir::CreateOwnedBelow(const std::string& parent, const std::string& dir,
                                  const JobAccount* owner) {
  if (Status s = CreateTraversable(parent); !s.ok()) return s;
  return CreateOwned(dir, owner);
}

void StateDir::RemoveAsOwner(const std::vector<std::string>& dirs, const JobAccount* owner) {
  if (dirs.empty()) return;
  if (!SwitchesUser(owner)) {
    std::error_code ec;
    for (const std::string& dir : dirs) std::filesystem::remove_all(dir, ec);
    return;
  }
  OwnerRemovals::Get().Remove(dirs, *owner);
}

int StateDir::SweepScratch(const std::string& scratch_root, int64_t before_unix_seconds,
                           const std::set<std::string>& live) {
  int removed = 0;
  std::error_code ec;
  for (const auto& account : std::filesystem::directory_iterator(scratch_root, ec)) {
    struct stat owner_st {};
    if (lstat(account.path().c_str(), &owner_st) != 0 || !S_ISDIR(owner_st.st_mode)) continue;
    std::error_code ec2;
    for (const auto& entry : std::filesystem::directory_iterator(account.path(), ec2)) {
      struct stat st {};
      if (!entry.path().filename().string().starts_with("job-") ||
          live.contains(entry.path().lexically_normal().string()) ||
          lstat(entry.path().c_str(), &st) != 0 ||
          st.st_mtime >= before_unix_seconds) {
        continue;
      }
      JobAccount owner;
      owner.name = account.path().filename().string();
      owner.uid = owner_st.st_uid;
      owner.gid = owner_st.st_gid;
      owner.groups = {owner_st.st_gid};
      RemoveAsOwner({entry.path().string()}, &owner);
      ++removed;
    }
  }
  return removed;
}

}  // namespace podsched::agent
