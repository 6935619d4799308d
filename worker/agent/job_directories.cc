#include "worker/agent/job_directories.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>
#include <utility>

namespace podsched::agent {

JobDirectories::JobDirectories(StateDir& state, std::string scratch_root,
                               int64_t keep_failed_scratch_seconds)
    : state_(state),
      scratch_root_(scratch_root.empty() ? state.path() + "/scratch" : std::move(scratch_root)),
      keep_failed_scratch_seconds_(keep_failed_scratch_seconds) {}

std::map<int32_t, std::string> JobDirectories::Prepare(const JobEpoch& je,
                                                       const std::vector<int32_t>& hosts,
                                                       const JobAccount& account,
                                                       const std::string& checkpoint_root) {
  const int64_t id = je.job.value();
  if (Status s = state_.CreateJobDirs(je, hosts, &account); !s.ok()) {
    spdlog::warn("job {}: {}", id, s.ToString());
  }
  std::map<int32_t, std::string> scratch;
  for (int32_t h : hosts) {
    auto dir = state_.CreateScratch(scratch_root_, account, je, h);
    if (dir) {
      scratch[h] = *dir;
    } else {
      spdlog::warn("job {}: no scratch directory for host {}: {}", id, h,
                   dir.error().ToString());
    }
  }
  if (!checkpoint_root.empty()) {
    const std::filesystem::path prefix(checkpoint_root);
    if (Status s = StateDir::CreateOwnedBelow(prefix.parent_path().string(), prefix.string(),
                                              &account);
        !s.ok()) {
      spdlog::warn("job {}: checkpoint directory: {}", id, s.ToString());
    }
  }
  return scratch;
}

void JobDirectories::Remove(const JobEpoch& je, const JobAccount* account,
                            const std::map<int32_t, std::string>& scratch, bool failed) {
  std::vector<std::string> scratch_gone;
  for (const auto& [host, dir] : scratch) {
    if (failed && keep_failed_scratch_seconds_ > 0) {
      utimensat(AT_FDCWD, dir.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
      spdlog::info("job {} epoch {}: failed; scratch {} kept for {} s", je.job.value(), je.epoch,
                   dir, keep_failed_scratch_seconds_);
    } else {
      scratch_gone.push_back(dir);
    }
  }
  state_.RemoveJobDirs(je, account, scratch_gone);  // one removal for both
}

int JobDirectories::Sweep(const std::set<std::string>& live, int64_t now_unix_seconds) {
  std::set<std::string> normal;
  for (const std::string& dir : live) {
    std::filesystem::path p = std::filesystem::path(dir).lexically_normal();
    if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();  // "a/b/" is "a/b"
    normal.insert(p.string());
  }
  const int n =
      StateDir::SweepScratch(scratch_root_, now_unix_seconds - keep_failed_scratch_seconds_, normal);
  if (n > 0) spdlog::info("removed {} kept scratch directories of failed jobs", n);
  return n;
}

void JobDirectories::WritePreemptNotices(const JobEpoch& je, const std::vector<int32_t>& hosts,
                                         int64_t deadline_unix_seconds) {
  for (int32_t h : hosts) {
    Status s = state_.WriteAtomically(state_.PreemptFile(je, h),
                                      std::to_string(deadline_unix_seconds) + "\n");
    if (!s.ok()) spdlog::warn("job {}: {}", je.job.value(), s.ToString());
  }
}

}  // namespace podsched::agent
