#include "scheduler/daemon/data_layout.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "scheduler/daemon/checkpoint_prefix.h"

namespace podsched::daemon {
namespace {

namespace fs = std::filesystem;

constexpr mode_t kTraversable = 0711;
// Created by podsched itself before this layout existed (umask 077).
constexpr mode_t kEarlierPrivate = 0700;
constexpr const char* kPrivateFiles[] = {"podsched.db", "podsched.db-wal", "podsched.db-shm",
                                         "admin.token", "bus.key", "agents.keys"};

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// `dir` as a traversable directory: made 0711 when missing (the mode set explicitly, since the
// umask is 077), widened from the 0700 an earlier podsched gave it, else left as its admin set it.
Status EnsureTraversable(const fs::path& dir, DataLayoutReport& report) {
  if (::mkdir(dir.c_str(), kTraversable) == 0) {
    if (::chmod(dir.c_str(), kTraversable) != 0) {
      return Status(StatusCode::kUnavailable,
                    "cannot set the mode of " + dir.string() + ": " + std::strerror(errno));
    }
    return Status::Ok();
  }
  if (errno != EEXIST) {
    return Status(StatusCode::kUnavailable,
                  "cannot create " + dir.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    // A symlink to a directory is an admin's choice (a data dir on another disk): follow it.
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status(StatusCode::kFailedPrecondition, dir.string() + " is not a directory");
    }
  }
  const mode_t mode = st.st_mode & 07777;
  if (mode == kEarlierPrivate && st.st_uid == ::geteuid()) {
    if (::chmod(dir.c_str(), kTraversable) != 0) {
      return Status(StatusCode::kUnavailable,
                    "cannot set the mode of " + dir.string() + ": " + std::strerror(errno));
    }
    report.changed.push_back("widened " + dir.string() +
                             " from 0700 to 0711 (traversable, not listable), so that each "
                             "user's job reaches its own checkpoint prefix");
  } else if ((mode & S_IXOTH) == 0) {
    report.warnings.push_back(dir.string() + " is mode " + Octal(mode) +
                              ": other accounts cannot traverse it, so jobs running as their "
                              "users cannot reach their checkpoint prefixes below it (make it "
                              "0711; docs/deploy.md)");
  }
  return Status::Ok();
}

// `dir` as podsched's private directory (0700): made when missing, narrowed when podsched owns
// it (the root agent may have made it 0755 for the first log it stored), else a warning.
Status EnsurePrivate(const fs::path& dir, DataLayoutReport& report) {
  if (::mkdir(dir.c_str(), 0700) == 0) return Status::Ok();
  if (errno != EEXIST) {
    return Status(StatusCode::kUnavailable,
                  "cannot create " + dir.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status(StatusCode::kFailedPrecondition, dir.string() + " is not a directory");
  }
  const mode_t mode = st.st_mode & 07777;
  if ((mode & 077) == 0) return Status::Ok();
  if (st.st_uid == ::geteuid() && ::chmod(dir.c_str(), 0700) == 0) {
    report.changed.push_back("narrowed " + dir.string() + " from " + Octal(mode) +
                             " to 0700: it holds every user's job logs");
  } else {
    report.warnings.push_back(dir.string() + " is mode " + Octal(mode) +
                              ": other accounts may read every user's job logs (make it 0700 "
                              "and podsched's; docs/deploy.md)");
  }
  return Status::Ok();
}

// Every directory from `from` down to `to` (inclusive), `to` below `from`.
std::vector<fs::path> Chain(const fs::path& from, const fs::path& to) {
  std::vector<fs::path> out{from};
  fs::path at = from;
  for (const fs::path& part : to.lexically_relative(from)) {
    if (part == ".") continue;
    at /= part;
    out.push_back(at);
  }
  return out;
}

bool IsBelow(const fs::path& dir, const fs::path& root) {
  const fs::path rel = dir.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

Result<DataLayoutReport> PrepareDataLayout(const std::string& data_dir,
                                           const std::string& checkpoint_url,
                                           const std::string& log_url) {
  DataLayoutReport report;
  const fs::path root = fs::absolute(data_dir).lexically_normal();
  // Missing parents too: traversable, like the data dir itself.
  std::vector<fs::path> missing;
  for (fs::path p = root; !p.empty() && !fs::exists(p); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  for (const fs::path& p : missing) {
    if (Status s = EnsureTraversable(p, report); !s.ok()) return std::unexpected(s);
  }
  if (Status s = EnsureTraversable(root, report); !s.ok()) return std::unexpected(s);

  // The data dir can now be traversed: every private file in it must be podsched's alone.
  for (const char* name : kPrivateFiles) {
    const fs::path file = root / name;
    struct stat st {};
    if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if ((st.st_mode & 077) == 0) continue;
    if (st.st_uid == ::geteuid() && ::chmod(file.c_str(), 0600) == 0) {
      report.changed.push_back("narrowed " + file.string() + " from " + Octal(st.st_mode) +
                               " to 0600");
    } else {
      report.warnings.push_back(file.string() + " is mode " + Octal(st.st_mode) +
                                " and not podsched's to change: make it 0600");
    }
  }

  // Stored logs below the data dir: traversable on the way (objects/ is shared with the
  // checkpoints), the logs directory itself podsched's alone.
  const fs::path logs = fs::path(FileUrlDirectory(log_url)).lexically_normal();
  if (!logs.empty() && IsBelow(logs, root)) {
    for (const fs::path& dir : Chain(root, logs.parent_path())) {
      if (dir == root) continue;
      if (Status s = EnsureTraversable(dir, report); !s.ok()) return std::unexpected(s);
    }
    if (Status s = EnsurePrivate(logs, report); !s.ok()) return std::unexpected(s);
  }

  const std::string store = FileUrlDirectory(checkpoint_url);
  if (store.empty()) return report;  // s3://: nothing on this machine
  const fs::path users = (fs::path(store) / "users").lexically_normal();
  if (IsBelow(users, root)) {
    for (const fs::path& dir : Chain(root, users)) {
      if (dir == root) continue;
      if (Status s = EnsureTraversable(dir, report); !s.ok()) return std::unexpected(s);
    }
  }
  // Every ancestor must let other accounts through, else no user's job reaches its prefix
  // (a home directory of 0700 or 0750 above ./var is the common case).
  for (fs::path p = users.parent_path(); p != p.parent_path(); p = p.parent_path()) {
    if (IsBelow(p, root) || p == root) continue;  // handled above
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;  // made later by the agents (another machine)
    if ((st.st_mode & S_IXOTH) == 0) {
      report.warnings.push_back(p.string() + " is mode " + Octal(st.st_mode) +
                                ": other accounts cannot traverse it, so jobs running as their "
                                "users cannot reach " + users.string() +
                                " (fine when every job runs as podsched's own account; "
                                "else allow o+x, docs/deploy.md)");
      break;
    }
  }
  return report;
}

}  // namespace podsched::daemon
