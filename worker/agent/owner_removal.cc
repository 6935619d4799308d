#include "worker/agent/owner_removal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "worker/agent/child.h"

namespace podsched::agent {
namespace {

// Empties the directory open at `dir` (which it closes), `depth` levels below the tree's root,
// on device `dev`. False when a directory deeper than `max_depth` was left.
bool EmptyDirectory(int dir, dev_t dev, int depth, int max_depth) {
  DIR* listing = fdopendir(dir);
  if (listing == nullptr) {
    close(dir);
    return true;
  }
  bool complete = true;
  // Each entry goes right after it was read (as `find -delete`): entries already read are not
  // affected by removing them.
  while (const dirent* entry = readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (fstatat(dirfd(listing), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      unlinkat(dirfd(listing), entry->d_name, 0);  // a symlink itself, never what it names
      continue;
    }
    if (st.st_dev != dev) continue;  // a mount on another file system: left, as rm does
    if (depth + 1 > max_depth) {
      complete = false;
      continue;
    }
    const int sub =
        openat(dirfd(listing), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;  // not ours to open (or replaced by a symlink since the fstatat)
    complete = EmptyDirectory(sub, dev, depth + 1, max_depth) && complete;
    unlinkat(dirfd(listing), entry->d_name, AT_REMOVEDIR);  // fails while something stayed
  }
  closedir(listing);
  return complete;
}

// The calling thread's file-system identity becomes `owner`'s: its fsuid, fsgid and
// supplementary groups (the raw system call: glibc's setgroups would change every thread of
// the agent). False when the kernel did not take all of it.
bool ActForFilesAs(const JobAccount& owner) {
  if (syscall(SYS_setgroups, owner.groups.size(), owner.groups.data()) != 0) return false;
  setfsgid(owner.gid);
  setfsuid(owner.uid);
  // An invalid id changes nothing and returns the current one.
  return setfsuid(static_cast<uid_t>(-1)) == static_cast<int>(owner.uid) &&
         setfsgid(static_cast<gid_t>(-1)) == static_cast<int>(owner.gid);
}

void ActForFilesAsRoot(const std::vector<gid_t>& groups) {
  setfsuid(0);
  setfsgid(0);
  syscall(SYS_setgroups, groups.size(), groups.data());
}

}  // namespace

bool RemoveTreeBounded(const std::string& path, int max_depth) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return true;  // nothing there (or not ours to see)
  if (!S_ISDIR(st.st_mode)) {
    unlink(path.c_str());
    return true;
  }
  const int dir = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return true;
  if (fstat(dir, &st) != 0) {  // what was opened, whatever stood at `path` before
    close(dir);
    return true;
  }
  const bool complete = EmptyDirectory(dir, st.st_dev, 0, max_depth);
  rmdir(path.c_str());  // fails when something stayed, or the parent is not the owner's
  return complete;
}

OwnerRemovals& OwnerRemovals::Get() {
  static auto* removals = new OwnerRemovals;  // never destroyed: its thread runs until exit
  return *removals;
}

OwnerRemovals::OwnerRemovals() : thread_([this] { Run(); }) {}

void OwnerRemovals::Remove(std::vector<std::string> dirs, const JobAccount& owner) {
  if (dirs.empty()) return;
  std::lock_guard lock(mu_);
  queue_.emplace_back(std::move(dirs), owner);
  wake_.notify_one();
}

void OwnerRemovals::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void OwnerRemovals::Run() {
  std::vector<gid_t> own_groups(static_cast<size_t>(std::max(getgroups(0, nullptr), 0)));
  own_groups.resize(static_cast<size_t>(
      std::max(getgroups(static_cast<int>(own_groups.size()), own_groups.data()), 0)));
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return !queue_.empty(); });
    auto [dirs, owner] = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    std::vector<std::string> left;  // for `rm`: too deep, or the identity was refused
    if (ActForFilesAs(owner)) {
      for (const std::string& dir : dirs) {
        if (!RemoveTreeBounded(dir)) left.push_back(dir);
      }
    } else {
      left = dirs;
    }
    ActForFilesAsRoot(own_groups);
    if (!left.empty()) {
      std::vector<std::string> argv = {"/bin/rm", "-rf", "--one-file-system", "--"};
      argv.insert(argv.end(), left.begin(), left.end());
      // Its complaints (each hH it cannot unlink from its root-owned parent) go nowhere: a
      // closed pipe would kill it at the first.
      (void)SpawnChild(argv, {"PATH=/usr/bin:/bin"}, &owner, "/", ChildOutput::kDiscard);
    }
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace podsched::agent
